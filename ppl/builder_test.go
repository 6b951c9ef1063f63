package ppl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"
)

// here returns "ppl/<file>:<line>" of its caller's line plus delta.
func here(delta int) string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("ppl/%s:%d", file[strings.LastIndex(file, "/")+1:], line+delta)
}

func TestFirstErrorNamesCaller(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder) string // returns the expected location
	}{
		{"duplicate-name", func(b *Builder) string {
			b.Real("x")
			b.Real("x")
			return here(-1)
		}},
		{"check", func(b *Builder) string {
			x := b.Real("x", 2)
			y := b.Real("y", 3)
			b.Check(gorgonia.Add(x, y))
			return here(-1)
		}},
		{"distribution", func(b *Builder) string { // the error arises in dist.go
			x := b.Real("x", 2)
			b.Sample(Normal{Mu: []float64{0, 0, 0}, Sigma: 1}, x)
			return here(-1)
		}},
		{"no-parameters", func(b *Builder) string {
			b.Sample(Normal{Mu: 0, Sigma: 1}, 0.5)
			return "" // the error names the Model call
		}},
		{"deprecated-alias", func(b *Builder) string {
			b.Real("x")
			b.Must(nil, errors.New("boom"))
			return here(-1)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder()
			want := c.build(b)
			_, err := b.Model()
			if want == "" {
				want = here(-2)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), want+": ppl: ") {
				t.Errorf("error %q does not start with %q", err, want+": ppl: ")
			}
		})
	}
}

func TestDeprecatedAliases(t *testing.T) {
	b := NewBuilder()
	x := b.Real("x")
	b.Add(b.Must(gorgonia.Neg(b.Must(gorgonia.Square(x)))))
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	lp, err := m.LogDensity([]float64{3})
	if err != nil || lp != -9 {
		t.Errorf("log-density %v, %v; want -9", lp, err)
	}
}

