package checks

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Regression describes synthetic variable-selection data: standard normal
// predictors, those j with j%3 == Group made Common·c + Own·z from a
// factor c common to the row, and a response Intercept + Σ_j Effect(j)·x_j
// + ε, ε standard normal.
type Regression struct {
	Stream      uint64 // the second word of the PCG seed
	Group       int
	Common, Own float64
	Intercept   float64
	Effect      func(j int) float64
}

// Data returns n rows of p predictors and the response, drawn (the
// predictors first) from the stream seeded with seed and r.Stream.
func (r Regression) Data(n, p int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, r.Stream))
	X := mat.NewDense(n, p, nil)
	for i := range n {
		common := rng.NormFloat64()
		for j := range p {
			v := rng.NormFloat64()
			if j%3 == r.Group {
				v = r.Common*common + r.Own*v
			}
			X.Set(i, j, v)
		}
	}
	y := make([]float64, n)
	for i := range n {
		y[i] = r.Intercept + rng.NormFloat64()
		for j := range p {
			if b := r.Effect(j); b != 0 {
				y[i] += b * X.At(i, j)
			}
		}
	}
	return X, y
}
