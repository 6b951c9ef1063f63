package flows

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestAssess(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	draw := func() []float64 {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		return []float64{1 + 2*a, -1 + 0.5*a + 0.5*b}
	}
	x := make([][]float64, 5000)
	for r := range x {
		x[r] = draw()
	}
	held := make([][]float64, 2000)
	for r := range held {
		held[r] = draw()
	}
	f, err := FitAffine(x, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Exact log-density: θ1 = 1 + 2a, θ2 = −1 + a/2 + b/2, |det| = 1.
	logp := func(th []float64) (float64, error) {
		a := (th[0] - 1) / 2
		b := 2 * (th[1] + 1 - 0.5*a)
		return -0.5*a*a - 0.5*b*b - 2*halfLog2Pi - math.Log(2*0.5), nil
	}
	q, err := Assess(f, held, nil, logp, 4000, 1)
	if err != nil {
		t.Fatal(err)
	}
	exact := 0.0
	for _, th := range held {
		l, _ := logp(th)
		exact += l
	}
	exact /= float64(len(held))
	t.Logf("%+v, exact held-out mean %.4f", q, exact)
	if math.Abs(q.HeldOutLogLik-exact) > 0.01 {
		t.Errorf("held-out log-likelihood %.4f, exact %.4f", q.HeldOutLogLik, exact)
	}
	if q.ESSFraction < 0.95 || q.ESSFraction > 1 {
		t.Errorf("ESS fraction %.3f for an almost exact flow", q.ESSFraction)
	}
	if _, err := Assess(f, [][]float64{{1}}, nil, nil, 0, 1); err == nil {
		t.Error("wrong-length held-out sample accepted")
	}
}

func TestAssessEmpty(t *testing.T) {
	f, err := NewAffine([]float64{0}, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		t.Fatal(err)
	}
	if q, err := Assess(f, [][]float64{}, nil, nil, 0, 1); err == nil {
		t.Errorf("empty held-out set: %+v, no error", q)
	}
	if _, err := Assess(f, nil, nil, nil, 0, 1); err == nil {
		t.Error("nothing to assess: no error")
	}
	if _, err := Assess(nil, [][]float64{{1}}, nil, nil, 0, 1); err == nil {
		t.Error("nil flow: no error")
	}
}
