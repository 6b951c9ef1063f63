package kernels

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
)

// LogPriorLik and SamplePrior make conjugate a TemperedModel.
func (c *conjugate) LogPriorLik(x, gp, gl []float64) (float64, float64, error) {
	if len(x) != 1 {
		return 0, 0, ErrDimension
	}
	a, ga := c.logPrior(x[0])
	b, gb := c.logLik(x[0])
	if gp != nil {
		gp[0], gl[0] = ga, gb
	}
	return a, b, nil
}

func (c *conjugate) SamplePrior(rng *rand.Rand, x []float64) error {
	x[0] = c.m0 + c.s0*rng.NormFloat64()
	return nil
}

// linreg is y = Xβ + ε, ε ~ N(0, σ²I), β ~ N(0, τ²I): the posterior is
// normal and the evidence is N(y; 0, σ²I + τ²XXᵀ).
type linreg struct {
	x          *mat.Dense
	xs         []float64 // x row-major, for a fast likelihood
	y          []float64
	sigma, tau float64
	r          []float64
}

func newLinreg() *linreg {
	rng := rand.New(rand.NewPCG(4, 4))
	n, d := 30, 3
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	beta := []float64{1, -2, 0.5}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
			y[i] += x.At(i, j) * beta[j]
		}
		y[i] += 1.5 * rng.NormFloat64()
	}
	return &linreg{x: x, xs: x.RawMatrix().Data, y: y, sigma: 1.5, tau: 2, r: make([]float64, n)}
}

func (l *linreg) clone() *linreg { c := *l; c.r = make([]float64, len(l.y)); return &c }

func (l *linreg) Dim() int { return 3 }

func (l *linreg) LogPriorLik(b, gp, gl []float64) (float64, float64, error) {
	if len(b) != 3 {
		return 0, 0, ErrDimension
	}
	n, d := l.x.Dims()
	lp := -0.5 * float64(d) * math.Log(2*math.Pi*l.tau*l.tau)
	for j, v := range b {
		lp -= 0.5 * v * v / (l.tau * l.tau)
		if gp != nil {
			gp[j] = -v / (l.tau * l.tau)
			gl[j] = 0
		}
	}
	ll := -0.5 * float64(n) * math.Log(2*math.Pi*l.sigma*l.sigma)
	for i := 0; i < n; i++ {
		row := l.xs[i*d : (i+1)*d]
		r := l.y[i]
		for j, xij := range row {
			r -= xij * b[j]
		}
		ll -= 0.5 * r * r / (l.sigma * l.sigma)
		if gl != nil {
			for j, xij := range row {
				gl[j] += r * xij / (l.sigma * l.sigma)
			}
		}
	}
	return lp, ll, nil
}

func (l *linreg) SamplePrior(rng *rand.Rand, b []float64) error {
	for j := range b {
		b[j] = l.tau * rng.NormFloat64()
	}
	return nil
}

func (l *linreg) posteriorMean() []float64 {
	_, d := l.x.Dims()
	var a mat.SymDense
	a.SymOuterK(1/(l.sigma*l.sigma), l.x.T())
	for j := 0; j < d; j++ {
		a.SetSym(j, j, a.At(j, j)+1/(l.tau*l.tau))
	}
	var xty mat.VecDense
	xty.MulVec(l.x.T(), mat.NewVecDense(len(l.y), l.y))
	xty.ScaleVec(1/(l.sigma*l.sigma), &xty)
	var ch mat.Cholesky
	ch.Factorize(&a)
	var m mat.VecDense
	if err := ch.SolveVecTo(&m, &xty); err != nil {
		panic(err)
	}
	return m.RawVector().Data
}

