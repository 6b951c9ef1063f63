package pipeline_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/trjgo/trj/pipeline"
)

// ExampleEstimateMean estimates the probability of an event from the
// indicator series of four chains, as trj.Run does for a model and
// selection.Run for a term.
func ExampleEstimateMean() {
	x := make([][]float64, 4)
	for c := range x {
		rng := rand.New(rand.NewPCG(1, uint64(c)))
		x[c] = make([]float64, 2000)
		for i := range x[c] {
			if rng.Float64() < 0.3 {
				x[c][i] = 1
			}
		}
	}
	e := pipeline.EstimateMean(x)
	lo, hi := e.Interval(4)
	fmt.Printf("P = %.3f ± %.3f (R̂ %.2f); 4-SE interval [%.3f, %.3f]\n", e.P, e.MCSE, e.Rhat, lo, hi)
	// Output:
	// P = 0.295 ± 0.005 (R̂ 1.00); 4-SE interval [0.276, 0.316]
}
