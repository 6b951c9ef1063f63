package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

func TestSampleProgressAndCounts(t *testing.T) {
	g := newGaussian(t, []float64{0, 0}, diagCov([]float64{1, 2}))
	var calls atomic.Int64
	res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{
		Chains: 2, Warmup: 50, Draws: 30, Seed: 1, SaveWarmup: true,
		Progress: func(Progress) { calls.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2*80 {
		t.Errorf("progress called %d times, want 160", calls.Load())
	}
	for c, ch := range res.Chains {
		if len(ch.Draws) != 30*2 || len(ch.Info) != 30 || len(ch.WarmupDraws) != 50*2 || len(ch.WarmupInfo) != 50 {
			t.Errorf("chain %d: %d draws, %d infos, %d warm-up draws", c, len(ch.Draws), len(ch.Info), len(ch.WarmupDraws))
		}
		n := 0
		for _, in := range ch.Info {
			n += in.NumLeapfrog
			if in.StepSize != ch.StepSize {
				t.Errorf("chain %d: sampling step size %v, adapted %v", c, in.StepSize, ch.StepSize)
			}
		}
		if n != ch.SampleGradEvals {
			t.Errorf("chain %d: %d leapfrog steps, %d gradient evaluations counted", c, n, ch.SampleGradEvals)
		}
		if ch.WarmupGradEvals <= 0 || ch.Metric == nil || ch.Metric.Kind() != DiagMetric {
			t.Errorf("chain %d: warm-up evaluations %d, metric %v", c, ch.WarmupGradEvals, ch.Metric)
		}
	}
	if res.Dim != 2 || res.Settings.Chains != 2 {
		t.Errorf("result dim %d, chains %d", res.Dim, res.Settings.Chains)
	}
}

func TestSampleErrors(t *testing.T) {
	g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
	bad := errors.New("no target")
	if _, err := Sample(context.Background(), func(c int) (Target, error) {
		if c == 1 {
			return nil, bad
		}
		return g.clone(), nil
	}, &SampleSettings{Chains: 2, Warmup: 10, Draws: 10}); !errors.Is(err, bad) {
		t.Errorf("factory error not returned: %v", err)
	}
	if _, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{Draws: -3}); err == nil {
		t.Error("negative draws accepted")
	}
	if _, err := Sample(context.Background(), func(int) (Target, error) { return failing{n: 2}, nil }, &SampleSettings{Init: func(c int, rng *rand.Rand, x []float64) error { x[0], x[1] = 5, 0; return nil }}); !errors.Is(err, ErrNoFinitePoint) {
		t.Errorf("impossible initialization: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sample(ctx, gaussianFactory(g), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

func TestSampleRWMFixedCovarianceNoWarmup(t *testing.T) {
	tc := gaussianCases()[1]
	g := newGaussian(t, tc.mean, tc.cov)
	res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{
		Method: RWMMethod{Covariance: tc.cov, Scale: 1.7}, Warmup: -1, Draws: 100, Chains: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Chains[0]
	if ch.RWMScale != 1.7 || ch.WarmupGradEvals != 0 || ch.SampleGradEvals != 100 {
		t.Errorf("scale %v, warm-up evaluations %d, sampling %d", ch.RWMScale, ch.WarmupGradEvals, ch.SampleGradEvals)
	}
}

func TestSampleCancelMidRun(t *testing.T) {
	g := newGaussian(t, []float64{0, 0}, diagCov([]float64{1, 2}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last atomic.Int64
	_, err := Sample(ctx, gaussianFactory(g), &SampleSettings{
		Chains: 2, Warmup: 1000, Draws: 100000, Seed: 1,
		Progress: func(p Progress) {
			if p.Done == 41 {
				cancel()
			}
			last.Store(int64(p.Done - 1))
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if last.Load() > 1000 {
		t.Errorf("chains ran to iteration %d after cancellation at 40", last.Load())
	}
}

func TestChainDraw(t *testing.T) {
	g := newGaussian(t, []float64{0, 0, 0}, diagCov([]float64{1, 1, 1}))
	res, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{Chains: 1, Warmup: 30, Draws: 5})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Chains[0]
	if d := c.Draw(4); len(d) != 3 || &d[0] != &c.Draws[12] {
		t.Errorf("Draw(4) is not draws[12:15]")
	}
}

// TestSampleShard runs four chains as one run and as shards of one and
// three: each shard's chains are the same chains, draw for draw, and
// factory, init and Progress see the unsharded chain numbers.
func TestSampleShard(t *testing.T) {
	g := newGaussian(t, []float64{0, 1}, diagCov([]float64{1, 2}))
	set := SampleSettings{Chains: 4, Warmup: 40, Draws: 20, Seed: 7}
	whole, err := Sample(context.Background(), gaussianFactory(g), &set)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range [][2]int{{0, 1}, {1, 3}} {
		set := set
		for c := block[0]; c < block[0]+block[1]; c++ {
			set.Shard = append(set.Shard, c)
		}
		var seen [4]atomic.Int64
		set.Init = func(c int, rng *rand.Rand, x []float64) error {
			seen[c].Add(1)
			for i := range x {
				x[i] = rng.Float64()*4 - 2
			}
			return nil
		}
		part, err := Sample(context.Background(),
			func(c int) (Target, error) { seen[c].Add(1); return g.clone(), nil }, &set)
		if err != nil {
			t.Fatal(err)
		}
		for k, ch := range part.Chains {
			c := block[0] + k
			if ch.Chain != c {
				t.Errorf("shard %v: chain %d reported as chain %d", block, c, ch.Chain)
			}
			if seen[c].Load() != 2 {
				t.Errorf("chain %d: factory and init called %d times, want 2", c, seen[c].Load())
			}
			if !slices.Equal(ch.Draws, whole.Chains[c].Draws) {
				t.Errorf("block %v: chain %d differs from the whole run's", block, c)
			}
		}
	}
	if _, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{Shard: []int{-1}}); err == nil {
		t.Error("negative shard chain accepted")
	}
}

// startAt is a target with an initial point of its own, as ppl models have
// (WithInit).
type startAt struct {
	*gaussian
	x0 []float64
}

func (s startAt) Init(_ *rand.Rand, x []float64) error { copy(x, s.x0); return nil }

func TestSampleUsesTargetInit(t *testing.T) {
	g := newGaussian(t, []float64{0, 1}, diagCov([]float64{1, 2}))
	x0 := []float64{7, -7}
	res, err := Sample(context.Background(), func(int) (Target, error) { return startAt{g.clone(), x0}, nil },
		&SampleSettings{Method: RWMMethod{Scale: 1e-12}, Chains: 1, Warmup: -1, Draws: 1, SaveWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Chains[0].Draw(0); math.Abs(d[0]-7) > 1e-6 || math.Abs(d[1]+7) > 1e-6 {
		t.Errorf("first draw %v: the target's own initial point %v was not used", d, x0)
	}
}
