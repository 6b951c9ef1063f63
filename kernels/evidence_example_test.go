package kernels_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/kernels"
)

// The log evidence of an unnormalised density from NUTS draws and a
// transport: here exp(−|x − 2|²/2) in three dimensions, whose log evidence
// is (3/2)·log 2π, and a transport z = (x − 2)/1.2 a little too wide, as a
// fitted one would be off. Each chain's draws are cut into five batches,
// the groups whose jackknife gives the standard error.
func ExampleTransportEvidence() {
	target := stdNormal{n: 3, mu: 2}
	res, err := kernels.Sample(context.Background(),
		func(int) (kernels.Target, error) { return target, nil }, &kernels.SampleSettings{Chains: 4, Warmup: 500, Draws: 500, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	var groups [][][]float64
	for c := range res.Chains {
		ch := &res.Chains[c]
		for b := range 5 {
			var g [][]float64
			for i := b * 100; i < (b+1)*100; i++ {
				g = append(g, ch.Draw(i))
			}
			groups = append(groups, g)
		}
	}
	q := evDiagAffine{mean: []float64{2, 2, 2}, sd: []float64{1.2, 1.2, 1.2}}
	e, err := kernels.TransportEvidence(rand.New(rand.NewPCG(1, 2)), target, q, groups, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("log Z %.2f ± %.2f, exact %.2f\n", e.LogZ, e.SE, 1.5*math.Log(2*math.Pi))
	// Output:
	// log Z 2.76 ± 0.01, exact 2.76
}
