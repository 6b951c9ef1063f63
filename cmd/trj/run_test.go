package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trjgo/trj/models/experiment"
)

// tinySASRun is a toy "trj run sas" of six chains, which the shard and
// stage tests split up and compare with the whole run.
var tinySASRun = []string{"run", "sas", "-quiet", "-seed", "4", "-steps", "300", "-chains", "6", "-train-draws", "300",
	"-eval-draws", "100", "-bridge-reps", "6", "-train-iters", "20", "-scatter-sources", "5"}

// tinySAS shrinks "trj run sas" with the hidden size flags.
var tinySAS = []string{"-steps", "400", "-chains", "2", "-train-draws", "300", "-eval-draws", "100",
	"-bridge-reps", "2", "-train-iters", "20", "-scatter-sources", "10"}

func TestRunSASEndToEnd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "figs")
	js := filepath.Join(dir, "sas.json")
	args := append([]string{"run", "sas", "-seed", "3", "-out", out, "-json", js}, tinySAS...)
	code, stdout, stderr := runArgs(args...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"truth", "0.7500", "affine", "rqma", "exact", "accept", "train s", "bridge s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"train rqma", "chains exact", "done", "wrote"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, f := range []string{"sas_running.png", "sas_running.svg", "sas_bridge.png", "sas_bridge.svg", "sas_proposals.png", "sas_proposals.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	m, _ := readJSONMap(t, js)
	props, _ := m["proposals"].(map[string]any)
	if m["experiment"] != "sas" || len(props) != 3 {
		t.Fatalf("json: experiment %v, proposals %v", m["experiment"], props)
	}
	exact := props["exact"].(map[string]any)
	if exact["acceptance_rate"] != 1.0 {
		t.Errorf("exact acceptance %v", exact["acceptance_rate"])
	}
}

