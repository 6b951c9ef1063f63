package ppl

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
)

// A TemperedModel is a kernels.TemperedModel.
var _ kernels.TemperedModel = (*TemperedModel)(nil)

// checkParts checks at u that logPrior + logLik is the model's log-density
// and that both parts' gradients match finite differences.
func checkParts(t *testing.T, m *GraphModel, tm *TemperedModel, u []float64) {
	t.Helper()
	n := m.Dim()
	gp, gl := make([]float64, n), make([]float64, n)
	lp, ll, err := tm.LogPriorLik(u, gp, gl)
	if err != nil {
		t.Fatal(err)
	}
	lp0, ll0, err := tm.LogPriorLik(u, nil, nil)
	if err != nil || !near(lp0, lp, 1e-12) || !near(ll0, ll, 1e-12) {
		t.Errorf("values without gradients %v, %v (%v); with %v, %v", lp0, ll0, err, lp, ll)
	}
	want, err := m.LogDensity(u)
	if err != nil || !near(lp+ll, want, 1e-10) {
		t.Errorf("logPrior + logLik = %v + %v = %v, model log-density %v (%v)", lp, ll, lp+ll, want, err)
	}
	for part, grad := range [][]float64{gp, gl} {
		f := func(x []float64) float64 {
			a, b, err := tm.LogPriorLik(x, nil, nil)
			if err != nil {
				return math.NaN()
			}
			return [2]float64{a, b}[part]
		}
		fdg := fd.Gradient(nil, f, u, &fd.Settings{Formula: fd.Central, Step: 1e-5})
		for i := range grad {
			if !near(grad[i], fdg[i], 1e-6) {
				t.Errorf("part %d: gradient[%d] = %.10g, finite differences %.10g", part, i, grad[i], fdg[i])
			}
		}
	}
}

// hierarchical is a model whose priors can all be drawn, one of them
// depending on other parameters, declared before them.
func hierarchical(b *Builder) {
	theta := b.Real("theta", 3)
	mu, tau := b.Real("mu"), b.Positive("tau")
	sigma := b.Positive("sigma")
	w := b.Interval("w", 0, 1)
	v := b.Interval("v", -1, 2, 2)
	b.Sample(Normal{Mu: mu, Sigma: tau}, theta)
	b.Sample(Normal{Mu: 0, Sigma: 5}, mu)
	b.Sample(HalfCauchy{Scale: 2.5}, tau)
	b.Sample(Gamma{Shape: 3, Rate: 2}, sigma)
	b.Sample(Beta{Alpha: 2, Beta: 3}, w)
	b.Sample(Uniform{Min: -1, Max: 2}, v)
	y := b.Data("y", []float64{1.5, -0.3, 2.2})
	b.Sample(Normal{Mu: theta, Sigma: sigma}, y)
	b.Sample(Normal{Mu: b.Check(gorgonia.Mul(w, gorgonia.NewConstant(3.0))), Sigma: 1}, 0.7)
	b.AddLogDensity(b.Check(gorgonia.Neg(b.Check(gorgonia.Sum(b.Check(gorgonia.Square(v)))))))
	gamma := b.Real("gamma", 2)
	b.Sample(MvNormal{Mu: []float64{1, -1}, Sigma: mat.NewSymDense(2, []float64{1, 0.5, 0.5, 2})}, gamma)
	r := b.Real("R", 3, 2) // rows ~ N(mu, LLᵀ): a node mean
	b.Sample(MvNormal{Mu: mu, L: mat.NewTriDense(2, mat.Lower, []float64{1, 0, 0.3, 0.7})}, r)
	b.Sample(Normal{Mu: b.Check(gorgonia.Sum(r)), Sigma: 3}, 0.4)
	s2 := b.Positive("s2") // eta ~ N(0, s2·I): a node covariance
	eta := b.Real("eta", 2)
	b.Sample(Gamma{Shape: 4, Rate: 2}, s2)
	b.Sample(MvNormal{Mu: 0, Sigma: b.Check(gorgonia.Mul(s2, b.Data("I", []float64{1, 0, 0, 1}, 2, 2)))}, eta)
}

// temperedForm returns the model that build adds to a new Builder and its
// tempered form, which must be the prior form when prior is set and the
// reference form otherwise.
func temperedForm(t *testing.T, build func(b *Builder), prior bool) (*GraphModel, *TemperedModel) {
	t.Helper()
	m := mustModel(t, build)
	return m, checkForm(t, m, prior)
}

