package experiment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/sas"
)

// TestFloatJSON: a value that is not finite is written as pipeline.Float
// writes it (trj's one JSON convention) and reads back the same; null, as
// files written before held such values, reads as NaN.
func TestFloatJSON(t *testing.T) {
	in := map[string]experiment.Float{"a": 0.25, "b": experiment.Float(math.NaN()), "c": experiment.Float(math.Inf(1))}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"a":0.25,"b":"NaN","c":"+Inf"}`; got != want {
		t.Fatalf("marshal: %s, want %s", got, want)
	}
	var out map[string]experiment.Float
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out["a"] != 0.25 || !math.IsNaN(float64(out["b"])) || !math.IsInf(float64(out["c"]), 1) {
		t.Errorf("round trip: %v", out)
	}
	if err := json.Unmarshal([]byte(`{"a":null}`), &out); err != nil || !math.IsNaN(float64(out["a"])) {
		t.Errorf("null read as %v (%v), want NaN", out["a"], err)
	}
}

func TestStreamIsReproducibleAndDistinct(t *testing.T) {
	first := func(r *rand.Rand) [3]uint64 { return [3]uint64{r.Uint64(), r.Uint64(), r.Uint64()} }
	a, b := first(experiment.Stream(1, "chains", 0)), first(experiment.Stream(1, "chains", 0))
	if a != b {
		t.Error("same seed, stage and index give different streams")
	}
	seen := map[[3]uint64]string{}
	for _, seed := range []uint64{1, 2} {
		for _, stage := range []string{"chains", "bridge"} {
			for i := range 4 {
				v := first(experiment.Stream(seed, stage, i))
				name := strings.Join([]string{stage, string(rune('0' + seed)), string(rune('0' + i))}, "/")
				if prev, ok := seen[v]; ok {
					t.Errorf("streams %s and %s coincide", prev, name)
				}
				seen[v] = name
			}
		}
	}
}

func TestParallel(t *testing.T) {
	var calls atomic.Int64
	got := make([]int, 50)
	err := experiment.Parallel(context.Background(), len(got), func(_ context.Context, i int) error {
		calls.Add(1)
		got[i] = i * i
		return nil
	})
	if err != nil || calls.Load() != 50 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
	for i, v := range got {
		if v != i*i {
			t.Fatalf("index %d: %d", i, v)
		}
	}
	boom := errors.New("boom")
	err = experiment.Parallel(context.Background(), 20, func(_ context.Context, i int) error {
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := experiment.Parallel(ctx, 5, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if err := experiment.Parallel(context.Background(), 0, nil); err != nil {
		t.Errorf("n = 0: %v", err)
	}
}

// bernoulliStep is a chain whose model is an independent draw from
// (1−p, p) at every step, each step a jump proposal accepted when the model
// changes: the exact-transport TRJ chain with j_k = (1−p, p).
func bernoulliStep(p float64) (experiment.StepFunc, *int) {
	k := 0
	return func(rng *rand.Rand) (int, kernels.RJInfo) {
		next := 0
		if rng.Float64() < p {
			next = 1
		}
		info := kernels.RJInfo{}
		if next != k {
			info = kernels.RJInfo{Jumped: true, JumpAccepted: true, Jump: kernels.JumpRecord{From: k, To: next, AcceptProb: 1}}
		}
		k = next
		return k, info
	}, &k
}

func TestRunChainAndRunningEstimate(t *testing.T) {
	const p, steps = 0.75, 20000
	step, _ := bernoulliStep(p)
	var progressed atomic.Int64
	run, err := experiment.RunChain(context.Background(), rand.New(rand.NewPCG(1, 2)), steps, 2, step, true,
		func(n int) { progressed.Add(int64(n)) })
	if err != nil {
		t.Fatal(err)
	}
	if progressed.Load() != steps {
		t.Errorf("progress reported %d steps, want %d", progressed.Load(), steps)
	}
	f := run.Frequencies()
	running := run.Running(1)
	if len(running) != steps || running[steps-1] != f[1] || math.Abs(f[0]+f[1]-1) > 1e-12 {
		t.Fatalf("running estimate ends at %v, frequencies %v", running[steps-1], f)
	}
	// Independent Bernoulli steps: the MCSE is √(p(1−p)/n).
	if mcse := math.Sqrt(p * (1 - p) / steps); math.Abs(f[1]-p) > 4*mcse {
		t.Errorf("π̂(1) = %v, want %v ± 4·%v", f[1], p, mcse)
	}
	// The indicator series is independent, so the ESS-based MCSE must
	// agree with the binomial one to within the ESS estimate's noise.
	if m, err := run.MCSE(1); err != nil || math.Abs(m/math.Sqrt(p*(1-p)/steps)-1) > 0.1 {
		t.Errorf("MCSE %v (%v), binomial %v", m, err, math.Sqrt(p*(1-p)/steps))
	}
	if run.AcceptanceRate() != 1 || run.Jumps != len(run.Records) || run.Jumps == 0 {
		t.Errorf("acceptance %v with %d jumps and %d records", run.AcceptanceRate(), run.Jumps, len(run.Records))
	}
	if _, err := experiment.RunChain(context.Background(), rand.New(rand.NewPCG(1, 2)), 0, 2, step, false, nil); err == nil {
		t.Error("zero steps accepted")
	}
	bad := func(*rand.Rand) (int, kernels.RJInfo) { return 5, kernels.RJInfo{} }
	if _, err := experiment.RunChain(context.Background(), rand.New(rand.NewPCG(1, 2)), 10, 2, bad, false, nil); err == nil {
		t.Error("out-of-range model accepted")
	}
}

func TestMeanStderr(t *testing.T) {
	m, se := experiment.MeanStderr([]float64{1, 2, 3, math.NaN()})
	if m != 2 || math.Abs(se-1/math.Sqrt(3)) > 1e-15 {
		t.Errorf("mean %v, se %v", m, se)
	}
	if m, se := experiment.MeanStderr([]float64{4}); m != 4 || !math.IsNaN(se) {
		t.Errorf("one value: mean %v, se %v", m, se)
	}
	if m, _ := experiment.MeanStderr(nil); !math.IsNaN(m) {
		t.Errorf("no values: mean %v", m)
	}
}

func TestSummarizeChains(t *testing.T) {
	var runs []*experiment.ChainRun
	var f1 []float64
	for c := range 4 {
		step, _ := bernoulliStep(0.75)
		r, err := experiment.RunChain(context.Background(), experiment.Stream(3, "chains", c), 1000, 2, step, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
		f1 = append(f1, r.Frequencies()[1])
	}
	p, err := experiment.SummarizeChains(runs, []string{"1", "2"})
	if err != nil {
		t.Fatal(err)
	}
	m, se := experiment.MeanStderr(f1)
	if float64(p.ModelProbabilities["2"]) != m || float64(p.Stderr["2"]) != se || p.AcceptanceRate != 1 || len(p.Chains) != 4 {
		t.Errorf("summary %+v, want mean %v se %v", p, m, se)
	}
	if c := p.Chains[0]; len(c.RunningSteps) != experiment.RunningPoints || c.RunningSteps[len(c.RunningSteps)-1] != 1000 ||
		c.Running["2"][len(c.Running["2"])-1] != c.ModelProbabilities["2"] {
		t.Errorf("thinned running estimate: steps %v…, last %v", c.RunningSteps[:3], c.Running["2"][len(c.Running["2"])-1])
	}
	if _, err := experiment.SummarizeChains(runs, []string{"1", "2", "3"}); err == nil {
		t.Error("label mismatch accepted")
	}
}

// exactBridge returns bridge replicates with the exact SAS transports,
// whose acceptance probabilities are all one.
func exactBridge(t *testing.T, reps, evalDraws int) []kernels.BridgeEstimate {
	t.Helper()
	target := sas.Paper()
	jump, _ := kernels.ProportionalJumps([]float64{0.25, 0.75})
	ests, err := experiment.BridgeReplicates(context.Background(), 7, "bridge", reps, jump, []float64{0.25, 0.75},
		func(_ context.Context, _ int, rng *rand.Rand) ([]kernels.JumpRecord, error) {
			tg := target.Clone()
			var tr []kernels.Transport
			for _, x := range tg.Transports() {
				tr = append(tr, x)
			}
			k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: tr, Jump: jump})
			if err != nil {
				return nil, err
			}
			draws, err := tg.ExactDraws(rng, evalDraws)
			if err != nil {
				return nil, err
			}
			return kernels.EvaluationJumps(rng, k, draws)
		})
	if err != nil {
		t.Fatal(err)
	}
	return ests
}

func TestBridgeReplicatesExact(t *testing.T) {
	ests := exactBridge(t, 4, 50)
	s := experiment.SummarizeBridge(ests, []string{"1", "2"})
	if s.Replicates != 4 || s.Failed != 0 || len(s.RawReplicates) != 4 {
		t.Fatalf("summary %+v", s)
	}
	// Exact transports with j = π make every α one, so every replicate is
	// exactly right.
	for k, want := range []float64{0.25, 0.75} {
		l := []string{"1", "2"}[k]
		if math.Abs(float64(s.Normalized[l])-want) > 1e-9 || math.Abs(float64(s.Raw[l])-want) > 1e-9 || !(float64(s.SD[l]) < 1e-9) {
			t.Errorf("model %s: normalized %v raw %v sd %v, want %v", l, s.Normalized[l], s.Raw[l], s.SD[l], want)
		}
	}
	if v := s.Values(1); len(v) != 4 || math.Abs(v[0]-0.75) > 1e-9 {
		t.Errorf("values %v", v)
	}
	if math.Abs(float64(s.MeanAcceptance)-1) > 1e-9 {
		t.Errorf("mean acceptance %v", s.MeanAcceptance)
	}
	// A replicate without jumps in one direction stays NaN but is kept.
	failed := experiment.SummarizeBridge([]kernels.BridgeEstimate{{Raw: []float64{math.NaN(), math.NaN()}, Normalized: []float64{math.NaN(), math.NaN()}}}, []string{"1", "2"})
	if failed.Failed != 1 || !math.IsNaN(float64(failed.Normalized["1"])) {
		t.Errorf("failed replicate: %+v", failed)
	}
}

func sampleResult() *experiment.Result {
	r := experiment.NewResult("sas", 1, []string{"1", "2"})
	r.Truth = map[string]experiment.Float{"1": 0.25, "2": 0.75}
	r.Settings["steps"] = 10
	r.Seconds["pilot"] = 0.5
	for _, name := range []string{experiment.ProposalRQMA, experiment.ProposalExact} {
		r.Add(name, &experiment.ProposalResult{
			ModelProbabilities: map[string]experiment.Float{"1": 0.25, "2": 0.75},
			Stderr:             map[string]experiment.Float{"1": 0.01, "2": experiment.Float(math.NaN())},
			AcceptanceRate:     0.9,
			Seconds:            map[string]experiment.Float{experiment.StageTrain: 1.5, experiment.StageChains: 0.25},
		})
	}
	return r
}

func keys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// TestResultJSONShape checks the layout the issue specifies, key by key.
func TestResultJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleResult().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(buf.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(top), []string{"experiment", "models", "proposals", "seconds", "seed", "settings", "truth"}; !slices.Equal(got, want) {
		t.Errorf("top-level keys %v, want %v", got, want)
	}
	if top["experiment"] != "sas" {
		t.Errorf("experiment %v", top["experiment"])
	}
	props := top["proposals"].(map[string]any)
	if got := keys(props); !slices.Equal(got, []string{"exact", "rqma"}) {
		t.Errorf("proposals %v", got)
	}
	p := props["rqma"].(map[string]any)
	if got, want := keys(p), []string{"acceptance_rate", "model_probabilities", "seconds", "stderr"}; !slices.Equal(got, want) {
		t.Errorf("proposal keys %v, want %v", got, want)
	}
	mp := p["model_probabilities"].(map[string]any)
	if got := keys(mp); !slices.Equal(got, []string{"1", "2"}) || mp["2"] != 0.75 {
		t.Errorf("model_probabilities %v", mp)
	}
	if se := p["stderr"].(map[string]any); se["1"] != 0.01 || se["2"] != "NaN" {
		t.Errorf("stderr %v (NaN must be \"NaN\")", se)
	}
	if got := keys(p["seconds"].(map[string]any)); !slices.Equal(got, []string{"chains", "train"}) {
		t.Errorf("seconds %v", got)
	}
	if p["acceptance_rate"] != 0.9 {
		t.Errorf("acceptance_rate %v", p["acceptance_rate"])
	}
	// And it reads back into a Result.
	var back experiment.Result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Proposals["exact"].ModelProbabilities["1"] != 0.25 {
		t.Errorf("read back: %v, %+v", err, back.Proposals["exact"])
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	r := sampleResult()
	r.Proposals["exact"].Bridge = experiment.SummarizeBridge(exactBridge(t, 3, 20), []string{"1", "2"})
	r.Proposals["exact"].Bridge.EvalDraws = 20
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], "π(2)") || !strings.Contains(lines[1], "truth") ||
		!strings.Contains(lines[2], "rqma") || !strings.Contains(lines[3], "exact") ||
		!strings.Contains(out, "0.7500 ± n/a") || strings.Contains(out, "NaN") || !strings.Contains(out, "0.2500 ± 0.0100") || !strings.Contains(lines[0], "train s") ||
		!strings.Contains(out, "pilot 0.50 s") || !strings.Contains(out, "3 replicates of 20 evaluation draws") ||
		!strings.Contains(out, "0.7500 ± 0.0000") {
		t.Errorf("table:\n%s", out)
	}
}

func TestProgress(t *testing.T) {
	var quiet *experiment.Progress
	b := quiet.Stage("x", 10) // nil: no output, no panic
	b.Add(3)
	b.Done()
	experiment.NewProgress(nil).Stage("y", 1).Done()

	var buf bytes.Buffer
	p := experiment.NewProgress(&buf)
	bar := p.Stage("train", 1000)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 250 {
				bar.Add(1)
			}
		})
	}
	wg.Wait()
	bar.Done()
	bar.Add(5) // after Done: ignored
	out := buf.String()
	// Not a terminal: one line for the finished stage, no redraws.
	if !strings.HasPrefix(out, "train") || !strings.Contains(out, "done") || strings.Count(out, "\n") != 1 || strings.Contains(out, "\r") {
		t.Errorf("progress output %q", out)
	}
}

func TestTimer(t *testing.T) {
	var tm experiment.Timer
	boom := errors.New("boom")
	if err := tm.Time("a", func() error { return boom }); err != boom {
		t.Errorf("error %v", err)
	}
	_ = tm.Time("a", func() error { return nil })
	s := tm.Seconds()
	if len(s) != 1 || !(s["a"] >= 0) {
		t.Errorf("seconds %v", s)
	}
}

// TestNilFunctions checks that nil callbacks are errors, not panics (a
// panic inside Parallel's goroutines could not even be recovered).
func TestNilFunctions(t *testing.T) {
	ctx := context.Background()
	if err := experiment.Parallel(ctx, 2, nil); err == nil {
		t.Error("Parallel: nil function accepted")
	}
	if _, err := experiment.BridgeReplicates(ctx, 1, "bridge", 2, kernels.UniformJumps(2), nil, nil); err == nil {
		t.Error("BridgeReplicates: nil records function accepted")
	}
	rng := rand.New(rand.NewPCG(1, 0))
	if _, err := experiment.RunChain(ctx, rng, 5, 2, nil, false, nil); err == nil {
		t.Error("RunChain: nil step function accepted")
	}
}
