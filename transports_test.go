package trj_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
)

// TestAutoTrainDefaults checks AutoTransports' default flow and training
// on a curved two-dimensional density: training stops early on the
// held-out loss, and the flow fits fresh draws better than the affine map.
func TestAutoTrainDefaults(t *testing.T) {
	skipInRacePass(t, "one training goroutine, nothing concurrent to check")
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int) [][]float64 {
		x := make([][]float64, n)
		for i := range x {
			a := rng.NormFloat64()
			x[i] = []float64{a, a*a + 0.3*rng.NormFloat64()}
		}
		return x
	}
	train, fresh := draw(2000), draw(2000)
	opts := trj.AutoTrainOptions()
	opts.Seed, opts.Workers = 1, 1
	f, rep, err := flows.FitRQMA(context.Background(), train, trj.AutoRQMAConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.EarlyStopped || rep.Iterations >= opts.Iterations {
		t.Errorf("training ran %d of %d steps, early stopped %v: want an early stop", rep.Iterations, opts.Iterations, rep.EarlyStopped)
	}
	a, err := flows.FitAffine(train, nil)
	if err != nil {
		t.Fatal(err)
	}
	mean := func(d flows.Density) float64 {
		s := 0.0
		for _, x := range fresh {
			l, err := d.LogDensity(x)
			if err != nil {
				t.Fatal(err)
			}
			s += l
		}
		return s / float64(len(fresh))
	}
	// The exact density's mean log-density is −1.63 and the best
	// Gaussian's −3.21; the flow must recover most of the difference.
	lf, la := mean(f), mean(a)
	t.Logf("%d steps; held-out mean log-density: flow %.3f, affine %.3f", rep.Iterations, lf, la)
	if !(lf > la+1) {
		t.Errorf("held-out mean log-density: flow %.3f, affine %.3f: want the flow ahead by 1", lf, la)
	}
}
