package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trjgo/trj/ppl/draws"
	"github.com/trjgo/trj/shard"
)

// eightSchools writes the eight-schools data, so the test runs without
// the shared data folder.
func eightSchools(t *testing.T) string {
	t.Helper()
	data := `{"J": 8, "y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]}`
	return writeTestFile(t, t.TempDir(), "eight_schools.json", data)
}

// dataRows returns the lines of a CSV file that are not comments: the
// column header and the draws.
func dataRows(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	return strings.Join(rows, "\n")
}

// TestSampleShardsMatchWholeRun runs "trj sample -chains 4" once and as
// four shards (one of them taking its index from the environment as a
// Kubernetes Indexed Job does): the shards write the same files with the
// same draws, and "trj summary" prints the same table over either set.
func TestSampleShardsMatchWholeRun(t *testing.T) {
	data := eightSchools(t)
	common := []string{"sample", "-model", "eight_schools_noncentered", "-data", data,
		"-chains", "4", "-warmup", "100", "-draws", "60", "-seed", "11", "-quiet"}
	whole := filepath.Join(t.TempDir(), "es.csv")
	if code, _, stderr := runDefault(append(common, "-o", whole)...); code != exitOK {
		t.Fatalf("whole run: code %d, %s", code, stderr)
	}
	part := filepath.Join(t.TempDir(), "es.csv")
	for _, sh := range []string{"1/4", "2/4", "4/4"} {
		if code, _, stderr := runDefault(append(common, "-o", part, "-shard", sh)...); code != exitOK {
			t.Fatalf("shard %s: code %d, %s", sh, code, stderr)
		}
	}
	t.Setenv(shard.IndexedJobEnv, "2")
	if code, _, stderr := runDefault(append(common, "-o", part, "-shard", "4")...); code != exitOK {
		t.Fatalf("shard 4 from %s=2: code %d, %s", shard.IndexedJobEnv, code, stderr)
	}
	wholeFiles, partFiles := draws.ChainFileNames(whole, 4), draws.ChainFileNames(part, 4)
	for c := range 4 {
		if dataRows(t, wholeFiles[c]) != dataRows(t, partFiles[c]) {
			t.Errorf("chain %d: the shard's rows differ from the whole run's", c+1)
		}
		_, cfg, err := draws.ReadFiles(partFiles[c])
		if err != nil {
			t.Fatal(err)
		}
		var id, sh string
		for _, s := range cfg {
			switch s.Key {
			case "chain_id":
				id = s.Value
			case "shard":
				sh = s.Value
			}
		}
		if want := string(rune('1' + c)); id != want || sh != want+"/4" {
			t.Errorf("chain %d: chain_id %q, shard %q", c+1, id, sh)
		}
	}
	summary := func(files []string) string {
		var out, errb bytes.Buffer
		if code := runSummary(files, &out, &errb); code != exitOK {
			t.Fatalf("summary: code %d, %s", code, errb.String())
		}
		return out.String()
	}
	if a, b := summary(wholeFiles), summary(partFiles); a != b {
		t.Errorf("summary tables differ:\nwhole run\n%s\nshards\n%s", a, b)
	}
}

func TestSampleShardFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-shard", "1/2"}, "needs -o"},
		{[]string{"-shard", "1/5", "-o", "x.csv"}, "at most 4 shards"},
		{[]string{"-shard", "1/2", "-o", "x.csv", "-sampler", "smc"}, "cannot be split"},
		{[]string{"-shard", "3/2", "-o", "x.csv"}, "1 ≤ i ≤ n"},
	} {
		code, _, stderr := runArgs(append([]string{"sample", "-model", "normal2"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, stderr %q; want usage error with %q", c.args, code, stderr, c.want)
		}
	}
}

// TestSummaryRefusesMixedShards: "trj summary" over shard files refuses
// files of two runs and a chain given twice, and notes absent chains.
func TestSummaryRefusesMixedShards(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for i := 1; i <= 3; i++ {
		if code, _, stderr := runArgs("sample", "-model", "normal2", "-chains", "3", "-quiet", "-o", a, "-shard", fmt.Sprintf("%d/3", i)); code != exitOK {
			t.Fatalf("shard %d: %s", i, stderr)
		}
	}
	if code, _, stderr := runArgs("sample", "-model", "normal2", "-chains", "3", "-quiet", "-o", b, "-shard", "2/3", "-seed", "2"); code != exitOK {
		t.Fatal(stderr)
	}
	fa, fb := draws.ChainFileNames(a, 3), draws.ChainFileNames(b, 3)
	summary := func(files ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runSummary(files, &out, &errb)
		return code, errb.String()
	}
	if code, stderr := summary(fa[0], fb[1], fa[2]); code != exitFail || !strings.Contains(stderr, `seed "1" vs "2"`) {
		t.Errorf("mixed seeds: code %d, %s", code, stderr)
	}
	if code, stderr := summary(fa[0], fa[0]); code != exitFail || !strings.Contains(stderr, "chain 1 is in both") {
		t.Errorf("repeated chain: code %d, %s", code, stderr)
	}
	if code, stderr := summary(fa[0], fa[2]); code != exitOK || !strings.Contains(stderr, "2 of the run's 3 chains (missing: 2)") {
		t.Errorf("two of three chains: code %d, %s", code, stderr)
	}
	if code, stderr := summary(fa...); code != exitOK || stderr != "" {
		t.Errorf("all chains: code %d, %s", code, stderr)
	}
}