var (
	schoolsY     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	schoolsSigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// eightSchools is the non-centred eight schools model.
func eightSchools(b *Builder) {
	mu := b.Real("mu")
	tau := b.Positive("tau")
	eta := b.Real("eta", 8)
	theta := b.Check(gorgonia.Add(mu, b.Check(gorgonia.Mul(tau, eta))))
	b.Sample(Normal{Mu: 0, Sigma: 5}, mu)
	b.Sample(HalfCauchy{Scale: 5}, tau)
	b.Sample(Normal{Mu: 0, Sigma: 1}, eta)
	b.Sample(Normal{Mu: theta, Sigma: b.Data("sigma", schoolsSigma)}, b.Data("y", schoolsY))
	b.Report("theta", theta)
}

// eightSchoolsRef is the same log-density written by hand with distuv.
func eightSchoolsRef(u []float64) float64 {
	mu, ltau, eta := u[0], u[1], u[2:]
	tau := math.Exp(ltau)
	lp := distuv.Normal{Sigma: 5}.LogProb(mu) + math.Ln2 + distuv.StudentsT{Sigma: 5, Nu: 1}.LogProb(tau) + ltau
	for i, e := range eta {
		lp += distuv.Normal{Sigma: 1}.LogProb(e)
		lp += distuv.Normal{Mu: mu + tau*e, Sigma: schoolsSigma[i]}.LogProb(schoolsY[i])
	}
	return lp
}

func TestEightSchools(t *testing.T) {
	m, tape := buildBoth(t, eightSchools)
	if m.Dim() != 10 {
		t.Fatalf("Dim %d, want 10", m.Dim())
	}
	names := m.ParamNames()
	want := []string{"mu", "tau", "eta.1", "eta.2", "eta.3", "eta.4", "eta.5", "eta.6", "eta.7", "eta.8",
		"theta.1", "theta.2", "theta.3", "theta.4", "theta.5", "theta.6", "theta.7", "theta.8"}
	if !slices.Equal(names, want) {
		t.Fatalf("ParamNames %v, want %v", names, want)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	u := make([]float64, m.Dim())
	g, gt := make([]float64, m.Dim()), make([]float64, m.Dim())
	x := make([]float64, len(names))
	for trial := 0; trial < 5; trial++ {
		if err := m.Init(rng, u); err != nil {
			t.Fatal(err)
		}
		for _, v := range u {
			if v < -2 || v >= 2 {
				t.Fatalf("Init gave %v outside [-2, 2)", v)
			}
		}
		lp, err := m.LogDensityGrad(u, g)
		if err != nil {
			t.Fatal(err)
		}
		if ref := eightSchoolsRef(u); !near(lp, ref, 1e-12) {
			t.Errorf("log-density %.15g, hand-written %.15g", lp, ref)
		}
		lpt, err := tape.LogDensityGrad(u, gt)
		if err != nil {
			t.Fatal(err)
		}
		if !near(lpt, lp, 1e-12) {
			t.Errorf("tape %.15g, compiled %.15g", lpt, lp)
		}
		for i := range g {
			if !near(g[i], gt[i], 1e-10) {
				t.Errorf("gradient[%d]: compiled %v, tape %v", i, g[i], gt[i])
			}
		}
		checkGradient(t, m, u, 1e-6)
		if err := m.Constrain(u, x); err != nil {
			t.Fatal(err)
		}
		if x[0] != u[0] || !near(x[1], math.Exp(u[1]), 1e-15) {
			t.Errorf("constrained mu, tau = %v, %v from u %v", x[0], x[1], u[:2])
		}
		for i := 0; i < 8; i++ {
			if th := u[0] + math.Exp(u[1])*u[2+i]; !near(x[10+i], th, 1e-14) {
				t.Errorf("theta.%d = %v, want %v", i+1, x[10+i], th)
			}
		}
	}
}

func TestMatrixNamesRowMajor(t *testing.T) {
	b := NewBuilder()
	b.Real("B", 2, 3)
	b.Simplex("w", 2)
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"B.1.1", "B.1.2", "B.1.3", "B.2.1", "B.2.2", "B.2.3", "w.1", "w.2"}
	if !slices.Equal(m.ParamNames(), want) {
		t.Errorf("ParamNames %v, want %v", m.ParamNames(), want)
	}
	u := []float64{1, 2, 3, 4, 5, 6, 0}
	x := make([]float64, 8)
	if err := m.Constrain(u, x); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x[:6], u[:6]) || x[6] != 0.5 || x[7] != 0.5 {
		t.Errorf("Constrain %v", x)
	}
}

func TestUnusedParameterHasFlatPrior(t *testing.T) {
	b := NewBuilder()
	b.Real("free", 2)
	x := b.Real("x")
	b.Sample(Normal{Mu: 0, Sigma: 1}, x)
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, 3)
	lp, err := m.LogDensityGrad([]float64{5, -7, 0.5}, g)
	if err != nil {
		t.Fatal(err)
	}
	if want := distuv.UnitNormal.LogProb(0.5); !near(lp, want, 1e-14) || g[0] != 0 || g[1] != 0 || !near(g[2], -0.5, 1e-14) {
		t.Errorf("log-density %v, gradient %v", lp, g)
	}
}

