package trj_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
	"gonum.org/v1/gonum/mat"
)

// smallSettings keep a run of the eight-model space to about a second.
func smallSettings(seed uint64) *trj.Settings {
	return &trj.Settings{
		Seed:   seed,
		Pilot:  trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 400, Draws: 1000}},
		Chains: trj.ChainSettings{Chains: 4, Steps: 4000},
	}
}

func TestRunExact(t *testing.T) {
	space, exact, err := subsetSpace(40)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact: %.4f", exact)
	res, err := trj.Run(context.Background(), space, smallSettings(1))
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, res, exact)
}

// checkExact checks every model's chain and bridge estimates within 4
// reported standard errors of the exact probabilities.
func checkExact(t *testing.T, res *trj.Result, exact []float64) {
	t.Helper()
	t.Logf("\n%s", res)
	for k, p := range exact {
		c := res.Chain[k]
		if !c.Mixed || math.Abs(c.P-p) > 4*c.MCSE {
			t.Errorf("model %s: chains %.4f ± %.4f, exact %.4f", res.Labels[k], c.P, c.MCSE, p)
		}
		b, se := res.Bridge.Normalized[k], res.Bridge.NormalizedSE[k]
		if math.Abs(b-p) > 4*se {
			t.Errorf("model %s: bridge %.4f ± %.4f, exact %.4f", res.Labels[k], b, se, p)
		}
	}
}

func TestShardsMerge(t *testing.T) {
	skipInRacePass(t, "a whole run and its shards one after another, compared for equality; the chains' concurrency is TestRunExact's")
	space := mustSubsetSpace(t, 40)
	whole, err := trj.Run(context.Background(), space, smallSettings(3))
	if err != nil {
		t.Fatal(err)
	}
	merged, parts := mergedShards(t, func(shard []int) (*trj.Result, error) {
		s := smallSettings(3)
		s.Chains.Shard = shard
		return trj.Run(context.Background(), space, s)
	})
	for k := range whole.Chain {
		if whole.Chain[k] != merged.Chain[k] {
			t.Errorf("model %d: whole run %+v, merged shards %+v", k, whole.Chain[k], merged.Chain[k])
		}
	}
	other, err := trj.Run(context.Background(), space, func() *trj.Settings { s := smallSettings(4); s.Chains.Shard = []int{0}; return s }())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trj.Merge(parts[1], other); err == nil || !strings.Contains(err.Error(), "different run") || !strings.Contains(err.Error(), "Seed = 3 vs 4") {
		t.Errorf("merging shards of different seeds: err = %v", err)
	}
	if _, err := trj.Merge(parts[0], parts[1]); err == nil || !strings.Contains(err.Error(), "missing chain(s) 4") {
		t.Errorf("merging without the last shard: err = %v", err)
	}
	if _, err := trj.Merge(parts[0], parts[0]); err == nil {
		t.Error("merging a shard with itself: no error")
	}
}

func TestSavedTransports(t *testing.T) {
	skipInRacePass(t, "a sequential save and reload checked for equality; the chains' concurrency is TestRunExact's")
	space := mustSubsetSpace(t, 40)
	s := smallSettings(5)
	train := flows.DefaultTrainOptions()
	train.Iterations = 30
	s.Proposals = &trj.RQMATransports{Train: &train}
	first, _, buf := runSaved(t, space, s)
	saved := buf.Bytes()
	s2 := smallSettings(5)
	s2.Proposals = &trj.LoadedTransports{From: bytes.NewReader(saved)}
	again, err := trj.Run(context.Background(), space, s2)
	if err != nil {
		t.Fatal(err)
	}
	sameBridge(t, first, again, "fitted transports", "the saved ones")
	// A set saved for other models is refused, naming the model.
	set, err := flows.LoadSet(bytes.NewReader(saved), nil)
	if err != nil {
		t.Fatal(err)
	}
	set[1].Model = "xyz"
	var bad bytes.Buffer
	if err := flows.SaveSet(&bad, set); err != nil {
		t.Fatal(err)
	}
	s3 := smallSettings(5)
	s3.Proposals = &trj.LoadedTransports{From: &bad}
	if _, err := trj.Run(context.Background(), space, s3); err == nil || !strings.Contains(err.Error(), `"xyz"`) {
		t.Errorf("loading a set for other models: err = %v", err)
	}
	s3.Proposals = &trj.LoadedTransports{From: strings.NewReader("trj transport set v9\n[]\n")}
	if _, err := trj.Run(context.Background(), space, s3); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("loading a set of another version: err = %v", err)
	}
}

// TestRunSMCPilots uses SMC pilots on ppl models with no hand-written prior
// sampler: the evidence probabilities, the bridge and the chains against the
// exact answer.
func TestRunSMCPilots(t *testing.T) {
	skipInRacePass(t, "statistical; the SMC pilots' concurrency is covered by the kernels package's SMC tests")
	space, exact, err := subsetSpace(40)
	if err != nil {
		t.Fatal(err)
	}
	s := smallSettings(2)
	s.Pilot.Method = trj.SMCPilots{}
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact %.4f\n%s", exact, res)
	for k, p := range exact {
		if e := res.Evidence; math.Abs(e.P[k]-p) > 4*e.SE[k] {
			t.Errorf("model %s: evidence %.4f ± %.4f, exact %.4f", res.Labels[k], e.P[k], e.SE[k], p)
		}
		if b, se := res.Bridge.Normalized[k], res.Bridge.NormalizedSE[k]; math.Abs(b-p) > 4*se {
			t.Errorf("model %s: bridge %.4f ± %.4f, exact %.4f", res.Labels[k], b, se, p)
		}
		if c := res.Chain[k]; !c.Mixed || math.Abs(c.P-p) > 4*c.MCSE {
			t.Errorf("model %s: chains %.4f ± %.4f, exact %.4f", res.Labels[k], c.P, c.MCSE, p)
		}
	}
}