// checkForm returns m's tempered form, which must be the prior form when
// prior is set and the reference form otherwise.
func checkForm(t *testing.T, m *GraphModel, prior bool) *TemperedModel {
	t.Helper()
	tm, err := m.Tempered()
	if err != nil {
		t.Fatal(err)
	}
	if tm.FromPrior() != prior {
		t.Fatalf("FromPrior %v, want %v (reason %q)", tm.FromPrior(), prior, tm.Reason())
	}
	return tm
}

func TestTemperedPriorForm(t *testing.T) {
	m, tm := temperedForm(t, hierarchical, true)
	if tm.Reason() != "" {
		t.Fatalf("prior form with a reason: %s", tm.Reason())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	u := make([]float64, m.Dim())
	for range 5 {
		if err := tm.SamplePrior(rng, u); err != nil {
			t.Fatal(err)
		}
		checkParts(t, m, tm, u)
	}
	// The model's own gradient is still right after the parts were
	// compiled on its graph.
	checkGradient(t, m, u, 1e-6)
}

// TestSamplePriorMoments checks the ancestral prior draws: the marginal
// means and variances of mu, tau's log-median-free quantities and theta −
// mu, all against their exact values within 4 standard errors.
func TestSamplePriorMoments(t *testing.T) {
	m, tm := temperedForm(t, hierarchical, true)
	cols := priorDraws(t, m, tm, rand.New(rand.NewPCG(3, 4)), func(_ int, _, c []float64, cols map[string][]float64) {
		// theta.1 − mu, scaled by tau, is N(0, 1).
		cols["z"] = append(cols["z"], (c[0]-c[3])/c[4])
	})
	checkMoments(t, cols, []moment{
		{"mu", 0, 25},
		{"z", 0, 1},
		{"sigma", 1.5, 0.75},
		{"w", 0.4, 0.04},
		{"v.2", 0.5, 0.75},
		{"gamma.1", 1, 1},
		{"gamma.2", -1, 2},
		{"R.3.2", 0, 25 + 0.09 + 0.49},
		{"eta.2", 0, 2},
	})
	// HalfCauchy(2.5): the median of tau is 2.5.
	const n = priorDrawCount
	below := 0
	for _, x := range cols["tau"] {
		if x < 2.5 {
			below++
		}
	}
	if p := float64(below) / n; math.Abs(p-0.5) > 4*math.Sqrt(0.25/n) {
		t.Errorf("P(tau < 2.5) = %.4f, want 0.5", p)
	}
}

func TestTemperedReferenceForm(t *testing.T) {
	cases := []struct {
		name, reason string
		build        func(b *Builder)
	}{
		{"flat", `"x" has no prior`, func(b *Builder) {
			x := b.Real("x")
			b.Sample(Normal{Mu: x, Sigma: 1}, 0.5)
		}},
		{"expression", "expression of parameters", func(b *Builder) {
			x := b.Real("x", 2)
			b.Sample(Normal{Mu: 0, Sigma: 1}, b.Check(gorgonia.Mul(x, gorgonia.NewConstant(2.0))))
		}},
		{"support", "support", func(b *Builder) {
			x := b.Real("x")
			b.Sample(Gamma{Shape: 2, Rate: 1}, x)
		}},
		{"shifted", "support", func(b *Builder) {
			x := b.Lower("x", 1.0)
			b.Sample(Exponential{Rate: 1}, x)
		}},
		{"twice", "two Sample", func(b *Builder) {
			x := b.Real("x")
			b.Sample(Normal{Mu: 0, Sigma: 1}, x)
			b.Sample(Normal{Mu: 0, Sigma: 2}, x)
		}},
		{"cycle", "cycle", func(b *Builder) {
			x, y := b.Real("x"), b.Positive("y")
			b.Sample(Normal{Mu: 0, Sigma: y}, x)
			b.Sample(LogNormal{Mu: x, Sigma: 1}, y)
		}},
		{"mixture", "no sampler", func(b *Builder) {
			x := b.Real("x")
			b.Sample(Mixture{Weights: []float64{0.5, 0.5}, Components: []Distribution{Normal{Mu: 0, Sigma: 1}, Normal{Mu: 0, Sigma: 3}}}, x)
		}},
		{"ordered", "support", func(b *Builder) {
			x := b.Ordered("x", 3)
			b.Sample(MvNormal{Mu: []float64{0, 0, 0}, Sigma: mat.NewDiagDense(3, []float64{1, 1, 1})}, x)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, tm := temperedForm(t, c.build, false)
			if !strings.Contains(tm.Reason(), c.reason) {
				t.Fatalf("FromPrior %v, reason %q; want the reference form because of %q", tm.FromPrior(), tm.Reason(), c.reason)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			u := make([]float64, m.Dim())
			if err := tm.Clone().SamplePrior(rng, u); err != nil {
				t.Fatal(err)
			}
			checkParts(t, m, tm, u)
		})
	}
	m := mustModel(t, hierarchical)
	n := m.Dim()
	if _, err := m.TemperedReference(make([]float64, n-1), nil); err == nil {
		t.Error("a mean of the wrong length was accepted")
	}
	scale := make([]float64, n)
	if _, err := m.TemperedReference(nil, scale); err == nil {
		t.Error("a zero scale was accepted")
	}
	for i := range scale {
		scale[i] = 0.5 + 0.1*float64(i)
	}
	tm, err := m.TemperedReference(nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, n)
	if err := tm.SamplePrior(rand.New(rand.NewPCG(7, 8)), u); err != nil {
		t.Fatal(err)
	}
	checkParts(t, m, tm, u)
}

// linearRegression is y = Xβ + ε, ε ~ N(0, σ²I) with σ known and β ~ N(0,
// τ²I), whose evidence is the N(0, σ²I + τ²XXᵀ) density of y. With
// priorAsTerm the prior is written with AddLogDensity, which forces the
// reference form.
type linearRegression struct {
	x          *mat.Dense
	y          []float64
	sigma, tau float64
}

func newLinearRegression(n, p int, seed uint64) *linearRegression {
	rng := rand.New(rand.NewPCG(seed, 99))
	l := &linearRegression{x: mat.NewDense(n, p, nil), y: make([]float64, n), sigma: 0.7, tau: 1.5}
	beta := []float64{1, -0.5, 0.25, 2}
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			l.x.Set(i, j, rng.NormFloat64())
			l.y[i] += l.x.At(i, j) * beta[j%len(beta)]
		}
		l.y[i] += l.sigma * rng.NormFloat64()
	}
	return l
}

