package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trjgo/trj/shard"
)

// factorData writes 143 made-up observations of six variables drawn from a
// two-factor model: a small data file of known structure for -data.
func factorData(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 0))
	load := [6][2]float64{{0.9, 0}, {0.8, 0.3}, {0.7, -0.4}, {0.2, 0.8}, {0.1, 0.7}, {0.5, 0.5}}
	var b strings.Builder
	b.WriteString("x1,x2,x3,x4,x5,x6\n")
	for range 143 {
		f1, f2 := rng.NormFloat64(), rng.NormFloat64()
		for j, l := range load {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%.4f", l[0]*f1+l[1]*f2+0.4*rng.NormFloat64())
		}
		b.WriteByte('\n')
	}
	return writeTestFile(t, t.TempDir(), "rates.csv", b.String())
}

// withoutSeconds returns the JSON file's value with every "seconds" entry
// (wall times) removed.
func withoutSeconds(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "seconds" {
					delete(v, k)
				} else {
					v[k] = strip(x)
				}
			}
		case []any:
			for i, x := range v {
				v[i] = strip(x)
			}
		}
		return v
	}
	return strip(v)
}

func runStudyArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, testBackend())
	return code, out.String(), errb.String()
}

// TestStudyShardsMerge runs a toy factor study whole and as two shards
// (the second taking its index from JOB_COMPLETION_INDEX): the merged
// result equals the whole run's apart from wall times, and trj merge
// refuses a shard of another seed, a missing or repeated shard and an
// edited file.
func TestStudyShardsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("several whole runs and shards; the full suite (without -short) runs them")
	}
	dir := t.TempDir()
	tiny := []string{"study", "factor", "-data", factorData(t), "-n", "60", "-pairs", "2", "-reps", "2",
		"-train-iters", "5", "-rejuvenate", "2", "-quiet"}
	p := func(name string) string { return filepath.Join(dir, name) }
	whole := append(tiny, "-o", p("whole.json"), "-out", p("whole"), "-json", p("whole-merged.json"))
	code, stdout, stderr := runStudyArgs(whole...)
	if code != exitOK {
		t.Fatalf("whole study: code %d, %s", code, stderr)
	}
	for _, want := range []string{"2 training/evaluation pairs × 2 estimates, N = 60", "rqma", "lopes-west", "between-pair sd"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := runStudyArgs(append(tiny, "-shard", "1/2", "-o", p("s1.json"))...); code != exitOK {
		t.Fatalf("shard 1/2: code %d, %s", code, stderr)
	}
	t.Setenv(shard.IndexedJobEnv, "1")
	if code, _, stderr := runStudyArgs(append(tiny, "-shard", "2", "-o", p("s2.json"))...); code != exitOK {
		t.Fatalf("shard 2 of 2 from %s: code %d, %s", shard.IndexedJobEnv, code, stderr)
	}
	code, merged, stderr := runStudyArgs("merge", "-quiet", "-out", p("merged"), "-json", p("merged.json"), p("s2.json"), p("s1.json"))
	if code != exitOK {
		t.Fatalf("merge: code %d, %s", code, stderr)
	}
	if !reflect.DeepEqual(withoutSeconds(t, p("merged.json")), withoutSeconds(t, p("whole-merged.json"))) {
		t.Error("merged shards differ from the whole run apart from wall times")
	}
	for _, f := range []string{"factor_study_bridge.png", "factor_study_pairs.svg"} {
		if st, err := os.Stat(filepath.Join(p("merged"), f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(merged, "pair") {
		t.Errorf("merged table:\n%s", merged)
	}

	if code, _, stderr := runStudyArgs(append(tiny, "-shard", "2", "-seed", "2", "-o", p("other.json"))...); code != exitOK {
		t.Fatalf("shard of seed 2: code %d, %s", code, stderr)
	}
	b, err := os.ReadFile(p("s1.json"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"pilot_draws": 60`, `"pilot_draws": 61`, 1)
	if edited == string(b) {
		t.Fatal("no pilot_draws setting to edit")
	}
	if err := os.WriteFile(p("edited.json"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"s1.json", "other.json"}, "settings differ: seed 1 vs 2"},
		{[]string{"s1.json"}, "items 2 of 2 are in none"},
		{[]string{"s1.json", "s2.json", "whole.json"}, "is in both"},
		{[]string{"edited.json", "s2.json"}, "was edited"},
	} {
		args := []string{"merge", "-quiet", "-out", p("bad")}
		for _, f := range c.files {
			args = append(args, p(f))
		}
		code, _, stderr := runStudyArgs(args...)
		if code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("merge %v: code %d, stderr %q; want a failure mentioning %q", c.files, code, stderr, c.want)
		}
	}
}

func TestStudyFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no study given"},
		{[]string{"robustvs"}, "unknown study"},
		{[]string{"factor", "-n", "10"}, "at least 50"},
		{[]string{"factor", "-pairs", "3", "-shard", "1/4"}, "at most 3 shards"},
		{[]string{"factor", "-shard", "1/2", "-json", "x.json"}, "partial file"},
		{[]string{"factor", "extra"}, "unexpected argument"},
	} {
		code, _, stderr := runStudyArgs(append([]string{"study"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, stderr %q; want usage error with %q", c.args, code, stderr, c.want)
		}
	}
	if code, _, stderr := runStudyArgs("merge"); code != exitUsage || !strings.Contains(stderr, "no partial") {
		t.Errorf("merge without files: code %d, %s", code, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format": "other"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runStudyArgs("merge", bad); code != exitFail || !strings.Contains(stderr, "format") {
		t.Errorf("merge of a foreign file: code %d, %s", code, stderr)
	}
}
