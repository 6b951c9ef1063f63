package diag_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/trjgo/trj/ppl/diag"
)

// Four chains that agree, and the same chains with one of them stuck in a
// different mode.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([][]float64, 4)
	for c := range x {
		x[c] = make([]float64, 1000)
		for i := range x[c] {
			x[c][i] = rng.NormFloat64()
		}
	}
	rhat, _ := diag.Rhat(x)
	bulk, _ := diag.ESSBulk(x)
	tail, _ := diag.ESSTail(x)
	fmt.Printf("mixed:  R̂ < 1.01: %v, bulk ESS > 3000: %v, tail ESS > 3000: %v\n", rhat < 1.01, bulk > 3000, tail > 3000)

	for i := range x[3] {
		x[3][i] += 3
	}
	rhat, _ = diag.Rhat(x)
	fmt.Printf("stuck:  R̂ = %.2f\n", rhat)
	// Output:
	// mixed:  R̂ < 1.01: true, bulk ESS > 3000: true, tail ESS > 3000: true
	// stuck:  R̂ = 1.48
}

func ExampleMCSEQuantile() {
	// Draws of a well-mixed chain: the MCSE of the median is about
	// √(π/2)/√S ≈ 0.028 for S = 2000 standard normal draws.
	rng := rand.New(rand.NewPCG(3, 4))
	x := [][]float64{make([]float64, 2000)}
	for i := range x[0] {
		x[0][i] = rng.NormFloat64()
	}
	med, _ := diag.Quantile(x, 0.5)
	se, _ := diag.MCSEQuantile(x, 0.5)
	fmt.Printf("median %.2f ± %.2f\n", med, se)
	// Output:
	// median -0.01 ± 0.03
}
