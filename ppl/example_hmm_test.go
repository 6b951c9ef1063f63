package ppl_test

import (
	"fmt"
	"log"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ppl"
)

// A two-state hidden Markov model with normal emissions (posteriordb's
// hmm_example): the states' means and the rows of the transition matrix
// are parameters, and the hidden states are summed out by the forward
// algorithm.
func ExampleHMM() {
	b := ppl.NewBuilder()
	theta1, theta2 := b.Simplex("theta1", 2), b.Simplex("theta2", 2)
	mu := b.PositiveOrdered("mu", 2)
	b.Sample(ppl.Normal{Mu: []float64{3, 10}, Sigma: 1.0}, mu)
	state := func(k int) ppl.Distribution {
		return ppl.Normal{Mu: b.Check(gorgonia.Slice(mu, gorgonia.S(k))), Sigma: 1.0}
	}
	b.Sample(ppl.HMM{
		Emissions:   []ppl.Distribution{state(0), state(1)},
		Transitions: []ppl.Operand{theta1, theta2},
	}, b.Data("y", []float64{2.8, 3.4, 9.7, 10.3, 10.1, 3.1}))
	m, err := b.Model()
	if err != nil {
		log.Fatal(err)
	}
	m, err = m.WithInit(map[string][]float64{"theta1": {0.7, 0.3}, "theta2": {0.4, 0.6}, "mu": {3, 10}})
	if err != nil {
		log.Fatal(err)
	}
	u := make([]float64, m.Dim())
	_ = m.Init(nil, u)
	grad := make([]float64, m.Dim())
	lp, err := m.LogDensityGrad(u, grad)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("dimension %d, log density %.4f\n", m.Dim(), lp)
	// Output:
	// dimension 4, log density -10.9933
}
