package ppl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
)

type transformCase struct {
	name  string
	build func(b *Builder)
	// free lists the constrained coordinates that are functions of u (the
	// others, such as a simplex's last entry, are determined by them).
	free []int
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

func transformCases() []transformCase {
	chol := func() []int { d, o := triangularLayout(4, 2); return append(d, o...) }()
	_, unit := triangularLayout(3, 3)
	return []transformCase{
		{"real", func(b *Builder) { b.Real("x", 2, 2) }, seq(0, 4)},
		{"positive", func(b *Builder) { b.Positive("x", 3) }, seq(0, 3)},
		{"lower-scalar-bound", func(b *Builder) { b.Lower("x", -2.5, 2) }, seq(0, 2)},
		{"lower-vector-bound", func(b *Builder) { b.Lower("x", []float64{1, -1}, 2) }, seq(0, 2)},
		{"upper", func(b *Builder) { b.Upper("x", 3.0) }, seq(0, 1)},
		{"interval", func(b *Builder) { b.Interval("x", -1.0, 4.0, 3) }, seq(0, 3)},
		{"interval-vector-bounds", func(b *Builder) { b.Interval("x", []float64{0, -5}, []float64{1, 5}, 2) }, seq(0, 2)},
		{"ordered", func(b *Builder) { b.Ordered("x", 4) }, seq(0, 4)},
		{"positive-ordered", func(b *Builder) { b.PositiveOrdered("x", 3) }, seq(0, 3)},
		{"simplex", func(b *Builder) { b.Simplex("x", 4) }, seq(0, 3)},
		{"cholesky-factor-cov", func(b *Builder) { b.CholeskyFactorCov("x", 4, 2) }, chol},
		{"unit-lower-triangular", func(b *Builder) { b.UnitLowerTriangular("x", 3, 3) }, unit},
		{"dependent-interval", func(b *Builder) {
			// GARCH-style stationarity: alpha in (0, 1), beta in (0, 1 − alpha).
			alpha := b.Interval("alpha", 0.0, 1.0)
			b.Interval("beta", 0.0, b.Check(gorgonia.Sub(gorgonia.NewConstant(1.0), alpha)))
		}, seq(0, 2)},
		{"dependent-lower", func(b *Builder) {
			s1 := b.Positive("s1")
			b.Lower("s2", s1, 2)
		}, seq(0, 3)},
	}
}

// TestTransformLogJacobians checks that, with a flat prior, the model's
// log-density equals log|det J| of u ↦ (free constrained coordinates),
// the Jacobian taken by finite differences.
func TestTransformLogJacobians(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range transformCases() {
		t.Run(c.name, func(t *testing.T) {
			m, tape := buildBoth(t, c.build)
			if m.Dim() != len(c.free) {
				t.Fatalf("Dim %d, want %d", m.Dim(), len(c.free))
			}
			x := make([]float64, len(m.ParamNames()))
			f := func(dst, u []float64) {
				if err := m.Constrain(u, x); err != nil {
					t.Fatal(err)
				}
				for i, j := range c.free {
					dst[i] = x[j]
				}
			}
			for trial := 0; trial < 3; trial++ {
				u := make([]float64, m.Dim())
				if err := m.Init(rng, u); err != nil {
					t.Fatal(err)
				}
				jac := mat.NewDense(m.Dim(), m.Dim(), nil)
				fd.Jacobian(jac, f, u, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-6})
				want := logAbsDet(t, jac)
				got := checkLogDensity(t, fmt.Sprintf("u=%v: compiled (a log-Jacobian; want: finite differences)", u), m, u, want, 1e-7)
				checkLogDensity(t, "tape", tape, u, got, 1e-12)
				checkGradient(t, m, u, 1e-6)
			}
		})
	}
}

func TestConstrainUnconstrainRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range transformCases() {
		t.Run(c.name, func(t *testing.T) {
			m := mustModel(t, c.build)
			x := make([]float64, len(m.ParamNames()))
			for trial := 0; trial < 5; trial++ {
				u := make([]float64, m.Dim())
				for i := range u {
					u[i] = 3 * rng.NormFloat64()
				}
				if err := m.Constrain(u, x); err != nil {
					t.Fatal(err)
				}
				back := make([]float64, m.Dim())
				if err := m.Unconstrain(x[:m.NumConstrained()], back); err != nil {
					t.Fatalf("u=%v x=%v: %v", u, x, err)
				}
				for i := range u {
					if !near(back[i], u[i], 1e-8) {
						t.Errorf("u[%d] = %.12g, round trip %.12g", i, u[i], back[i])
					}
				}
			}
		})
	}
}

func TestConstrainedValuesSatisfyConstraints(t *testing.T) {
	b := NewBuilder()
	b.Simplex("s", 5)
	b.Ordered("o", 3)
	b.CholeskyFactorCov("L", 3, 2)
	b.Interval("p", 2.0, 3.0)
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	// Far in the unconstrained tails the transforms must stay exact.
	u := []float64{300, -300, 5, 0, 1, 30, 2, -700, 1, 2, 3, 4, 40}
	if len(u) != m.Dim() {
		t.Fatalf("Dim %d, want %d", m.Dim(), len(u))
	}
	x := make([]float64, len(m.ParamNames()))
	if err := m.Constrain(u, x); err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range x[:5] {
		if v < 0 || math.IsNaN(v) {
			t.Errorf("simplex entry %v", v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("simplex sums to %v", sum)
	}
	if !(x[5] < x[6] && x[6] < x[7]) {
		t.Errorf("ordered %v", x[5:8])
	}
	// L is 3×2 row-major at x[8:14]: the (0,1) entry is above the diagonal.
	if x[9] != 0 || !(x[8] > 0) || !(x[11] > 0) {
		t.Errorf("Cholesky factor %v", x[8:14])
	}
	if !(x[14] > 2 && x[14] <= 3) {
		t.Errorf("interval value %v", x[14])
	}
	if lp, err := m.LogDensity(u); err != nil {
		t.Errorf("log-density far in the tails: %v, %v", lp, err)
	}
}

func TestUnconstrainRejectsViolations(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder)
		x     []float64
	}{
		{"positive", func(b *Builder) { b.Positive("x") }, []float64{-1}},
		{"lower", func(b *Builder) { b.Lower("x", 2.0) }, []float64{2}},
		{"upper", func(b *Builder) { b.Upper("x", 2.0) }, []float64{3}},
		{"interval", func(b *Builder) { b.Interval("x", 0.0, 1.0) }, []float64{1}},
		{"ordered", func(b *Builder) { b.Ordered("x", 3) }, []float64{1, 3, 2}},
		{"positive-ordered", func(b *Builder) { b.PositiveOrdered("x", 2) }, []float64{-1, 3}},
		{"simplex-sum", func(b *Builder) { b.Simplex("x", 3) }, []float64{0.2, 0.2, 0.2}},
		{"simplex-negative", func(b *Builder) { b.Simplex("x", 2) }, []float64{1.5, -0.5}},
		{"cholesky-upper", func(b *Builder) { b.CholeskyFactorCov("x", 2, 2) }, []float64{1, 0.5, 0.3, 1}},
		{"cholesky-diag", func(b *Builder) { b.CholeskyFactorCov("x", 2, 2) }, []float64{-1, 0, 0.3, 1}},
		{"unit-diag", func(b *Builder) { b.UnitLowerTriangular("x", 2, 2) }, []float64{1, 0, 0.3, 2}},
		{"nan", func(b *Builder) { b.Real("x") }, []float64{math.NaN()}},
		{"dependent", func(b *Builder) {
			a := b.Interval("a", 0.0, 1.0)
			b.Interval("c", 0.0, b.Check(gorgonia.Sub(gorgonia.NewConstant(1.0), a)))
		}, []float64{0.6, 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustModel(t, c.build)
			err := m.Unconstrain(c.x, make([]float64, m.Dim()))
			if !errors.Is(err, ErrConstraint) {
				t.Fatalf("error %v, want ErrConstraint", err)
			}
			t.Log(err)
		})
	}
}
