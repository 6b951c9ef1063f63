package ops_test

import (
	"fmt"
	"log"
	"math"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// A first-order decay y' = −ky observed with noise, as a ppl model: the
// right-hand side is written once as a graph, and the log-density's
// gradient flows through the solution to the rate k and the initial
// amount y0 by forward sensitivities.
func ExampleODESolve() {
	decay, err := ops.NewODE(1, 1, func(_ *gorgonia.Node, y, k []*gorgonia.Node) ([]*gorgonia.Node, error) {
		ky, err := gorgonia.Mul(k[0], y[0])
		if err != nil {
			return nil, err
		}
		d, err := gorgonia.Neg(ky)
		return []*gorgonia.Node{d}, err
	})
	if err != nil {
		log.Fatal(err)
	}
	times := []float64{0.5, 1, 2, 4}
	b := ppl.NewBuilder()
	k := b.Positive("k")
	y0 := b.Positive("y0")
	b.Sample(ppl.LogNormal{Mu: 0, Sigma: 1}, k)
	b.Sample(ppl.LogNormal{Mu: math.Log(10), Sigma: 1}, y0)
	y := b.Check(ops.ODESolve(decay, y0, k, 0, times, nil)) // 4×1
	obs := b.Data("obs", []float64{6.2, 3.5, 1.4, 0.2}, 4, 1)
	b.Sample(ppl.Normal{Mu: y, Sigma: 0.3}, obs)
	m, err := b.Model()
	if err != nil {
		log.Fatal(err)
	}

	u := make([]float64, m.Dim())
	if err := m.UnconstrainNamed(map[string][]float64{"k": {1}, "y0": {10}}, u); err != nil {
		log.Fatal(err)
	}
	grad := make([]float64, m.Dim())
	lp, err := m.LogDensityGrad(u, grad)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log density %.3f, gradient (log k, log y0) %.3f\n", lp, grad)
	// Output:
	// log density -0.990, gradient (log k, log y0) [1.230 2.505]
}
