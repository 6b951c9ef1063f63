package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lkjRef is the LKJ log-density of the Cholesky factor L, written from the
// density of the correlation matrix R = LLᵀ, det(R)^{η−1}/c_K(η), and the
// Jacobian of R ↦ L, Π_k L_kk^{K−k}.
func lkjRef(eta float64, l *mat.Dense) float64 {
	k, _ := l.Dims()
	var r mat.Dense
	r.Mul(l, l.T())
	logC := 0.0
	for i := 1; i < k; i++ {
		km := float64(k - i)
		a := eta + (km-1)/2
		logC += (2*eta-2+km)*km*math.Ln2 + km*(2*lg(a)-lg(2*a))
	}
	lp := (eta-1)*math.Log(mat.Det(&r)) - logC
	for i := range k {
		lp += float64(k-1-i) * math.Log(l.At(i, i))
	}
	return lp
}

func TestLKJCholesky(t *testing.T) {
	// The factor at u, through the model's own transform (checked by
	// TestTransformLogJacobians), with its log-Jacobian.
	factor := func(t *testing.T, k int, u []float64) (*mat.Dense, float64) {
		m := mustModel(t, func(b *Builder) { b.CholeskyFactorCorr("L", k) })
		x := make([]float64, k*k)
		if err := m.Constrain(u, x); err != nil {
			t.Fatal(err)
		}
		lj, err := m.LogDensity(u)
		if err != nil {
			t.Fatal(err)
		}
		return mat.NewDense(k, k, x), lj
	}
	u3 := []float64{0.4, -1.1, 0.7}
	l3, lj3 := factor(t, 3, u3)
	u4 := []float64{0.4, -1.1, 0.7, 2, -0.3, 0.1}
	l4, lj4 := factor(t, 4, u4)
	y := 0.8
	r := math.Tanh(y)
	cases := []distCase{
		{"K2/closed-form", func(b *Builder) {
			b.Sample(LKJCholesky{Eta: 2.5}, b.CholeskyFactorCorr("L", 2))
		}, []float64{y}, (2.5-1)*math.Log(1-r*r) - (2*2.5-1)*math.Ln2 - (2*lg(2.5) - lg(5)) + math.Log(1-r*r)},
		{"K3/const-eta", func(b *Builder) {
			b.Sample(LKJCholesky{Eta: 1.7}, b.CholeskyFactorCorr("L", 3))
		}, u3, lkjRef(1.7, l3) + lj3},
		{"K4/node-eta", func(b *Builder) {
			b.Sample(LKJCholesky{Eta: b.Positive("eta")}, b.CholeskyFactorCorr("L", 4))
		}, append([]float64{math.Log(0.6)}, u4...), lkjRef(0.6, l4) + lj4 + math.Log(0.6)},
		{"K3/eta-one-is-uniform-on-correlations", func(b *Builder) {
			b.Sample(LKJCholesky{Eta: 1.0}, b.CholeskyFactorCorr("L", 3))
		}, u3, lkjRef(1, l3) + lj3},
		{"K3/data", func(b *Builder) {
			b.Real("eta")
			b.AddLogDensity(b.Check(LKJCholesky{Eta: b.Real("eta2")}.LogProb(b.DataMatrix("L", l3))))
		}, []float64{0, 2.2}, lkjRef(2.2, l3)},
	}
	checkDistCases(t, cases)
	t.Run("normalised", func(t *testing.T) {
		// ∫ exp(log-density) du = 1 over R³ for K = 3, by the trapezoidal
		// rule, whose error falls exponentially in 1/h for this analytic,
		// exponentially decaying integrand (about 1e-4 at h = 0.5, below
		// 1e-8 at h = 0.25).
		m := mustModel(t, func(b *Builder) { b.Sample(LKJCholesky{Eta: 2}, b.CholeskyFactorCorr("L", 3)) })
		const n, lim = 56, 7.0
		h := 2 * lim / n
		s := 0.0
		u := make([]float64, 3)
		for i := 0; i <= n; i++ {
			for j := 0; j <= n; j++ {
				for l := 0; l <= n; l++ {
					u[0], u[1], u[2] = -lim+float64(i)*h, -lim+float64(j)*h, -lim+float64(l)*h
					lp, err := m.LogDensity(u)
					if err != nil {
						t.Fatal(err)
					}
					s += math.Exp(lp)
				}
			}
		}
		if got := s * h * h * h; math.Abs(got-1) > 1e-8 {
			t.Errorf("integral %.12g, want 1", got)
		}
	})
}

func TestLKJCholeskyErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *Builder)
	}{
		{"zero-eta", func(b *Builder) { b.Sample(LKJCholesky{Eta: 0.0}, b.CholeskyFactorCorr("L", 3)) }},
		{"vector-eta", func(b *Builder) { b.Sample(LKJCholesky{Eta: []float64{1, 2}}, b.CholeskyFactorCorr("L", 3)) }},
		{"not-square", func(b *Builder) { b.Sample(LKJCholesky{Eta: 1.0}, b.Real("L", 3, 2)) }},
		{"data-not-unit-rows", func(b *Builder) {
			b.Sample(LKJCholesky{Eta: b.Real("e")}, b.DataMatrix("L", mat.NewDense(2, 2, []float64{1, 0, 0.5, 0.5})))
		}},
		{"data-upper", func(b *Builder) {
			b.Sample(LKJCholesky{Eta: b.Real("e")}, b.DataMatrix("L", mat.NewDense(2, 2, []float64{1, 0.1, 0, 1})))
		}},
		{"one-by-one", func(b *Builder) { b.CholeskyFactorCorr("L", 1) }},
	} {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}