// TestChainsExtend checks that chains too short to mix run on, Steps at a
// time, up to MaxSteps, and that a shard never extends.
func TestChainsExtend(t *testing.T) {
	skipInRacePass(t, "counts of steps; the chains' concurrency is TestRunExact's")
	space := mustSubsetSpace(t, 40)
	s := smallSettings(3)
	s.Chains.Steps, s.Chains.MaxSteps = 20, 60
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Steps; got != 4*60 {
		t.Errorf("%d kept steps over 4 chains of 20 steps that cannot mix in 20, want 4·60", got)
	}
	s.Chains.Shard = []int{0, 1}
	if res, err = trj.Run(context.Background(), space, s); err != nil {
		t.Fatal(err)
	}
	if got := res.Steps; got != 2*20 {
		t.Errorf("a shard of 2 chains kept %d steps, want 2·20 (shards never extend)", got)
	}
}

// noInverse is a transport that cannot be inverted: no proposal into its
// model is ever accepted.
type noInverse struct{ *flows.Affine }

func (n noInverse) Inverse([]float64, []float64) (float64, error) {
	return 0, errors.New("no inverse")
}

// TestBridgeFailureKeepsChains checks that a bridge estimate that cannot
// be made (no proposal into model 0 is accepted) is reported and the
// chains still run, with uniform jump probabilities.
func TestBridgeFailureKeepsChains(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	s := smallSettings(4)
	s.Chains.Steps = 200
	var user []*flows.Affine
	for k := range space.NumModels() {
		n := space.ModelDim(k)
		a, err := flows.NewAffine(make([]float64, n), identitySym(n))
		if err != nil {
			t.Fatal(err)
		}
		user = append(user, a)
	}
	s.Proposals = &trj.UserTransports{New: func(k int) (kernels.Transport, error) {
		if k == 0 {
			return noInverse{user[0].Clone()}, nil
		}
		return user[k].Clone(), nil
	}}
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bridge error: %s\n%s", res.BridgeError, res)
	if res.Bridge != nil || res.BridgeError == "" {
		t.Errorf("bridge %v, error %q: want none and the reason", res.Bridge, res.BridgeError)
	}
	if !res.Complete || res.Steps == 0 || !strings.Contains(res.String(), "failed") {
		t.Errorf("complete %v, %d steps, table:\n%s", res.Complete, res.Steps, res)
	}
	// Uniform probabilities: every row proposes each other model alike.
	for k, row := range res.Jump {
		for j, p := range row {
			if j != k && math.Abs(p-row[(k+1)%len(row)]) > 1e-12 {
				t.Errorf("jump row %d = %v, want uniform over the other models", k, row)
				break
			}
		}
	}
}

func identitySym(n int) *mat.SymDense {
	m := mat.NewSymDense(n, nil)
	for i := range n {
		m.SetSym(i, i, 1)
	}
	return m
}

// TestSavedConditional saves a conditional flow and runs CTRJ again from the
// saved set: the same bridge estimate.
func TestSavedConditional(t *testing.T) {
	skipInRacePass(t, "a save and reload compared for equality; the conditional flow's concurrency is TestRunExact's and the flows package's")
	space := mustSubsetSpace(t, 40)
	s := smallSettings(6)
	s.Chains.Steps = 500
	train := flows.ConditionalTrainOptions()
	train.Iterations = 20
	s.Proposals = &trj.Conditional{Train: &train}
	first, fitted, buf := runSaved(t, space, s)
	if fitted.Conditional() == nil || fitted.Transport(0) != nil {
		t.Fatal("the saved proposals are not one conditional flow")
	}
	s.Proposals = &trj.LoadedTransports{From: buf}
	again, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	if first.Algorithm != "CTRJ" || again.Algorithm != "CTRJ" || again.Transports[0].Kind != "loaded" {
		t.Errorf("algorithms %s and %s, loaded report %+v", first.Algorithm, again.Algorithm, again.Transports[0])
	}
	sameBridge(t, first, again, "the fitted flow", "the saved one")
}

// runSaved runs space with s and returns the result, the fitted proposals
// and their saved form.
func runSaved(t *testing.T, space *ppl.Space, s *trj.Settings) (*trj.Result, *trj.Fitted, *bytes.Buffer) {
	t.Helper()
	res, fitted, err := trj.RunFitted(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fitted.Save(&buf); err != nil {
		t.Fatalf("saving the fitted proposals: %v", err)
	}
	return res, fitted, &buf
}

// sameBridge checks that the bridge estimates of first, run with the
// proposals named fitted, and again, run with those named saved, are the
// same to the bit.
func sameBridge(t *testing.T, first, again *trj.Result, fitted, saved string) {
	t.Helper()
	for k := range first.Labels {
		if first.Bridge.Normalized[k] != again.Bridge.Normalized[k] {
			t.Errorf("model %d: bridge %v with %s, %v with %s", k, first.Bridge.Normalized[k], fitted, again.Bridge.Normalized[k], saved)
		}
	}
}

// skipInRacePass skips a long test in CI's race pass (-race -short): the
// first pass runs it, and under the race detector it took 5-12 minutes of
// the package's 20 on 2 cores while checking no concurrency of its own.
func skipInRacePass(t *testing.T, why string) {
	t.Helper()
	if raceDetector && testing.Short() {
		t.Skip("skipped with -race -short (run without -race): " + why)
	}
}
