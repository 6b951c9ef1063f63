package trj

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
)

// selectData returns n rows of p predictors, every third one correlated
// with a common factor, and a response with strong, weak and null effects.
func selectData(n, p int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	X := mat.NewDense(n, p, nil)
	for i := range n {
		common := rng.NormFloat64()
		for j := range p {
			v := rng.NormFloat64()
			if j%3 == 0 {
				v = 0.7*common + 0.7*v
			}
			X.Set(i, j, v)
		}
	}
	effects := []float64{1.0, 0, 0.5, 0, -0.3, 0.2, 0, 0, 0.15, 0, 0, -0.6}
	y := make([]float64, n)
	for i := range n {
		y[i] = 0.5 + rng.NormFloat64()
		for j := range p {
			y[i] += effects[j%len(effects)] * X.At(i, j)
		}
	}
	return X, y
}

func exactPIPs(t *testing.T, X *mat.Dense, y []float64) []float64 {
	t.Helper()
	nig, err := glmselect.NewNIG(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := nig.Enumerate(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	return ex.PIP
}

// TestSelectExactNIG is the exact test: a normal-inverse-gamma
// regression over 12 terms (4,096 models) sampled through the
// transdimensional machinery, every PIP within 4 MCSE of the enumerated
// closed form.
func TestSelectExactNIG(t *testing.T) {
	X, y := selectData(80, 12, 1)
	want := exactPIPs(t, X, y)
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Select(context.Background(), sp, &SelectSettings{Seed: 1, Steps: 5000, Warmup: 500})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	for j, e := range res.PIP {
		z := (e.P - want[j]) / e.MCSE
		t.Logf("%s: PIP %.4f ± %.4f, exact %.4f, z %.2f", res.Names[j], e.P, e.MCSE, want[j], z)
		if e.Constant {
			if math.Abs(e.P-want[j]) > 1e-3 {
				t.Errorf("%s: constant PIP %v, exact %.5f", res.Names[j], e.P, want[j])
			}
			continue
		}
		if math.Abs(z) > 4 {
			t.Errorf("%s: PIP %.4f ± %.4f, exact %.4f (z = %.2f)", res.Names[j], e.P, e.MCSE, want[j], z)
		}
	}
}