func (l *linreg) logEvidence() float64 {
	n, _ := l.x.Dims()
	var c mat.SymDense
	c.SymOuterK(l.tau*l.tau, l.x)
	for i := 0; i < n; i++ {
		c.SetSym(i, i, c.At(i, i)+l.sigma*l.sigma)
	}
	var ch mat.Cholesky
	ch.Factorize(&c)
	y := mat.NewVecDense(n, l.y)
	var sol mat.VecDense
	if err := ch.SolveVecTo(&sol, y); err != nil {
		panic(err)
	}
	return -0.5 * (float64(n)*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(y, &sol))
}

// checkAcrossSeeds asserts that the mean of independent replicate
// estimates agrees with the truth within 4 standard errors estimated from
// their spread.
func checkAcrossSeeds(t *testing.T, name string, est []float64, truth float64) {
	t.Helper()
	m, sd := stat.MeanStdDev(est, nil)
	se := sd / math.Sqrt(float64(len(est)))
	if d := math.Abs(m - truth); !(d < 4*se) {
		t.Errorf("%s: mean over %d seeds %.5g, want %.5g (|diff| %.3g, 4·SE %.3g)", name, len(est), m, truth, d, 4*se)
	} else {
		t.Logf("%s: mean over %d seeds %.5g, truth %.5g, SE %.3g", name, len(est), m, truth, se)
	}
}

func weightedMean(r *SMCResult, j int) float64 {
	m := 0.0
	for i, lw := range r.LogWeights {
		m += math.Exp(lw) * r.Particle(i)[j]
	}
	return m
}

func TestSMCConjugateEvidence(t *testing.T) {
	c := newConjugate()
	truthZ := c.logEvidence()
	postMean, postVar := c.posterior()
	n := checks.Size(1000, 400)
	cases := []struct {
		name      string
		move      SMCMove
		threshold float64
	}{
		{"eigen-rwm", SMCEigenRWM{}, 0},
		{"rwm", SMCRWM{}, 0},
		{"nuts", SMCNUTS{}, 0},
		// Resampling only when the ESS halves exercises weighted moves
		// and the conditional ESS.
		{"eigen-rwm/threshold0.5", SMCEigenRWM{}, 0.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var zs, means, vars []float64
			resampled := 0
			for seed := uint64(1); seed <= 8; seed++ {
				r, err := RunSMC(context.Background(), func(int) (TemperedModel, error) { return c, nil },
					&SMCSettings{Particles: n, Seed: seed, Move: tc.move, Workers: 1, ResampleThreshold: tc.threshold})
				if err != nil {
					t.Fatal(err)
				}
				if r.Temperatures[len(r.Temperatures)-1] != 1 {
					t.Fatalf("final temperature %v", r.Temperatures[len(r.Temperatures)-1])
				}
				for _, rs := range r.Resampled {
					if rs {
						resampled++
					}
				}
				zs = append(zs, r.LogZ)
				m := weightedMean(r, 0)
				means = append(means, m)
				v := 0.0
				for i, lw := range r.LogWeights {
					d := r.Particle(i)[0] - postMean
					v += math.Exp(lw) * d * d
				}
				vars = append(vars, v)
			}
			checkAcrossSeeds(t, "log Z", zs, truthZ)
			checkAcrossSeeds(t, "posterior mean", means, postMean)
			checkAcrossSeeds(t, "posterior variance", vars, postVar)
			t.Logf("%d resampling steps over 8 runs", resampled)
		})
	}
}

