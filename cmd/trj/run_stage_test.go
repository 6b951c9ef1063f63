package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRunSASStaged runs a toy "trj run sas" as a staged run — the pilots
// in two shards (one model each), the fit once, the chains in three
// shards — and merges the chains: the whole run's JSON apart from wall
// times. Chains of other settings than the stages' files are refused.
func TestRunSASStaged(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run and a staged one; the full suite (without -short) runs them")
	}
	skipInRacePass(t, "sequential processes compared for equality; the race detector has nothing to check")
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	tiny := []string{"run", "sas", "-quiet", "-seed", "4", "-steps", "300", "-chains", "6", "-train-draws", "300",
		"-eval-draws", "100", "-bridge-reps", "6", "-train-iters", "20", "-scatter-sources", "5"}
	if code, _, stderr := runArgs(append(tiny, "-out", p("whole"), "-json", p("whole.json"))...); code != exitOK {
		t.Fatalf("whole run: code %d, %s", code, stderr)
	}
	staged := append(slices.Clone(tiny), "-stages", p("stages"))
	run := func(args ...string) {
		t.Helper()
		if code, _, stderr := runArgs(append(slices.Clone(staged), args...)...); code != exitOK {
			t.Fatalf("%v: code %d, %s", args, code, stderr)
		}
	}
	run("-stage", "pilot", "-shard", "2/2")
	run("-stage", "pilot", "-shard", "1/2")
	run("-stage", "fit")
	for _, f := range []string{"exact/pilots_1.trjstage", "rqma/pilots_2.trjstage", "rqma/fit.trjstage"} {
		if _, err := os.Stat(filepath.Join(p("stages"), f)); err != nil {
			t.Error(err)
		}
	}
	for i := 1; i <= 3; i++ {
		run("-stage", "chains", "-shard", fmt.Sprintf("%d/3", i), "-o", p(fmt.Sprintf("s%d.json", i)))
	}
	code, _, stderr := runArgs("merge", "-quiet", "-out", p("merged"), "-json", p("merged.json"), p("s3.json"), p("s1.json"), p("s2.json"))
	if code != exitOK {
		t.Fatalf("merge: code %d, %s", code, stderr)
	}
	if !reflect.DeepEqual(withoutSeconds(t, p("merged.json")), withoutSeconds(t, p("whole.json"))) {
		a, _ := os.ReadFile(p("merged.json"))
		b, _ := os.ReadFile(p("whole.json"))
		t.Errorf("merged staged shards differ from the whole run apart from wall times:\nmerged %s\nwhole %s", a, b)
	}
	other := append(slices.Clone(staged), "-stage", "chains", "-shard", "1/3", "-o", p("other.json"))
	other[4] = "5" // -seed
	if code, _, stderr := runArgs(other...); code != exitFail || !strings.Contains(stderr, "is stale") {
		t.Errorf("chains of seed 5 on the files of seed 4: code %d, %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "robustvs", "-stage", "pilot"}, "-stage applies to sas"},
		{[]string{"run", "sas", "-stage", "pilots"}, "want pilot, fit or chains"},
		{[]string{"run", "sas", "-stage", "fit", "-shard", "1/2"}, "-stage fit runs once"},
		{[]string{"run", "sas", "-stage", "pilot", "-json", "x.json"}, "-json applies to a whole run or the chains stage"},
		{[]string{"run", "sas", "-stage", "pilot", "-shard", "1/2", "-o", "x.json"}, "the pilot stage writes its files into -stages"},
		{[]string{"run", "sas", "-stages", "x"}, "give -stage"},
	} {
		if code, _, stderr := runArgs(c.args...); code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, %s", c.args, code, stderr)
		}
	}
	if code, _, stderr := runArgs("run", "sas", "-quiet", "-stage", "pilot", "-shard", "3/3", "-stages", p("x")); code != exitFail || !strings.Contains(stderr, "2 models cannot be split 3 ways") {
		t.Errorf("pilot stage in 3 shards of 2 models: code %d, %s", code, stderr)
	}
}
