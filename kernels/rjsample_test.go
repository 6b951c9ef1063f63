package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trjgo/trj/internal/runs"
)

// coinRJ is a two-model RJKernel whose chains propose the other model at
// every step, accept with probability ½, and carry θ = (model, step).
type coinRJ struct{}

func (coinRJ) NumModels() int { return 2 }
func (coinRJ) ProposeJump(*rand.Rand, int, []float64) (JumpRecord, error) {
	return JumpRecord{}, errors.New("not used")
}
func (coinRJ) Start(_ *rand.Rand, k int, _ []float64) (RJChain, error) {
	return &coinChain{k: k}, nil
}

type coinChain struct{ k, steps int }

func (c *coinChain) Step(rng *rand.Rand) RJInfo {
	c.steps++
	info := RJInfo{Jumped: true, Jump: JumpRecord{From: c.k, To: 1 - c.k, AcceptProb: 0.5}}
	if rng.Float64() < 0.5 {
		c.k, info.JumpAccepted = 1-c.k, true
	}
	return info
}
func (c *coinChain) Model() int          { return c.k }
func (c *coinChain) LogDensity() float64 { return 0 }
func (c *coinChain) Theta(dst []float64) []float64 {
	return append(dst[:0], float64(c.k), float64(c.steps))
}

func coinFactory(int) (RJKernel, error) { return coinRJ{}, nil }

func coinStart(_ int, rng *rand.Rand) (int, []float64, error) { return rng.IntN(2), nil, nil }

// TestSampleRJShardAndOutput runs four chains as one run and as a shard of
// two: the shard's chains are the whole run's, and the output sees every
// kept step of its chain, then Close.
func TestSampleRJShardAndOutput(t *testing.T) {
	set := RJSampleSettings{Chains: 4, Steps: 50, Warmup: 5, Seed: 3, KeepDraws: true}
	whole, err := SampleRJ(context.Background(), coinFactory, coinStart, &set)
	if err != nil {
		t.Fatal(err)
	}
	shard := set
	shard.Shard = []int{3, 1}
	outs := map[int]*recordRJ{3: {}, 1: {}}
	shard.Output = func(c int) (RJChainOutput, error) { return outs[c], nil }
	part, err := SampleRJ(context.Background(), coinFactory, coinStart, &shard)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range shard.Shard {
		got, want := part.Chains[k], whole.Chains[c]
		if got.Chain != c || !slices.Equal(got.Models, want.Models) || !slices.Equal(got.Draws, want.Draws) {
			t.Errorf("shard chain %d (chain %d) differs from the whole run's chain %d", k, got.Chain, c)
		}
		o := outs[c]
		if !slices.Equal(o.models, want.Models) || o.closed != 1 || o.steps != len(want.Models) {
			t.Errorf("chain %d: output saw %d steps, closed %d times", c, o.steps, o.closed)
		}
	}
	for _, bad := range [][]int{{4}, {-1}, {1, 1}} {
		s := set
		s.Shard = bad
		if _, err := SampleRJ(context.Background(), coinFactory, coinStart, &s); err == nil {
			t.Errorf("shard %v accepted", bad)
		}
	}
}

// recordRJ is an RJChainOutput that keeps the models it sees.
type recordRJ struct {
	models        []int
	steps, closed int
}

func (r *recordRJ) Draw(step, model int, theta []float64, _ RJInfo) error {
	if step != r.steps || theta[0] != float64(model) {
		return errors.New("steps out of order")
	}
	r.steps++
	r.models = append(r.models, model)
	return nil
}

func (r *recordRJ) Close(*RJChainResult, error) error { r.closed++; return nil }

// TestRunsRefuseWhatCannotRun checks that Sample and SampleRJ refuse, before
// any chain starts, runs whose draws cannot fit in memory or whose
// iteration counts overflow: each case must fail with its cause named and
// without calling the factory.
func TestRunsRefuseWhatCannotRun(t *testing.T) {
	cases := []struct {
		name string
		rj   *RJSampleSettings // nil for a Sample case
		set  *SampleSettings
		want string
		// limit marks cases refused only where the machine's memory is
		// known (mem_linux.go).
		limit bool
	}{
		{name: "steps 1e9", rj: &RJSampleSettings{Steps: 1e9, Chains: 1 << 12}, want: "need", limit: true},
		{name: "steps MaxInt", rj: &RJSampleSettings{Steps: math.MaxInt, Warmup: -1}, want: "need"},
		{name: "steps MaxInt, default warm-up", rj: &RJSampleSettings{Steps: math.MaxInt}, want: "overflow"},
		{name: "warm-up MaxInt", rj: &RJSampleSettings{Warmup: math.MaxInt}, want: "overflow"},
		{name: "kept draws", rj: &RJSampleSettings{Steps: 1 << 40, KeepDraws: true}, want: "need", limit: true},
		{name: "negative steps", rj: &RJSampleSettings{Steps: -2}, want: "-2 steps"},
		{name: "draws 1e12", set: &SampleSettings{Draws: 1e12}, want: "need", limit: true},
		{name: "draws MaxInt", set: &SampleSettings{Draws: math.MaxInt, Warmup: -1}, want: "need"},
		{name: "warm-up MaxInt", set: &SampleSettings{Warmup: math.MaxInt}, want: "overflow"},
		{name: "saved warm-up", set: &SampleSettings{Warmup: 1 << 40, SaveWarmup: true}, want: "need", limit: true},
		{name: "negative draws", set: &SampleSettings{Draws: -2}, want: "-2 draws"},
		{name: "shard out of range", set: &SampleSettings{Chains: 2, Shard: []int{2}}, want: "out of range"},
		{name: "negative RWM scale", set: &SampleSettings{Method: RWMMethod{Scale: -1}}, want: "proposal scale"},
		{name: "NaN step size", set: &SampleSettings{Method: NUTSMethod{StepSize: math.NaN()}}, want: "step size"},
	}
	for _, c := range cases {
		if c.limit && runs.MemoryLimit() == 0 {
			continue
		}
		var calls atomic.Int64
		var err error
		if c.rj != nil {
			_, err = SampleRJ(context.Background(), func(int) (RJKernel, error) { calls.Add(1); return coinRJ{}, nil }, coinStart, c.rj)
		} else {
			_, err = Sample(context.Background(), func(int) (Target, error) { calls.Add(1); return badDim{1}, nil }, c.set)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
		if calls.Load() != 0 {
			t.Errorf("%s: factory called %d times before the run was refused", c.name, calls.Load())
		}
	}
}