func TestWithInit(t *testing.T) {
	m := mustModel(t, eightSchools)
	eta := []float64{0, 0.5, -0.5, 1, -1, 0, 0.2, 0.1}
	mi, err := m.WithInit(map[string][]float64{"mu": {1}, "tau": {2}, "eta": eta})
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, mi.Dim())
	if err := mi.Init(nil, u); err != nil {
		t.Fatal(err)
	}
	if u[0] != 1 || !near(u[1], math.Log(2), 1e-15) || !slices.Equal(u[2:], eta) {
		t.Errorf("Init %v", u)
	}
	for _, bad := range []struct {
		name string
		vals map[string][]float64
		ok   func(error) bool
	}{
		{"violation", map[string][]float64{"mu": {1}, "tau": {-2}, "eta": eta}, func(err error) bool { return errors.Is(err, ErrConstraint) }},
		{"unknown", map[string][]float64{"mu": {1}, "tau": {2}, "eta": eta, "nu": {1}}, func(err error) bool { return strings.Contains(err.Error(), "unknown parameter") }},
		{"missing", map[string][]float64{"mu": {1}, "eta": eta}, func(err error) bool { return strings.Contains(err.Error(), "no value") }},
		{"length", map[string][]float64{"mu": {1}, "tau": {2}, "eta": eta[:3]}, func(err error) bool { return strings.Contains(err.Error(), "values, want") }},
	} {
		if _, err := m.WithInit(bad.vals); err == nil || !bad.ok(err) {
			t.Errorf("%s: error %v", bad.name, err)
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder)
	}{
		{"duplicate-name", func(b *Builder) { b.Real("x"); b.Positive("x") }},
		{"data-name-clash", func(b *Builder) { b.Real("x"); b.Data("x", []float64{1}) }},
		{"empty-name", func(b *Builder) { b.Real("") }},
		{"dotted-name", func(b *Builder) { b.Real("a.b") }},
		{"bad-shape", func(b *Builder) { b.Real("x", 0) }},
		{"nan-data", func(b *Builder) { b.Real("x"); b.Data("y", []float64{1, math.NaN()}) }},
		{"inf-data", func(b *Builder) { b.Real("x"); b.Data("y", []float64{math.Inf(1)}) }},
		{"data-shape", func(b *Builder) { b.Real("x"); b.Data("y", []float64{1, 2, 3}, 2, 2) }},
		{"nil-data-matrix", func(b *Builder) { b.Real("x"); b.DataMatrix("y", nil) }},
		{"bound-shape", func(b *Builder) { b.Lower("x", []float64{1, 2, 3}, 2) }},
		{"empty-interval", func(b *Builder) { b.Interval("x", 1.0, 1.0) }},
		{"bound-type", func(b *Builder) { b.Lower("x", "zero") }},
		{"foreign-bound", func(b *Builder) { b.Lower("x", NewBuilder().Real("y")) }},
		{"foreign-term", func(b *Builder) { b.Real("x"); b.AddLogDensity(NewBuilder().Real("y")) }},
		{"short-simplex", func(b *Builder) { b.Simplex("x", 1) }},
		{"short-ordered", func(b *Builder) { b.Ordered("x", 1) }},
		{"wide-triangular", func(b *Builder) { b.CholeskyFactorCov("x", 2, 3) }},
		{"no-parameters", func(b *Builder) {}},
		{"report-clash", func(b *Builder) { x := b.Real("x"); b.Report("x", x) }},
		{"must", func(b *Builder) { x := b.Real("x", 2); b.Check(gorgonia.Add(x, b.Real("y", 3))) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}

func TestModelInputErrors(t *testing.T) {
	m := mustModel(t, eightSchools)
	if _, err := m.LogDensity(make([]float64, 3)); err == nil {
		t.Error("short point accepted by LogDensity")
	}
	if _, err := m.LogDensityGrad(make([]float64, 10), make([]float64, 9)); err == nil {
		t.Error("short gradient accepted")
	}
	if err := m.Constrain(make([]float64, 10), make([]float64, 3)); err == nil {
		t.Error("short Constrain destination accepted")
	}
	if err := m.Unconstrain(make([]float64, 3), make([]float64, 10)); err == nil {
		t.Error("short Unconstrain input accepted")
	}
	if err := m.Init(nil, make([]float64, 10)); err == nil {
		t.Error("nil rng accepted")
	}
	// A point where the density is not finite is an error, not a panic.
	u := make([]float64, 10)
	u[1] = -800 // tau = exp(−800) = 0: theta = mu, fine; but the HalfCauchy term is finite too
	u[0] = math.Inf(1)
	if _, err := m.LogDensity(u); err == nil {
		t.Error("infinite input accepted")
	}
}

func TestCloneConcurrent(t *testing.T) {
	m := mustModel(t, eightSchools)
	u := make([]float64, m.Dim())
	for i := range u {
		u[i] = 0.1 * float64(i)
	}
	want, err := m.LogDensity(u)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mc := m.Clone()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			v := make([]float64, mc.Dim())
			g := make([]float64, mc.Dim())
			x := make([]float64, len(mc.ParamNames()))
			for range 200 {
				if err := mc.Init(rng, v); err != nil {
					errs[c] = err
					return
				}
				if _, err := mc.LogDensityGrad(v, g); err != nil {
					errs[c] = err
					return
				}
				if err := mc.Constrain(v, x); err != nil {
					errs[c] = err
					return
				}
			}
			got, err := mc.LogDensity(u)
			if err == nil && got != want {
				err = errors.New("clone disagrees")
			}
			errs[c] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestLogDensityGradDoesNotAllocate(t *testing.T) {
	b := NewBuilder()
	eightSchools(b)
	b.Sample(Mixture{Weights: b.Simplex("w", 2), Components: []Distribution{
		Normal{Mu: 0, Sigma: 1}, StudentT{Nu: 3, Mu: 0, Sigma: 2},
	}}, b.Data("z", []float64{0.5, -1, 3}))
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	x := make([]float64, len(m.ParamNames()))
	if a := testing.AllocsPerRun(100, func() { _, _ = m.LogDensityGrad(u, g) }); a != 0 {
		t.Errorf("LogDensityGrad: %v allocations per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = m.Constrain(u, x) }); a != 0 {
		t.Errorf("Constrain: %v allocations per call", a)
	}
}

func BenchmarkEightSchools(b *testing.B) {
	benchmarkGradient(b, eightSchools)
}

func TestConstantObservationsAndAdd(t *testing.T) {
	m, _ := buildBoth(t, func(b *Builder) {
		eta := b.Real("eta")
		b.Sample(PoissonLog{LogRate: eta}, []float64{1, 4})
		x := b.Real("x", 2)
		b.Sample(Normal{Mu: x, Sigma: 2}, []float64{0.5, -1})
		b.AddLogDensity(b.Check(gorgonia.Neg(b.Check(gorgonia.Abs(x))))) // a vector term is summed: Laplace prior
	})
	u := []float64{0.3, 1, -2}
	want := distuv.Poisson{Lambda: math.Exp(0.3)}.LogProb(1) + distuv.Poisson{Lambda: math.Exp(0.3)}.LogProb(4) +
		distuv.Normal{Mu: 1, Sigma: 2}.LogProb(0.5) + distuv.Normal{Mu: -2, Sigma: 2}.LogProb(-1) - 3
	checkLogDensity(t, "compiled", m, u, want, 1e-13)
	checkGradient(t, m, u, 1e-6)
}

func TestConstantTermsAreKept(t *testing.T) {
	// Terms without parameters matter when models are compared, so they
	// are added as constants, not dropped.
	m, _ := buildBoth(t, func(b *Builder) {
		x := b.Real("x")
		b.Sample(Normal{Mu: 0, Sigma: 1}, x)
		b.Sample(Normal{Mu: 0, Sigma: 1}, 2.0)
		b.Sample(Gamma{Shape: 2, Rate: 3}, b.Data("z", []float64{0.5, 1.5}))
		b.Sample(Mixture{Weights: []float64{0.4, 0.6}, Components: []Distribution{
			Normal{Mu: 0, Sigma: 1}, Normal{Mu: 1, Sigma: 2},
		}}, b.Data("w", []float64{0.3}))
	})
	want := distuv.UnitNormal.LogProb(0.7) + distuv.UnitNormal.LogProb(2) +
		distuv.Gamma{Alpha: 2, Beta: 3}.LogProb(0.5) + distuv.Gamma{Alpha: 2, Beta: 3}.LogProb(1.5) +
		math.Log(0.4*distuv.UnitNormal.Prob(0.3)+0.6*distuv.Normal{Mu: 1, Sigma: 2}.Prob(0.3))
	checkLogDensity(t, "compiled", m, []float64{0.7}, want, 1e-13)
}

func TestConcurrentBuilds(t *testing.T) {
	// Multi-chain runners may build one model per goroutine.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := NewBuilder()
			eightSchools(b)
			m, err := b.Model()
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := m.LogDensity(make([]float64, m.Dim())); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

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
	_, corr4 := triangularLayout(4, 4)
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
		{"cholesky-factor-corr-2", func(b *Builder) { b.CholeskyFactorCorr("x", 2) }, []int{2}},
		{"cholesky-factor-corr-4", func(b *Builder) { b.CholeskyFactorCorr("x", 4) }, corr4},
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
