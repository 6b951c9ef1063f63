package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// selectShard runs shard k/n of a small "trj select" run of data with
// the extra flags and returns its -json file.
func selectShard(t *testing.T, dir, data, name string, k, n int, extra ...string) string {
	t.Helper()
	js := filepath.Join(dir, name+".json")
	args := append([]string{"select", "-quiet", "-data", data, "-y", "resp", "-chains", "2", "-warmup", "20", "-steps", "40",
		"-shard", fmt.Sprintf("%d/%d", k, n), "-json", js}, extra...)
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb, backend{}); code != exitOK {
		t.Fatalf("%s: exit %d: %s", name, code, errb.String())
	}
	return js
}

// TestSelectMergeOtherRuns: "trj select -merge" refuses shards of
// different runs (data bytes at one path, warm-up, chains, seed), naming
// what differs, and a missing shard; the same data under two spellings of
// its path merge.
func TestSelectMergeOtherRuns(t *testing.T) {
	dir := t.TempDir()
	data := selectCSV(t, dir, "gaussian")
	one := selectShard(t, dir, data, "one", 1, 2)
	two := selectShard(t, dir, data, "two", 2, 2)
	dotted := selectShard(t, dir, dir+string(filepath.Separator)+"."+string(filepath.Separator)+"gaussian.csv", "dotted", 2, 2)
	warm := selectShard(t, dir, data, "warm", 2, 2, "-warmup", "30")
	seed := selectShard(t, dir, data, "seed", 2, 2, "-seed", "2")
	chains := selectShard(t, dir, data, "chains", 2, 3, "-chains", "3")
	orig, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	// Other data at the same path.
	if err := os.WriteFile(data, bytes.Replace(orig, []byte("\n"), []byte("\n0,0,0,0\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	otherData := selectShard(t, dir, data, "otherdata", 2, 2)
	merge := func(parts ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"select", "-merge"}, parts...), &out, &errb, backend{})
		return code, errb.String()
	}
	if code, stderr := merge(one, dotted); code != exitOK {
		t.Errorf("the same data under another path: exit %d, %s", code, stderr)
	}
	for _, c := range []struct {
		name  string
		parts []string
		want  string
	}{
		{"other data at the same path", []string{one, otherData}, "the data differ"},
		{"other warm-up", []string{one, warm}, "Warmup = 20 vs 30"},
		{"other seed", []string{one, seed}, "Seed = 1 vs 2"},
		{"other chains", []string{one, chains}, "Chains = 2 vs 3"},
		{"missing shard", []string{one}, "missing chain(s) 2"},
		{"repeated shard", []string{one, two, two}, "chain 2 is in both"},
	} {
		if code, stderr := merge(c.parts...); code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.name, code, stderr, c.want)
		}
	}
}

// TestSelectStaleFolder: rerunning "trj select -o DIR" with fewer chains
// is refused before any work, naming the old run's files, and "trj
// summary" refuses files of two runs, naming them.
func TestSelectStaleFolder(t *testing.T) {
	dir := t.TempDir()
	data := selectCSV(t, dir, "gaussian")
	sel := func(out string, extra ...string) (int, string) {
		var o, errb bytes.Buffer
		args := append([]string{"select", "-quiet", "-data", data, "-y", "resp", "-warmup", "10", "-steps", "30", "-o", out}, extra...)
		code := run(context.Background(), args, &o, &errb, backend{})
		return code, errb.String()
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code, stderr := sel(a, "-chains", "3"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, stderr := sel(a, "-chains", "2"); code != exitFail || !strings.Contains(stderr, "select-2.csv") || !strings.Contains(stderr, "another run") {
		t.Errorf("a folder of a 3-chain run for a 2-chain run: exit %d, stderr %q", code, stderr)
	}
	if code, stderr := sel(a, "-chains", "3"); code != exitOK {
		t.Errorf("the same run again: exit %d, %s", code, stderr)
	}
	if code, stderr := sel(b, "-chains", "3", "-seed", "2"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out, errb bytes.Buffer
	files := []string{filepath.Join(a, "select-0.csv"), filepath.Join(a, "select-1.csv"), filepath.Join(b, "select-2.csv")}
	code := run(context.Background(), append([]string{"summary"}, files...), &out, &errb, backend{})
	if code != exitFail || !strings.Contains(errb.String(), "different runs") || !strings.Contains(errb.String(), files[2]) {
		t.Errorf("summary of two runs: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), append([]string{"summary"}, files[:2]...), &out, &errb, backend{})
	if code != exitOK || !strings.Contains(errb.String(), "missing: 3") {
		t.Errorf("summary of two of a run's chains: exit %d, stderr %q", code, errb.String())
	}
}
