package selection

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
)

// TestSamplerInvariance: the default Gaussian prior does not depend on the
// data's units, so the sampler with the same seed gives the same PIPs,
// coefficients (in their units: β_j → a/c_j β_j) and predictions (→ a·ŷ +
// b) when y → a·y + b and each x_j → c_j·x_j + d_j, within 4 MCSE.
func TestSamplerInvariance(t *testing.T) {
	X, y, Xnew := answerData()
	n, p := X.Dims()
	m, _ := Xnew.Dims()
	a, b := 250.0, -40.0
	c := []float64{0.001, 3, -7, 1e4, 0.5, 2}
	d := []float64{5, -2, 100, 0, 1e3, -0.5}
	X2, Xnew2 := mat.NewDense(n, p, nil), mat.NewDense(m, p, nil)
	y2 := make([]float64, n)
	for i := range n {
		y2[i] = a*y[i] + b
		for j := range p {
			X2.Set(i, j, c[j]*X.At(i, j)+d[j])
		}
	}
	for i := range m {
		for j := range p {
			Xnew2.Set(i, j, c[j]*Xnew.At(i, j)+d[j])
		}
	}
	run := func(X, Xnew *mat.Dense, y []float64) *Result {
		sp, err := glmselect.Gaussian(X, y, &glmselect.Settings{Predict: Xnew})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sp, &Settings{Seed: 8, Steps: 3000, Warmup: 300})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r1, r2 := run(X, Xnew, y), run(X2, Xnew2, y2)
	check := func(what string, v1, v2, se1, se2 float64) {
		t.Helper()
		se := math.Hypot(se1, se2)
		if d := math.Abs(v1 - v2); d > 4*se && d > 1e-9*(1+math.Abs(v1)) {
			t.Errorf("%s: %.6g against %.6g in other units (difference %.3g, MCSEs %.3g, %.3g)", what, v1, v2, d, se1, se2)
		}
	}
	for j := range p {
		check(r1.Names[j]+" PIP", r1.PIP[j].P, r2.PIP[j].P, r1.PIP[j].MCSE, r2.PIP[j].MCSE)
		s := a / c[j]
		c1, c2 := r1.Coefficients[j], r2.Coefficients[j]
		check(r1.Names[j]+" coefficient", s*float64(c1.Mean), float64(c2.Mean), math.Abs(s)*float64(c1.MeanMCSE), float64(c2.MeanMCSE))
	}
	for i := range r1.Quantities {
		q1, q2 := r1.Quantities[i], r2.Quantities[i]
		check(q1.Name, a*float64(q1.Mean)+b, float64(q2.Mean), a*float64(q1.MeanMCSE), float64(q2.MeanMCSE))
	}
}
