package flows

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gaussLogDensity is c + log N(x; m, P⁻¹) for a fixed 3-dimensional
// Gaussian, whose Laplace fit is exact.
func gaussLogDensity(c float64) (func(x, g []float64) (float64, error), []float64, *mat.SymDense) {
	m := []float64{1, -2, 0.5}
	P := mat.NewSymDense(3, []float64{4, 1, 0.5, 1, 3, -0.7, 0.5, -0.7, 2})
	var ch mat.Cholesky
	ch.Factorize(P)
	logDetP := ch.LogDet()
	return func(x, g []float64) (float64, error) {
		d := make([]float64, 3)
		for i := range d {
			d[i] = x[i] - m[i]
		}
		var q float64
		for i := range 3 {
			g[i] = 0
			for j := range 3 {
				g[i] -= P.At(i, j) * d[j]
				q += d[i] * P.At(i, j) * d[j]
			}
		}
		return c - 1.5*math.Log(2*math.Pi) + 0.5*logDetP - q/2, nil
	}, m, P
}

func TestLaplaceGaussianExact(t *testing.T) {
	f, m, P := gaussLogDensity(3.25)
	lp, err := FitLaplace(f, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !lp.Converged || lp.Regularised {
		t.Fatalf("converged %v regularised %v", lp.Converged, lp.Regularised)
	}
	for i := range m {
		if math.Abs(lp.Mean()[i]-m[i]) > 1e-7 {
			t.Errorf("mode %v, want %v", lp.Mean(), m)
		}
	}
	if math.Abs(lp.LogEvidence-3.25) > 1e-6 {
		t.Errorf("log evidence %v, want 3.25", lp.LogEvidence)
	}
	var cov mat.SymDense
	var ch mat.Cholesky
	ch.Factorize(P)
	ch.InverseTo(&cov)
	if !mat.EqualApprox(lp.Covariance(), &cov, 1e-6) {
		t.Errorf("covariance %v, want %v", mat.Formatted(lp.Covariance()), mat.Formatted(&cov))
	}
	// The approximation's density equals the target's up to c, and the
	// maps invert each other, also in place.
	theta := []float64{0.3, 0.1, -1}
	g := make([]float64, 3)
	want, _ := f(theta, g)
	got, err := lp.LogDensity(theta, make([]float64, 3))
	if err != nil || math.Abs(got-(want-3.25)) > 1e-6 {
		t.Errorf("log density %v, want %v", got, want-3.25)
	}
	z := make([]float64, 3)
	ld1, _ := lp.Forward(theta, z)
	back := append([]float64(nil), z...)
	ld2, _ := lp.Inverse(back, back)
	for i := range theta {
		if math.Abs(back[i]-theta[i]) > 1e-12 {
			t.Errorf("round trip %v, want %v", back, theta)
		}
	}
	if ld1 != -ld2 {
		t.Errorf("log dets %v and %v", ld1, ld2)
	}
	inplace := append([]float64(nil), theta...)
	lp.Forward(inplace, inplace)
	for i := range z {
		if inplace[i] != z[i] {
			t.Errorf("in-place forward %v, want %v", inplace, z)
		}
	}
}

func TestLaplaceRegularised(t *testing.T) {
	// f = x²/2 − x⁴/4 − y²/2 from its saddle point (0, 0), where the
	// gradient vanishes and the Hessian is indefinite.
	f := func(x, g []float64) (float64, error) {
		g[0], g[1] = x[0]-x[0]*x[0]*x[0], -x[1]
		return x[0]*x[0]/2 - math.Pow(x[0], 4)/4 - x[1]*x[1]/2, nil
	}
	lp, err := FitLaplace(f, []float64{0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !lp.Regularised || !math.IsNaN(lp.LogEvidence) {
		t.Errorf("regularised %v, log evidence %v", lp.Regularised, lp.LogEvidence)
	}
	z := make([]float64, 2)
	if _, err := lp.Forward([]float64{0.1, 0.2}, z); err != nil || math.IsNaN(z[0]) {
		t.Errorf("forward %v %v", z, err)
	}
}

func TestLaplaceBadInput(t *testing.T) {
	bad := func(x, g []float64) (float64, error) { return math.NaN(), nil }
	if _, err := FitLaplace(bad, []float64{0}, nil); !errors.Is(err, ErrLaplace) {
		t.Errorf("NaN density: %v", err)
	}
	if _, err := FitLaplace(bad, nil, nil); !errors.Is(err, ErrLaplace) {
		t.Errorf("dimension 0: %v", err)
	}
	if _, err := NewLaplace([]float64{0, 1}, mat.NewSymDense(3, nil)); err == nil {
		t.Error("dimension mismatch: no error")
	}
	lp, _ := NewLaplace([]float64{0}, mat.NewSymDense(1, []float64{1}))
	if _, err := lp.Forward([]float64{0, 1}, []float64{0, 1}); err == nil {
		t.Error("wrong length: no error")
	}
}

func TestLaplacePrecision(t *testing.T) {
	prec := mat.NewSymDense(3, []float64{4, 1, 0.5, 1, 3, -0.2, 0.5, -0.2, 2})
	lap, err := NewLaplace([]float64{1, 2, 3}, prec)
	if err != nil {
		t.Fatal(err)
	}
	h := lap.Precision()
	for i := range 3 {
		for j := range 3 {
			if math.Abs(h.At(i, j)-prec.At(i, j)) > 1e-12 {
				t.Fatalf("Precision()[%d,%d] = %v, want %v", i, j, h.At(i, j), prec.At(i, j))
			}
		}
	}
}
