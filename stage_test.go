package trj_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
	"gonum.org/v1/gonum/mat"
)

// stagedSettings are smallSettings with chains that never extend, so that
// shards merge into the whole run.
func stagedSettings(seed uint64) *trj.Settings {
	s := smallSettings(seed)
	s.Chains.MaxSteps = s.Chains.Steps
	return s
}

// untimedJSON is a result's JSON without its stage timings.
func untimedJSON(t *testing.T, r *trj.Result) string {
	t.Helper()
	c := *r
	c.Timings = nil
	var buf bytes.Buffer
	if err := c.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// viaJSON hands a result over as separate processes would.
func viaJSON(t *testing.T, r *trj.Result) *trj.Result {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := trj.ReadResult(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// mergedShards runs the chains {0, 2}, {1} and {3} as three shards with
// run, hands each result over through its JSON and merges them; it returns
// the merged result and the parts.
func mergedShards(t *testing.T, run func(chains []int) (*trj.Result, error)) (merged *trj.Result, parts []*trj.Result) {
	t.Helper()
	for _, chains := range [][]int{{0, 2}, {1}, {3}} {
		p, err := run(chains)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, viaJSON(t, p))
	}
	merged, err := trj.Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return merged, parts
}

// TestStagedRunIdentical runs the eight-model space whole and in stages —
// pilots in three blocks of models, one fit, chains in three shards and
// merged, and chains all at once — and requires the same result apart
// from the stage timings.
func TestStagedRunIdentical(t *testing.T) {
	skipInRacePass(t, "compares a sequence of stages with a whole run; the chains' concurrency is TestRunExact's")
	ctx := context.Background()
	space := mustSubsetSpace(t, 40)
	whole, err := trj.Run(ctx, space, stagedSettings(3))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, models := range [][]int{{0, 1, 2}, {5, 3, 4}, {6, 7}} {
		if _, _, err := trj.RunStage(ctx, space, stagedSettings(3), trj.StagePilots, dir, models); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"pilots_1-3.trjstage", "pilots_4-6.trjstage", "pilots_7-8.trjstage"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	fit, fitted, err := trj.RunStage(ctx, space, stagedSettings(3), trj.StageFit, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fitted == nil || fitted.Proposals == nil || fit.Bridge == nil {
		t.Fatal("the fit stage returned no proposals or no bridge estimate")
	}
	if !sameBits(t, fit.Bridge, whole.Bridge) {
		t.Errorf("fit stage's bridge estimate %v, whole run's %v", fit.Bridge.Normalized, whole.Bridge.Normalized)
	}
	merged, _ := mergedShards(t, func(chains []int) (*trj.Result, error) {
		p, _, err := trj.RunStage(ctx, space, stagedSettings(3), trj.StageChains, dir, chains)
		return p, err
	})
	all, _, err := trj.RunStage(ctx, space, stagedSettings(3), trj.StageChains, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := untimedJSON(t, whole)
	for name, r := range map[string]*trj.Result{"merged chain shards": merged, "all chains in one stage": all} {
		if got := untimedJSON(t, r); got != want {
			t.Errorf("%s differ from the whole run:\n%s\nwhole run:\n%s", name, firstDiff(got, want), firstDiff(want, got))
		}
		var stages []string
		for _, st := range r.Timings {
			stages = append(stages, st.Stage)
		}
		if got := strings.Join(stages, " "); got != "pilot transport bridge chains" {
			t.Errorf("%s: stage timings of %s", name, got)
		}
	}
	if !sameBits(t, all.Bridge, whole.Bridge) {
		t.Error("the chains stage's bridge estimate differs from the whole run's")
	}
}

// sameBits reports whether a and b hold the same numbers bit for bit
// (NaN included, which reflect.DeepEqual calls unequal), every field
// included, those JSON leaves out too.
func sameBits(t *testing.T, a, b any) bool {
	t.Helper()
	var ba, bb bytes.Buffer
	if err := gob.NewEncoder(&ba).Encode(a); err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(&bb).Encode(b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ba.Bytes(), bb.Bytes())
}

// firstDiff returns a's text around its first difference from b.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[max(i-200, 0):min(i+200, len(a))]
}

// tinySettings make a stage of the eight-model space take a fraction of a
// second.
func tinySettings(seed uint64) *trj.Settings {
	return &trj.Settings{
		Seed:      seed,
		Pilot:     trj.PilotSettings{Method: trj.NUTSPilots{Chains: 2, Warmup: 100, Draws: 200}},
		Bridge:    trj.BridgeSettings{Groups: 4},
		Proposals: &trj.AffineTransports{},
		Chains:    trj.ChainSettings{Chains: 2, Steps: 50, MaxSteps: 50},
	}
}

// copyFile copies a stage file between folders.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStageRefusals checks that stage files of different runs, missing or
// repeated parts, edited files and stale files are refused, each with an
// error naming the cause.
func TestStageRefusals(t *testing.T) {
	skipInRacePass(t, "sequential checks of files; the stages' concurrency is the pilots' and chains' own, tested elsewhere")
	ctx := context.Background()
	space := mustSubsetSpace(t, 40)
	stage := func(s *trj.Settings, st trj.Stage, dir string, part []int) error {
		_, _, err := trj.RunStage(ctx, space, s, st, dir, part)
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	want := func(what string, err error, substr ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, s := range substr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q lacks %q", what, err, s)
			}
		}
	}
	// A run of seed 1 in two blocks of models, and one of seed 2.
	run1, run2 := t.TempDir(), t.TempDir()
	must(stage(tinySettings(1), trj.StagePilots, run1, []int{0, 1, 2, 3}))
	must(stage(tinySettings(1), trj.StagePilots, run1, []int{4, 5, 6, 7}))
	must(stage(tinySettings(2), trj.StagePilots, run2, []int{0, 1, 2, 3}))
	must(stage(tinySettings(2), trj.StagePilots, run2, []int{4, 5, 6, 7}))
	a, b := filepath.Join(run1, "pilots_1-4.trjstage"), filepath.Join(run1, "pilots_5-8.trjstage")

	dir := t.TempDir()
	copyFile(t, a, filepath.Join(dir, "pilots_1-4.trjstage"))
	want("fit with a block of models missing", stage(tinySettings(1), trj.StageFit, dir, nil),
		`no pilot file in`, `"001" (model 5)`, `"111" (model 8)`, "run the pilot stage for them")
	want("chains without a fit", stage(tinySettings(1), trj.StageChains, run1, nil), "no fit.trjstage", "run the fit stage first")
	want("fit without pilots", stage(tinySettings(1), trj.StageFit, t.TempDir(), nil), "no pilot files", "run the pilot stage first")

	copyFile(t, filepath.Join(run2, "pilots_5-8.trjstage"), filepath.Join(dir, "pilots_5-8.trjstage"))
	want("pilot files of two runs", stage(tinySettings(1), trj.StageFit, dir, nil),
		"pilots_1-4.trjstage and pilots_5-8.trjstage are pilot files of different runs")

	copyFile(t, b, filepath.Join(dir, "pilots_5-8.trjstage"))
	must(stage(tinySettings(1), trj.StagePilots, dir, []int{4, 5}))
	want("a model's pilot in two files", stage(tinySettings(1), trj.StageFit, dir, nil),
		`the pilot of model "001" is in both pilots_5-6.trjstage and pilots_5-8.trjstage`, "repeated")
	must(os.Remove(filepath.Join(dir, "pilots_5-6.trjstage")))

	want("settings changed since the pilots", stage(tinySettings(2), trj.StageFit, dir, nil),
		"pilots_1-4.trjstage is stale", "run the pilot stage again")
	other := tinySettings(1)
	other.Chains.Steps = 60
	want("chain settings changed since the pilots", stage(other, trj.StageFit, dir, nil), "is stale")

	must(stage(tinySettings(1), trj.StageFit, dir, nil))
	must(stage(tinySettings(1), trj.StageChains, dir, []int{1}))
	// The fit of another run, of the same pilots' space.
	must(stage(tinySettings(2), trj.StageFit, run2, nil))
	saved, err := os.ReadFile(filepath.Join(dir, "fit.trjstage"))
	must(err)
	copyFile(t, filepath.Join(run2, "fit.trjstage"), filepath.Join(dir, "fit.trjstage"))
	want("the fit of another run", stage(tinySettings(1), trj.StageChains, dir, nil), "fit.trjstage is stale", "run the fit stage again")
	must(os.WriteFile(filepath.Join(dir, "fit.trjstage"), saved, 0o644))

	// A pilot stage run again after the fit.
	must(stage(tinySettings(1), trj.StagePilots, dir, []int{0, 1, 2, 3}))
	want("pilots rewritten after the fit", stage(tinySettings(1), trj.StageChains, dir, nil),
		"fit.trjstage is stale", "pilots_1-4.trjstage", "run the fit stage again")
	must(stage(tinySettings(1), trj.StageFit, dir, nil))
	must(stage(tinySettings(1), trj.StageChains, dir, nil))

	// Edited files: one byte of the payload, of the header, and a
	// truncated file.
	for name, edit := range map[string]func([]byte) []byte{
		"payload": func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"header": func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"labels":["000"`), []byte(`"labels":["00X"`), 1)
		},
		"truncated": func(b []byte) []byte { return b[:len(b)-10] },
	} {
		for _, file := range []string{"pilots_5-8.trjstage", "fit.trjstage"} {
			path := filepath.Join(dir, file)
			orig, err := os.ReadFile(path)
			must(err)
			must(os.WriteFile(path, edit(bytes.Clone(orig)), 0o644))
			want(name+" of "+file+" edited", stage(tinySettings(1), trj.StageChains, dir, nil), file, "fails its checksum", "edited")
			must(os.WriteFile(path, orig, 0o644))
		}
	}
	must(stage(tinySettings(1), trj.StageChains, dir, nil))

	// A file of another space.
	twoDir := t.TempDir()
	m0, _ := space.Model(0)
	m1, _ := space.Model(1)
	two, err := ppl.NewSpace([]ppl.Model{m0, m1}, ppl.WithLabels("a", "b"))
	must(err)
	copyFile(t, a, filepath.Join(twoDir, "pilots_1-4.trjstage"))
	_, _, err = trj.RunStage(ctx, two, tinySettings(1), trj.StageFit, twoDir, nil)
	want("a pilot file of another space", err, "pilots_1-4.trjstage is a file of a different run", `"a" (dim`)

	// Bad parts.
	want("a model outside the space", stage(tinySettings(1), trj.StagePilots, t.TempDir(), []int{8}), "model 8 outside 0 … 7")
	want("a model twice", stage(tinySettings(1), trj.StagePilots, t.TempDir(), []int{1, 1}), "model 1 given twice")
	want("a part of the fit", stage(tinySettings(1), trj.StageFit, dir, []int{1}), "part must be nil")
	if _, err := trj.ParseStage("pilots"); err == nil {
		t.Error(`ParseStage("pilots"): no error`)
	}
	var head map[string]any
	b8, err := os.ReadFile(b)
	must(err)
	lines := bytes.SplitN(b8, []byte("\n"), 3)
	if string(lines[0]) != "trj stage v1" || json.Unmarshal(lines[1], &head) != nil || head["kind"] != "pilots" {
		t.Errorf("a pilot file starts %q", b8[:min(len(b8), 120)])
	}
}

// TestStagedFamilies runs small staged runs of the eight-model space with
// SMC pilots (evidence, adapted NUTS metrics, refreshed draws), a
// conditional flow (stored in the fit file), and independence proposals
// and independent auxiliaries (fitted again by the chains stage): each
// identical to the whole run apart from timings.
func TestStagedFamilies(t *testing.T) {
	if testing.Short() {
		t.Skip("four whole runs and their stages; the full suite (without -short) runs them")
	}
	skipInRacePass(t, "compares sequences of stages with whole runs; the chains' concurrency is TestRunExact's")
	ctx := context.Background()
	space := mustSubsetSpace(t, 40)
	train := flows.ConditionalTrainOptions()
	train.Iterations = 20
	for name, set := range map[string]func(*trj.Settings){
		"SMC pilots": func(s *trj.Settings) {
			s.Pilot = trj.PilotSettings{Method: trj.SMCPilots{Runs: 4, Refresh: 2, SMC: &kernels.SMCSettings{Particles: 100}}}
		},
		"conditional flow": func(s *trj.Settings) { s.Proposals = &trj.Conditional{Train: &train} },
		"independence":     func(s *trj.Settings) { s.Proposals = &trj.Independence{} },
		"independent aux":  func(s *trj.Settings) { s.Proposals = &trj.IndependentAux{} },
	} {
		settings := func() *trj.Settings {
			s := tinySettings(7)
			s.Chains.Steps, s.Chains.MaxSteps, s.Proposals = 300, 300, nil
			set(s)
			return s
		}
		whole, err := trj.Run(ctx, space, settings())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %s, %s pilots, evidence %v, bridge error %q", name, whole.Algorithm, whole.Pilot, whole.Evidence != nil, whole.BridgeError)
		dir := t.TempDir()
		for _, models := range [][]int{{0, 1, 2, 3, 4}, {5, 6, 7}} {
			if _, _, err := trj.RunStage(ctx, space, settings(), trj.StagePilots, dir, models); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if _, _, err := trj.RunStage(ctx, space, settings(), trj.StageFit, dir, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		staged, _, err := trj.RunStage(ctx, space, settings(), trj.StageChains, dir, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := untimedJSON(t, staged), untimedJSON(t, whole); got != want {
			t.Errorf("%s: the staged run differs from the whole run:\n%s\nwhole run:\n%s", name, firstDiff(got, want), firstDiff(want, got))
		}
		if !sameBits(t, staged.Bridge, whole.Bridge) {
			t.Errorf("%s: bridge estimates differ", name)
		}
	}
}

// TestRunBadSettingsUpFront: settings the later stages (chains, shards,
// transports, start) cannot run are refused before the first pilot, with an
// error naming the setting. The pilots are long (10⁶ draws per chain), and
// the first progress report cancels the run, so a check that came after
// them fails the test at once instead of passing late.
func TestRunBadSettingsUpFront(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	K := space.NumModels()
	// A set of two one-dimensional transports: the space has 8 models.
	var set bytes.Buffer
	var entries []flows.Labeled
	for _, l := range []string{"a", "b"} {
		a, err := flows.NewAffine([]float64{0}, mat.NewDiagDense(1, []float64{1}))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, flows.Labeled{Model: l, Dim: 1, Flow: a})
	}
	if err := flows.SaveSet(&set, entries); err != nil {
		t.Fatal(err)
	}
	start := func(k, n int, v float64) func(int, *rand.Rand) (int, []float64, error) {
		return func(int, *rand.Rand) (int, []float64, error) {
			theta := make([]float64, n)
			for i := range theta {
				theta[i] = v
			}
			return k, theta, nil
		}
	}
	dim0 := space.ModelDim(0)
	user := &trj.UserTransports{New: func(int) (kernels.Transport, error) { return nil, errors.New("not called") }}
	outDir := t.TempDir()
	for _, c := range []struct {
		name   string
		edit   func(s *trj.Settings)
		want   string
		tooBig bool // errors.Is(err, kernels.ErrTooLarge)
	}{
		{name: "shard out of range", edit: func(s *trj.Settings) { s.Chains.Shard = []int{0, 4} }, want: "Chains.Shard holds chain 4"},
		{name: "shard out of range, output", edit: func(s *trj.Settings) { s.Chains.Shard = []int{6}; s.OutputDir = outDir }, want: "Chains.Shard holds chain 6"},
		{name: "shard negative", edit: func(s *trj.Settings) { s.Chains.Shard = []int{-1} }, want: "chain -1"},
		{name: "shard repeated", edit: func(s *trj.Settings) { s.Chains.Shard = []int{1, 1} }, want: "chain 1 twice"},
		{name: "shard empty", edit: func(s *trj.Settings) { s.Chains.Shard = []int{} }, want: "Chains.Shard is empty"},
		{name: "chains negative", edit: func(s *trj.Settings) { s.Chains.Chains = -3 }, want: "-3 chains (Chains.Chains)"},
		{name: "chains 1e9", edit: func(s *trj.Settings) { s.Chains.Chains = 1e9 }, want: "Chains.Chains = 1000000000"},
		{name: "steps 1e9", edit: func(s *trj.Settings) { s.Chains.Steps = 1e9 }, want: "MaxSteps", tooBig: true},
		{name: "max steps 1e12", edit: func(s *trj.Settings) { s.Chains.MaxSteps = 1e12 }, want: "MaxSteps", tooBig: true},
		{name: "steps MaxInt", edit: func(s *trj.Settings) { s.Chains.Steps = math.MaxInt }, want: "overflow"},
		{name: "warm-up MaxInt", edit: func(s *trj.Settings) { s.Chains.Warmup = math.MaxInt }, want: "Chains.Warmup"},
		{name: "pilot warm-up MaxInt", edit: func(s *trj.Settings) { s.Pilot.Method = trj.NUTSPilots{Warmup: math.MaxInt} }, want: "NUTSPilots.Warmup"},
		{name: "pilot draws 1e12", edit: func(s *trj.Settings) { s.Pilot.Method = trj.NUTSPilots{Draws: 1e12} }, want: "the pilots", tooBig: true},
		{name: "pilot chains 1e9", edit: func(s *trj.Settings) { s.Pilot.Method = trj.NUTSPilots{Chains: 1e9} }, want: "NUTSPilots.Chains"},
		{name: "bridge proposals negative", edit: func(s *trj.Settings) { s.Bridge.Proposals = -1 }, want: "bridge proposals"},
		{name: "RW scale NaN", edit: func(s *trj.Settings) { s.Chains.Within = trj.RandomWalkMove{Scale: math.NaN()} }, want: "scale NaN (RandomWalkMove.Scale)"},
		{name: "jump floor +Inf", edit: func(s *trj.Settings) { s.Chains.JumpFloor = math.Inf(1) }, want: "jump floor"},
		{name: "fixed jump NaN", edit: func(s *trj.Settings) {
			s.Chains.Jump = make([]float64, K)
			for k := range K {
				s.Chains.Jump[k] = 1 / float64(K)
			}
			s.Chains.Jump[3] = math.NaN()
		}, want: "probability 3 is NaN"},
		{name: "AutoESS NaN", edit: func(s *trj.Settings) { s.Proposals = &trj.AutoTransports{AutoESS: math.NaN()} }, want: "Settings.Proposals.AutoESS is NaN"},
		{name: "SMC ESS fraction Inf", edit: func(s *trj.Settings) {
			s.Pilot.Method = trj.SMCPilots{SMC: &kernels.SMCSettings{ESSFraction: math.Inf(1)}}
		}, want: "Settings.Pilot.Method.SMC.ESSFraction is +Inf"},
		{name: "aux scale Inf", edit: func(s *trj.Settings) {
			s.Proposals = &trj.IndependentAux{Aux: kernels.NormalAux{SD: math.Inf(1)}}
		}, want: "Settings.Proposals.Aux.SD is +Inf"},
		{name: "learning rate NaN", edit: func(s *trj.Settings) {
			s.Proposals = &trj.RQMATransports{Train: &flows.TrainOptions{LearningRate: math.NaN()}}
		}, want: "Settings.Proposals.Train.LearningRate is NaN"},
		{name: "permutations", edit: func(s *trj.Settings) { s.Proposals = &trj.AffineTransports{Permutations: [][][]int{nil}} }, want: "Permutations"},
		{name: "loaded set of other models", edit: func(s *trj.Settings) {
			s.Proposals = &trj.LoadedTransports{From: bytes.NewReader(set.Bytes())}
		}, want: "2 transports, the space has 8 models"},
		{name: "loaded garbage", edit: func(s *trj.Settings) { s.Proposals = &trj.LoadedTransports{From: strings.NewReader("no set")} }, want: "loading transports"},
		{name: "loaded empty", edit: func(s *trj.Settings) { s.Proposals = &trj.LoadedTransports{From: strings.NewReader("")} }, want: "From is empty"},
		{name: "start: model out of range", edit: func(s *trj.Settings) { s.Chains.Start = start(K, 1, 0) }, want: "gives model 8"},
		{name: "start: wrong length", edit: func(s *trj.Settings) { s.Chains.Start = start(0, dim0+1, 0) }, want: "θ of length"},
		{name: "start: NaN", edit: func(s *trj.Settings) { s.Chains.Start = start(0, dim0, math.NaN()) }, want: "start where it is finite"},
		{name: "start: error", edit: func(s *trj.Settings) {
			s.Chains.Start = func(int, *rand.Rand) (int, []float64, error) { return 0, nil, errors.New("no start") }
		}, want: "no start"},
		{name: "shard with an unnamed function", edit: func(s *trj.Settings) { s.Proposals = user; s.Chains.Shard = []int{0} }, want: "Settings.Tag"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		s := &trj.Settings{
			Pilot:    trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 10, Draws: 1_000_000}},
			Chains:   trj.ChainSettings{Chains: 4},
			Progress: func(pipeline.Progress) { cancel() },
		}
		c.edit(s)
		res, err := trj.Run(ctx, space, s)
		cancel()
		t.Logf("%s: %v", c.name, err)
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		case c.tooBig && !errors.Is(err, kernels.ErrTooLarge):
			t.Errorf("%s: err = %v, want kernels.ErrTooLarge", c.name, err)
		case res != nil:
			t.Errorf("%s: a result with stages %v", c.name, res.Timings)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(outDir, "*")); len(files) > 0 {
		t.Errorf("refused runs left files: %v", files)
	}
	if _, err := os.Stat(outDir); err != nil {
		t.Error(err)
	}
}