func (l *linearRegression) logEvidence(t *testing.T) float64 {
	n, _ := l.x.Dims()
	var cov mat.SymDense
	cov.SymOuterK(l.tau*l.tau, l.x)
	for i := 0; i < n; i++ {
		cov.SetSym(i, i, cov.At(i, i)+l.sigma*l.sigma)
	}
	return gaussianLogProb(t, &cov, l.y)
}

// gaussianLogProb is the N(0, cov) log-density of y.
func gaussianLogProb(t *testing.T, cov *mat.SymDense, y []float64) float64 {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		t.Fatal("covariance is not positive definite")
	}
	z := mat.NewVecDense(len(y), nil)
	if err := ch.SolveVecTo(z, mat.NewVecDense(len(y), y)); err != nil {
		t.Fatal(err)
	}
	return -0.5*mat.Dot(z, mat.NewVecDense(len(y), y)) - 0.5*ch.LogDet() - float64(len(y))*0.5*math.Log(2*math.Pi)
}

func (l *linearRegression) model(t *testing.T, priorAsTerm bool) *GraphModel {
	_, p := l.x.Dims()
	b := NewBuilder()
	beta := b.Real("beta", p)
	if priorAsTerm {
		lp, err := Normal{Mu: 0, Sigma: l.tau}.LogProb(beta)
		b.AddLogDensity(b.Check(lp, err))
	} else {
		b.Sample(Normal{Mu: 0, Sigma: l.tau}, beta)
	}
	b.Sample(Normal{Mu: b.Check(gorgonia.Mul(b.DataMatrix("X", l.x), beta)), Sigma: l.sigma}, b.Data("y", l.y))
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkEvidence runs SMC with several seeds and checks that the mean log Z
// is within 3 standard errors of the exact log evidence.
func checkEvidence(t *testing.T, tm *TemperedModel, exact float64) {
	t.Helper()
	runs, particles := checks.Size(6, 4), checks.Size(400, 200)
	logZ := make([]float64, runs)
	for r := range logZ {
		res, err := kernels.RunSMC(context.Background(), func(int) (kernels.TemperedModel, error) { return tm.Clone(), nil },
			&kernels.SMCSettings{Particles: particles, Seed: uint64(r + 1), Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		logZ[r] = res.LogZ
	}
	mean, sd := stat.MeanStdDev(logZ, nil)
	se := sd / math.Sqrt(float64(runs))
	t.Logf("log Z %.4f ± %.4f over %d runs (%v), exact %.4f", mean, se, runs, logZ, exact)
	if math.Abs(mean-exact) > 3*se {
		t.Errorf("log Z %.4f ± %.4f, exact %.4f: %.1f standard errors off", mean, se, exact, math.Abs(mean-exact)/se)
	}
}

func TestTemperedEvidence(t *testing.T) {
	l := newLinearRegression(20, 3, 1)
	exact := l.logEvidence(t)
	t.Run("prior", func(t *testing.T) {
		checkEvidence(t, checkForm(t, l.model(t, false), true), exact)
	})
	t.Run("reference", func(t *testing.T) {
		// A prior written with AddLogDensity has no prior form.
		checkEvidence(t, checkForm(t, l.model(t, true), false), exact)
	})
	t.Run("normal-inverse-gamma", func(t *testing.T) {
		// σ² ~ InverseGamma(a, b), β | σ² ~ N(0, g·σ²·I), y ~ N(Xβ, σ²I):
		// y ~ t_2a(0, (b/a)(I + g·XXᵀ)). β's prior depends on σ², declared
		// after it.
		const a, bb, g = 3.0, 2.0, 4.0
		n, p := 12, 2
		x := l.x.Slice(0, n, 0, p).(*mat.Dense)
		y := l.y[:n]
		b := NewBuilder()
		beta := b.Real("beta", p)
		sigma2 := b.Positive("sigma2")
		b.Sample(InverseGamma{Shape: a, Scale: bb}, sigma2)
		sigma := b.Check(gorgonia.Sqrt(sigma2))
		b.Sample(Normal{Mu: 0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(math.Sqrt(g))))}, beta)
		b.Sample(Normal{Mu: b.Check(gorgonia.Mul(b.DataMatrix("X", x), beta)), Sigma: sigma}, b.Data("y", y))
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		tm := checkForm(t, m, true)
		var cov mat.SymDense
		cov.SymOuterK(bb/a*g, x)
		for i := 0; i < n; i++ {
			cov.SetSym(i, i, cov.At(i, i)+bb/a)
		}
		var ch mat.Cholesky
		if !ch.Factorize(&cov) {
			t.Fatal("covariance is not positive definite")
		}
		z := mat.NewVecDense(n, nil)
		if err := ch.SolveVecTo(z, mat.NewVecDense(n, y)); err != nil {
			t.Fatal(err)
		}
		nu, fn := 2*a, float64(n)
		lg1, _ := math.Lgamma((nu + fn) / 2)
		lg2, _ := math.Lgamma(nu / 2)
		exact := lg1 - lg2 - fn/2*math.Log(nu*math.Pi) - 0.5*ch.LogDet() - (nu+fn)/2*math.Log1p(mat.Dot(z, mat.NewVecDense(n, y))/nu)
		checkEvidence(t, tm, exact)
	})
	t.Run("hierarchical", func(t *testing.T) {
		// mu ~ N(0, 3²), theta_i ~ N(mu, 1), y_i ~ N(theta_i, 1): y ~
		// N(0, 2I + 9·11ᵀ). theta is declared first, so the prior is drawn
		// out of declaration order.
		y := []float64{0.8, 2.1, -0.4, 1.7}
		b := NewBuilder()
		theta := b.Real("theta", len(y))
		mu := b.Real("mu")
		b.Sample(Normal{Mu: mu, Sigma: 1}, theta)
		b.Sample(Normal{Mu: 0, Sigma: 3}, mu)
		b.Sample(Normal{Mu: theta, Sigma: 1}, y)
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		tm := checkForm(t, m, true)
		cov := mat.NewSymDense(len(y), nil)
		for i := range y {
			for j := range y {
				cov.SetSym(i, j, 9)
			}
			cov.SetSym(i, i, 11)
		}
		checkEvidence(t, tm, gaussianLogProb(t, cov, y))
	})
}

func TestLogPriorLikDoesNotAllocate(t *testing.T) {
	l := newLinearRegression(20, 3, 1)
	for _, ref := range []bool{false, true} {
		tm, err := l.model(t, ref).Tempered()
		if err != nil {
			t.Fatal(err)
		}
		x, gp, gl := []float64{0.1, -0.2, 0.3}, make([]float64, 3), make([]float64, 3)
		if a := testing.AllocsPerRun(50, func() { _, _, _ = tm.LogPriorLik(x, gp, gl) }); a != 0 {
			t.Errorf("reference form %v: LogPriorLik with gradients: %v allocations per call", ref, a)
		}
		if a := testing.AllocsPerRun(50, func() { _, _, _ = tm.LogPriorLik(x, nil, nil) }); a != 0 {
			t.Errorf("reference form %v: LogPriorLik: %v allocations per call", ref, a)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		if a := testing.AllocsPerRun(50, func() { _ = tm.SamplePrior(rng, x) }); a != 0 {
			t.Errorf("reference form %v: SamplePrior: %v allocations per call", ref, a)
		}
	}
}
