package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestWilson(t *testing.T) {
	// Textbook values: 50 of 100 at z = 1.96 gives [0.4038, 0.5962];
	// 0 of 20 gives [0, z²/(n + z²)].
	for _, tc := range []struct{ p, n, z, lo, hi float64 }{
		{0.5, 100, 1.96, 0.403830, 0.596170},
		{0, 20, 2, 0, 4.0 / 24},
		{1, 20, 2, 20.0 / 24, 1},
	} {
		lo, hi := wilson(tc.p, tc.n, tc.z)
		if math.Abs(lo-tc.lo) > 1e-6 || math.Abs(hi-tc.hi) > 1e-6 {
			t.Errorf("wilson(%v, %v, %v) = [%.6f, %.6f], want [%.6f, %.6f]", tc.p, tc.n, tc.z, lo, hi, tc.lo, tc.hi)
		}
	}
	c := Estimate{P: 0.3, MCSE: 0.001, Mixed: true, Steps: 1000}
	if lo, hi := c.Interval(4); math.Abs(lo-(0.3-0.004)) > 2e-5 || math.Abs(hi-(0.3+0.004)) > 2e-5 {
		t.Errorf("well-visited model: interval [%.6f, %.6f], want about P ± 4·MCSE = [0.296, 0.304]", lo, hi)
	}
	for _, bad := range []struct {
		c Estimate
		z float64
	}{{c, 0}, {c, -1}, {c, math.NaN()}, {c, math.Inf(1)}, {Estimate{}, 4}} {
		if lo, hi := bad.c.Interval(bad.z); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("Interval(%v) of %+v = [%v, %v], want NaN", bad.z, bad.c, lo, hi)
		}
	}
}

// TestIntervalRareModel draws the indicator series of a model the chains
// visit six times in expectation (the guide's model 1,0,1,0), independently
// from step to step, and counts how often the exact probability falls
// outside P ± 4·MCSE (or, with no visit, where there is no MCSE) and
// outside Interval(4). The MCSE is estimated from the few visits
// themselves, so one visit is 5 MCSE from the truth: P ± 4·MCSE misses
// whenever there are fewer than two (probability 0.017). The score
// interval takes the error at the truth; it misses only where a Poisson(6)
// count is 4 of its standard deviations away (16 visits or more,
// probability 0.0005).
func TestIntervalRareModel(t *testing.T) {
	const chains, steps, reps, lambda = 4, 1000, 1000, 6.0
	p := lambda / (chains * steps)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([][]float64, chains)
	for c := range x {
		x[c] = make([]float64, steps)
	}
	var wald, score int
	for range reps {
		for c := range x {
			for i := range x[c] {
				x[c][i] = 0
				if rng.Float64() < p {
					x[c][i] = 1
				}
			}
		}
		e := EstimateMean(x)
		if !e.Mixed || math.Abs(e.P-p) > 4*e.MCSE {
			wald++
		}
		if lo, hi := e.Interval(4); !(lo <= p && p <= hi) {
			score++
		}
	}
	t.Logf("%d runs, %.0f visits expected: P ± 4·MCSE missed %d, Interval(4) missed %d", reps, lambda, wald, score)
	// Expected misses: 0.5 (at most 4 with probability 0.9998); P ± 4·MCSE
	// 17 (at least 8 with probability 0.99).
	if score > 4 {
		t.Errorf("Interval(4) missed the exact probability in %d of %d runs, want at most 4", score, reps)
	}
	if wald < 8 {
		t.Errorf("P ± 4·MCSE missed in only %d of %d runs: this test no longer shows what Interval is for", wald, reps)
	}
}