func TestRunQuiet(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"run", "sas", "-quiet", "-out", dir}, tinySAS...)
	args = append(args, "-steps", "100", "-scatter-sources", "2", "-train-iters", "5") // later flags win
	code, stdout, stderr := runArgs(args...)
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "exact") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestRunFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run"}, exitUsage, "no experiment given"},
		{[]string{"run", "nope"}, exitUsage, `unknown experiment "nope"`},
		{[]string{"run", "sas", "-chains", "0"}, exitUsage, "need at least 2"},
		{[]string{"run", "sas", "-chains", "1"}, exitUsage, "need at least 2 replicate chains"},
		{[]string{"run", "sas", "-steps", "1"}, exitUsage, "sas runs chains of at least 4 steps"},
		{[]string{"run", "sas", "-bridge-reps", "1"}, exitUsage, "need at least 2 replicates"},
		{[]string{"run", "sas", "-steps", "-4"}, exitUsage, "-steps"},
		{[]string{"run", "sas", "extra"}, exitUsage, "unexpected argument"},
		{[]string{"run", "sas", "-bogus"}, exitUsage, "not defined"},
		{[]string{"run", "robustvs", "-chains", "2"}, exitUsage, "do not apply to robustvs"},
		{[]string{"run", "sas", "-data", "x.csv"}, exitUsage, "does not apply to sas"},
		{[]string{"run", "sas", "-quiet", "-out", "/dev/null/x"}, exitFail, "trj run sas"},
	} {
		args := tc.args
		if tc.code == exitFail {
			args = append(append([]string(nil), args...), tinySAS...)
		}
		code, _, stderr := runArgs(args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("trj %q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	code, _, stderr := runArgs("run", "-h")
	if code != exitOK || !strings.Contains(stderr, "-paper") || !strings.Contains(stderr, "sas") || strings.Contains(stderr, "train-draws") {
		t.Errorf("run -h: exit %d, usage %q (hidden test flags must not show)", code, stderr)
	}
}

// TestRunSASShardsMerge splits a toy "trj run sas" into three shards (two
// chains each; every shard repeats the bridge): merged, they give the
// whole run's JSON apart from wall times; a shard of another run is
// refused.
func TestRunSASShardsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("several whole runs and shards; the full suite (without -short) runs them")
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	tiny := tinySASRun
	if code, _, stderr := runArgs(append(tiny, "-out", p("whole"), "-json", p("whole.json"))...); code != exitOK {
		t.Fatalf("whole run: code %d, %s", code, stderr)
	}
	for i := 1; i <= 3; i++ {
		sh := fmt.Sprintf("%d/3", i)
		if code, _, stderr := runArgs(append(tiny, "-shard", sh, "-o", p(fmt.Sprintf("s%d.json", i)))...); code != exitOK {
			t.Fatalf("shard %s: code %d, %s", sh, code, stderr)
		}
	}
	code, stdout, stderr := runArgs("merge", "-quiet", "-out", p("merged"), "-json", p("merged.json"), p("s3.json"), p("s1.json"), p("s2.json"))
	if code != exitOK {
		t.Fatalf("merge: code %d, %s", code, stderr)
	}
	if !strings.Contains(stdout, "rqma") || !strings.Contains(stdout, "over 6 chains") {
		t.Errorf("merged table:\n%s", stdout)
	}
	if !reflect.DeepEqual(withoutSeconds(t, p("merged.json")), withoutSeconds(t, p("whole.json"))) {
		a, _ := os.ReadFile(p("merged.json"))
		b, _ := os.ReadFile(p("whole.json"))
		t.Errorf("merged shards differ from the whole run apart from wall times:\nmerged %s\nwhole %s", a, b)
	}
	for _, f := range []string{"sas_running.png", "sas_bridge.svg", "sas_proposals.png"} {
		if st, err := os.Stat(filepath.Join(p("merged"), f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	other := append(slices.Clone(tiny), "-shard", "3/3", "-o", p("other.json"))
	other[4] = "5" // -seed
	if code, _, stderr := runArgs(other...); code != exitOK {
		t.Fatalf("shard of seed 5: code %d, %s", code, stderr)
	}
	code, _, stderr = runArgs("merge", "-quiet", "-out", p("bad"), p("s1.json"), p("s2.json"), p("other.json"))
	if code != exitFail || !strings.Contains(stderr, "seed 4 vs 5") {
		t.Errorf("merge with a shard of seed 5: code %d, %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "robustvs", "-shard", "1/2"}, "applies to sas"},
		{[]string{"run", "sas", "-shard", "1/2", "-json", "x.json"}, "-json applies to a whole run"},
		{[]string{"run", "sas", "-o", "x.json"}, "needs -shard"},
	} {
		if code, _, stderr := runArgs(c.args...); code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: code %d, %s", c.args, code, stderr)
		}
	}
}

// TestRunSASShardDefaultFile runs a shard of "trj run sas" without -o in
// a fresh directory, as the first task of a Slurm array does: it creates
// trj-out/sas and writes its partial file there.
func TestRunSASShardDefaultFile(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, stderr := runArgs("run", "sas", "-quiet", "-steps", "20", "-chains", "2", "-train-draws", "100",
		"-eval-draws", "50", "-bridge-reps", "2", "-train-iters", "5", "-scatter-sources", "2", "-shard", "2/2")
	if code != exitOK {
		t.Fatalf("shard 2/2 without -o: code %d, %s", code, stderr)
	}
	if _, err := readPartial(filepath.Join("trj-out", "sas", "shard_2_of_2.json")); err != nil {
		t.Error(err)
	}
}

// fakeExperiments holds one experiment, "fake", that cancels ctx after
// finishing its first stage and returns that stage's result with ctx's
// error, as an experiment interrupted by SIGINT does.
func fakeExperiments(called *bool, cancel context.CancelFunc) map[string]experimentFunc {
	return map[string]experimentFunc{"sas": func(ctx context.Context, o runOptions) (*experiment.Result, []string, error) {
		*called = true
		res := experiment.NewResult("sas", o.seed, []string{"M1", "M2"})
		res.Add(experiment.ProposalExact, &experiment.ProposalResult{
			ModelProbabilities: map[string]experiment.Float{"M1": 0.25, "M2": 0.75},
			Stderr:             map[string]experiment.Float{"M1": 0.01, "M2": 0.01},
			AcceptanceRate:     1,
		})
		if cancel == nil {
			return res, nil, nil
		}
		cancel()
		return res, nil, ctx.Err()
	}}
}

// TestRunInterruptedWritesPartialJSON checks that an interrupted "trj
// run" prints and writes the stages that finished, the JSON marked
// incomplete, and exits with exitInterrupted.
func TestRunInterruptedWritesPartialJSON(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "r.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var called bool
	var out, errb bytes.Buffer
	code := runExperiment(ctx, []string{"sas", "-quiet", "-out", dir, "-json", js}, &out, &errb, fakeExperiments(&called, cancel))
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") || !strings.Contains(out.String(), "exact") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	m, b := readJSONMap(t, js)
	props, _ := m["proposals"].(map[string]any)
	if m["incomplete"] != true || m["stopped"] != "interrupted" || m["experiment"] != "sas" || len(props) != 1 {
		t.Errorf("partial JSON: %s", b)
	}
	// The real experiment, cancelled before it starts, still leaves a JSON
	// file marked incomplete.
	var out2, errb2 bytes.Buffer
	code = runExperiment(ctx, append([]string{"sas", "-quiet", "-out", dir, "-json", js}, tinySAS...), &out2, &errb2, experiments)
	b, _ = os.ReadFile(js)
	if code != exitInterrupted || !bytes.Contains(b, []byte(`"incomplete": true`)) {
		t.Errorf("cancelled sas: exit %d, stderr %q, JSON %s", code, errb2.String(), b)
	}
}

// TestRunChecksOutputsFirst gives unwritable -json and -out paths: the
// experiment must not run.
func TestRunChecksOutputsFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"sas", "-quiet", "-out", dir, "-json", filepath.Join(file, "r.json")},
		{"sas", "-quiet", "-out", filepath.Join(file, "sub")},
	} {
		var called bool
		var out, errb bytes.Buffer
		code := runExperiment(context.Background(), args, &out, &errb, fakeExperiments(&called, nil))
		if code != exitFail || called {
			t.Errorf("%v: exit %d, experiment ran: %v, stderr %q", args, code, called, errb.String())
		}
	}
	var called bool
	var out, errb bytes.Buffer
	if code := runExperiment(context.Background(), []string{"sas", "-quiet", "-out", dir}, &out, &errb, fakeExperiments(&called, nil)); code != exitOK || !called {
		t.Errorf("writable outputs: exit %d, stderr %q", code, errb.String())
	}
}

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
	tiny := tinySASRun
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

// TestRunSASStageShardOfOne: "-shard 1/1" (a batch array of one task) is a
// shard like any other: the pilot stage runs every model's pilots and the
// fit stage runs once, instead of being refused for an -o that was not
// given; an -o that was given is still refused by name.
func TestRunSASStageShardOfOne(t *testing.T) {
	dir := t.TempDir()
	stages := filepath.Join(dir, "stages")
	for _, stage := range []string{"pilot", "fit"} {
		args := append(slices.Clone(tinySASRun), "-stages", stages, "-stage", stage, "-shard", "1/1")
		if code, _, stderr := runArgs(args...); code != exitOK {
			t.Fatalf("-stage %s -shard 1/1: code %d, %s", stage, code, stderr)
		}
	}
	for _, f := range []string{"exact/pilots_1-2.trjstage", "rqma/pilots_1-2.trjstage", "rqma/fit.trjstage"} {
		if _, err := os.Stat(filepath.Join(stages, f)); err != nil {
			t.Error(err)
		}
	}
	args := []string{"run", "sas", "-stage", "pilot", "-shard", "1/1", "-o", filepath.Join(dir, "x.json")}
	if code, _, stderr := runArgs(args...); code != exitUsage || !strings.Contains(stderr, "-o is the partial result of a chains shard") {
		t.Errorf("%v: code %d, %s", args, code, stderr)
	}
}