func TestSMCLinearRegression(t *testing.T) {
	l := newLinreg()
	truthZ := l.logEvidence()
	pm := l.posteriorMean()
	n := checks.Size(500, 250)
	for _, mv := range []SMCMove{SMCEigenRWM{}, SMCNUTS{}} {
		t.Run(mv.String(), func(t *testing.T) {
			var zs []float64
			means := make([][]float64, 3)
			for seed := uint64(1); seed <= 8; seed++ {
				r, err := RunSMC(context.Background(), func(int) (TemperedModel, error) { return l.clone(), nil },
					&SMCSettings{Particles: n, Seed: seed, Move: mv, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				zs = append(zs, r.LogZ)
				for j := range means {
					means[j] = append(means[j], weightedMean(r, j))
				}
				if seed == 1 {
					t.Logf("%d temperatures, moves %v, acceptance %.2f", len(r.Temperatures), r.Moves, r.Acceptance)
				}
			}
			checkAcrossSeeds(t, "log Z", zs, truthZ)
			for j := range means {
				checkAcrossSeeds(t, "posterior mean", means[j], pm[j])
			}
		})
	}
}

func TestSMCDeterministicAcrossWorkers(t *testing.T) {
	l := newLinreg()
	run := func(workers int) *SMCResult {
		r, err := RunSMC(context.Background(), func(int) (TemperedModel, error) { return l.clone(), nil },
			&SMCSettings{Particles: 200, Seed: 9, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(1), run(3)
	if a.LogZ != b.LogZ {
		t.Fatalf("log Z %v with 1 worker, %v with 3", a.LogZ, b.LogZ)
	}
	for i := range a.Particles {
		if a.Particles[i] != b.Particles[i] {
			t.Fatalf("particle value %d differs", i)
		}
	}
}

func TestSMCErrors(t *testing.T) {
	c := newConjugate()
	f := func(int) (TemperedModel, error) { return c, nil }
	for _, s := range []SMCSettings{
		{Particles: 1},
		{ESSFraction: 1.5},
		{PilotMoves: 5, MaxMoves: 2},
		{MoveTolerance: 2},
		{Temperatures: []float64{}},
		{Temperatures: []float64{0.5}},
		{Temperatures: []float64{0, 0.5, 0.4, 1}},
		{Temperatures: []float64{0.5, math.NaN(), 1}},
	} {
		if _, err := RunSMC(context.Background(), f, &s); err == nil {
			t.Errorf("settings %+v accepted", s)
		}
	}
	if _, err := RunSMC(context.Background(), nil, nil); err == nil {
		t.Error("nil factory accepted")
	}
	// A fixed schedule is followed, with or without its leading 0.
	for _, sched := range [][]float64{{0.01, 0.1, 1}, {0, 0.01, 0.1, 1}} {
		r, err := RunSMC(context.Background(), f, &SMCSettings{Particles: 50, Temperatures: sched})
		if err != nil {
			t.Fatal(err)
		}
		if want := []float64{0, 0.01, 0.1, 1}; !slices.Equal(r.Temperatures, want) {
			t.Errorf("schedule %v: temperatures %v, want %v", sched, r.Temperatures, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunSMC(ctx, f, nil); err == nil {
		t.Error("cancelled context not reported")
	}
}

// conjPart exposes the prior or the likelihood of conjugate as a Target.
type conjPart struct {
	c   *conjugate
	lik bool
}

func (p conjPart) Dim() int { return 1 }

func (p conjPart) LogDensityGrad(x, g []float64) (float64, error) {
	var v, d float64
	if p.lik {
		v, d = p.c.logLik(x[0])
	} else {
		v, d = p.c.logPrior(x[0])
	}
	g[0] = d
	return v, nil
}

func TestSplitModel(t *testing.T) {
	c := newConjugate()
	factory := func(int) (TemperedModel, error) {
		return NewSplitModel(conjPart{c, false}, conjPart{c, true}, c.SamplePrior)
	}
	a, err := RunSMC(context.Background(), factory, &SMCSettings{Particles: 300, Seed: 2, Move: SMCNUTS{}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunSMC(context.Background(), func(int) (TemperedModel, error) { return c, nil },
		&SMCSettings{Particles: 300, Seed: 2, Move: SMCNUTS{}})
	if err != nil {
		t.Fatal(err)
	}
	if a.LogZ != b.LogZ {
		t.Errorf("SplitModel log Z %v, direct model %v", a.LogZ, b.LogZ)
	}
	if _, err := NewSplitModel(conjPart{c, false}, failing{n: 2}, c.SamplePrior); err == nil {
		t.Error("mismatched dimensions accepted")
	}
}
