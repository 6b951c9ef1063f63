package trj_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/internal/checks/conjugate"
	"github.com/trjgo/trj/ppl"
)

// regressionData is n observations of three predictors and a response
// y = 0.6·x₁ + 0.25·x₂ + ε, ε ~ N(0, 1), from a fixed stream: every subset
// of the predictors then has a posterior probability between about 0.01
// and 0.5.
func regressionData(n int) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(7, 11))
	x = make([][]float64, n)
	y = make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		y[i] = 0.6*x[i][0] + 0.25*x[i][1] + rng.NormFloat64()
	}
	return x, y
}

// subsetSpace is the eight subsets of three predictors, labelled by their
// inclusion vectors, with σ² shared, and the exact posterior probabilities
// under a uniform model prior.
func subsetSpace(n int) (*ppl.Space, []float64, error) {
	x, y := regressionData(n)
	space, p, _, err := allSubsets(x, y)
	return space, p, err
}

// allSubsets is the space of every subset of the columns of x, labelled by
// their inclusion vectors (model index = inclusion bit mask), with the exact
// posterior probabilities under a uniform model prior and the exact log
// evidences.
func allSubsets(x [][]float64, y []float64) (*ppl.Space, []float64, []float64, error) {
	models, labels, logZ, err := conjugate.AllSubsets(x, y)
	if err != nil {
		return nil, nil, nil, err
	}
	space, err := ppl.NewSpace(models, ppl.WithLabels(labels...))
	if err != nil {
		return nil, nil, nil, err
	}
	top := math.Inf(-1)
	for _, l := range logZ {
		top = max(top, l)
	}
	p := make([]float64, len(logZ))
	var sum float64
	for k, l := range logZ {
		p[k] = math.Exp(l - top)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return space, p, logZ, nil
}

// mustSubsetSpace is subsetSpace's space, ending the test on an error.
func mustSubsetSpace(t *testing.T, n int) *ppl.Space {
	t.Helper()
	space, _, err := subsetSpace(n)
	if err != nil {
		t.Fatal(err)
	}
	return space
}
