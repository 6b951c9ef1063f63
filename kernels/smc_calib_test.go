package kernels

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// signFlip is a known-evidence model built to be as hard for SMC as the
// factor experiment's: 20 parameters, of which 4 are log-precisions with
// the factor model's heavy-tailed prior (variance IG(1.1, 0.05)) and 16 a
// regression vector whose likelihood is a two-component mixture in ±θ,
//
//	λ_j ~ Gamma(1.1, rate 0.05), z_jm ~ N(0, 1/λ_j)         (j < 4, m < nz)
//	θ ~ N(0, τ²I),  y ~ w·N(Xθ, σ²I) + (1 − w)·N(−Xθ, σ²I),
//
// so that the posterior has two separated sign modes of weights w and
// 1 − w, which SMC's moves cannot cross and whose weights tempering sets.
// The parameter is (log λ, θ); the prior part carries the log-Jacobian of
// λ = exp(u). The prior of θ is symmetric, so both mixture components have
// the evidence of the linear model and Z = Z_lin · Π_j Z_j exactly.
type signFlip struct {
	nl         int // log-precisions
	z          [][]float64
	x          []float64 // m×p row-major
	y          []float64
	m, p       int
	tau, sigma float64
	w          float64
	a, b       float64 // Gamma shape and rate of λ
	r          []float64
}

func newSignFlip() *signFlip {
	rng := rand.New(rand.NewPCG(26, 26))
	s := &signFlip{nl: 4, m: 40, p: 16, tau: 1, sigma: 0.5, w: 0.75, a: 1.1, b: 0.05}
	for j := 0; j < s.nl; j++ {
		sd := 0.3 * float64(j+1)
		zs := make([]float64, 25)
		for i := range zs {
			zs[i] = sd * rng.NormFloat64()
		}
		s.z = append(s.z, zs)
	}
	theta := make([]float64, s.p)
	for j := range theta {
		theta[j] = 0.6 * rng.NormFloat64()
	}
	s.x = make([]float64, s.m*s.p)
	s.y = make([]float64, s.m)
	for i := 0; i < s.m; i++ {
		for j := 0; j < s.p; j++ {
			// Correlated columns: a shared factor per row.
			s.x[i*s.p+j] = rng.NormFloat64()
		}
		c := rng.NormFloat64()
		for j := 0; j < s.p; j++ {
			s.x[i*s.p+j] += 0.7 * c
			s.y[i] += s.x[i*s.p+j] * theta[j]
		}
		s.y[i] += s.sigma * rng.NormFloat64()
	}
	s.r = make([]float64, s.m)
	return s
}

func (s *signFlip) clone() *signFlip { c := *s; c.r = make([]float64, s.m); return &c }

func (s *signFlip) Dim() int { return s.nl + s.p }

func (s *signFlip) LogPriorLik(u, gp, gl []float64) (float64, float64, error) {
	if len(u) != s.Dim() {
		return 0, 0, ErrDimension
	}
	lga, _ := math.Lgamma(s.a)
	var lp, ll float64
	for j := 0; j < s.nl; j++ {
		lam := math.Exp(u[j])
		// Gamma(a, b) density of λ times the Jacobian dλ/du = λ.
		lp += s.a*math.Log(s.b) - lga + s.a*u[j] - s.b*lam
		ss := 0.0
		for _, v := range s.z[j] {
			ss += v * v
		}
		nz := float64(len(s.z[j]))
		ll += 0.5*nz*(u[j]-math.Log(2*math.Pi)) - 0.5*lam*ss
		if gp != nil {
			gp[j] = s.a - s.b*lam
			gl[j] = 0.5*nz - 0.5*lam*ss
		}
	}
	th := u[s.nl:]
	for j, v := range th {
		lp += -0.5*v*v/(s.tau*s.tau) - 0.5*math.Log(2*math.Pi*s.tau*s.tau)
		if gp != nil {
			gp[s.nl+j] = -v / (s.tau * s.tau)
			gl[s.nl+j] = 0
		}
	}
	// Squared residuals of y against +Xθ and −Xθ.
	var sp, sm float64
	for i := 0; i < s.m; i++ {
		f := 0.0
		for j, v := range th {
			f += s.x[i*s.p+j] * v
		}
		s.r[i] = f
		sp += (s.y[i] - f) * (s.y[i] - f)
		sm += (s.y[i] + f) * (s.y[i] + f)
	}
	s2 := s.sigma * s.sigma
	lc := -0.5 * float64(s.m) * math.Log(2*math.Pi*s2)
	l1 := math.Log(s.w) - 0.5*sp/s2
	l2 := math.Log(1-s.w) - 0.5*sm/s2
	top := math.Max(l1, l2)
	ll += lc + top + math.Log(math.Exp(l1-top)+math.Exp(l2-top))
	if gl != nil {
		r1 := 1 / (1 + math.Exp(l2-l1))
		r2 := 1 - r1
		for j := range th {
			g := 0.0
			for i := 0; i < s.m; i++ {
				xij := s.x[i*s.p+j]
				g += r1*(s.y[i]-s.r[i])*xij/s2 - r2*(s.y[i]+s.r[i])*xij/s2
			}
			gl[s.nl+j] = g
		}
	}
	return lp, ll, nil
}

func (s *signFlip) SamplePrior(rng *rand.Rand, u []float64) error {
	g := distuv.Gamma{Alpha: s.a, Beta: s.b, Src: rng}
	for j := 0; j < s.nl; j++ {
		u[j] = math.Log(max(g.Rand(), 1e-300))
	}
	for j := s.nl; j < len(u); j++ {
		u[j] = s.tau * rng.NormFloat64()
	}
	return nil
}

// logEvidence is the exact log evidence.
func (s *signFlip) logEvidence() float64 {
	lga, _ := math.Lgamma(s.a)
	var lz float64
	for j := 0; j < s.nl; j++ {
		ss := 0.0
		for _, v := range s.z[j] {
			ss += v * v
		}
		h := float64(len(s.z[j])) / 2
		lg, _ := math.Lgamma(s.a + h)
		lz += s.a*math.Log(s.b) - lga + lg - (s.a+h)*math.Log(s.b+ss/2) - h*math.Log(2*math.Pi)
	}
	if s.m == 0 {
		return lz
	}
	// y ~ N(0, σ²I + τ²XXᵀ).
	xm := mat.NewDense(s.m, s.p, s.x)
	var c mat.SymDense
	c.SymOuterK(s.tau*s.tau, xm)
	for i := 0; i < s.m; i++ {
		c.SetSym(i, i, c.At(i, i)+s.sigma*s.sigma)
	}
	var ch mat.Cholesky
	if !ch.Factorize(&c) {
		panic("signFlip: covariance not positive definite")
	}
	y := mat.NewVecDense(s.m, s.y)
	var sol mat.VecDense
	if err := ch.SolveVecTo(&sol, y); err != nil {
		panic(err)
	}
	return lz - 0.5*(float64(s.m)*math.Log(2*math.Pi)+ch.LogDet()+mat.Dot(y, &sol))
}

func TestSignFlipGradient(t *testing.T) {
	s := newSignFlip()
	rng := rand.New(rand.NewPCG(1, 1))
	u := make([]float64, s.Dim())
	if err := s.SamplePrior(rng, u); err != nil {
		t.Fatal(err)
	}
	for j := range u[:s.nl] {
		u[j] = 0.3 * float64(j)
	}
	gp, gl := make([]float64, len(u)), make([]float64, len(u))
	if _, _, err := s.LogPriorLik(u, gp, gl); err != nil {
		t.Fatal(err)
	}
	for part, g := range [][]float64{gp, gl} {
		want := checks.CentralGradient(func(x []float64) (float64, error) {
			a, b, err := s.LogPriorLik(x, nil, nil)
			return []float64{a, b}[part], err
		}, u, 1e-5)
		for i := range g {
			if d := math.Abs(g[i] - want[i]); d > 1e-5*(1+math.Abs(want[i])) {
				t.Errorf("part %d: gradient[%d] = %.8g, finite differences %.8g", part, i, g[i], want[i])
			}
		}
	}
}

// TestSMCSignFlipRuns measures (logs, checks nothing) single SMC runs on
// signFlip: set TRJ_SMCEV_CALIB to the number of seeds.
func TestSMCSignFlipRuns(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("TRJ_SMCEV_CALIB"))
	if seeds == 0 {
		t.Skip("set TRJ_SMCEV_CALIB to run the measurement")
	}
	s := newSignFlip()
	exact := s.logEvidence()
	n := 400
	if v, _ := strconv.Atoi(os.Getenv("TRJ_SMCEV_N")); v > 0 {
		n = v
	}
	ess := 0.9
	if v, _ := strconv.ParseFloat(os.Getenv("TRJ_SMCEV_ESS"), 64); v > 0 {
		ess = v
	}
	f := func(int) (TemperedModel, error) { return s.clone(), nil }
	pilot, err := RunSMC(context.Background(), f, &SMCSettings{Particles: n, Seed: 1000, ESSFraction: ess})
	if err != nil {
		t.Fatal(err)
	}
	for _, fixed := range []bool{false, true} {
		var errs []float64
		for seed := 1; seed <= seeds; seed++ {
			set := &SMCSettings{Particles: n, Seed: uint64(seed), ESSFraction: ess}
			if fixed {
				set.Temperatures = pilot.Temperatures
			}
			r, err := RunSMC(context.Background(), f, set)
			if err != nil {
				t.Fatal(err)
			}
			errs = append(errs, r.LogZ-exact)
		}
		m, sd := stat.MeanStdDev(errs, nil)
		t.Logf("N=%d ESS=%.2f fixed %v (%d temperatures): error of log Z mean %.3f sd %.3f (exact %.3f)", n, ess, fixed, len(pilot.Temperatures)-1, m, sd, exact)
	}
}

// TestSMCSignFlipParts measures (logs, checks nothing) single runs' log Z
// error over 20 seeds on signFlip ("full") and its parts: the
// log-precisions alone ("gamma"), the mixture regression alone ("mixture")
// and that regression with one mode ("w1"). Set TRJ_SMCEV_BLOCKS to run it;
// TRJ_SMCEV_N, TRJ_SMCEV_ESS, TRJ_SMCEV_TOL and TRJ_SMCEV_MODELS (a
// comma-separated list) choose the particles, settings and models.
func TestSMCSignFlipParts(t *testing.T) {
	if os.Getenv("TRJ_SMCEV_BLOCKS") == "" {
		t.Skip("set TRJ_SMCEV_BLOCKS to run the measurement")
	}
	full := newSignFlip()
	gamma := newSignFlip()
	gamma.p, gamma.m, gamma.x, gamma.y = 0, 0, nil, nil
	mix := newSignFlip()
	mix.nl, mix.z = 0, nil
	w1 := mix.clone()
	w1.w = 1
	n, _ := strconv.Atoi(os.Getenv("TRJ_SMCEV_N"))
	ess, _ := strconv.ParseFloat(os.Getenv("TRJ_SMCEV_ESS"), 64)
	tol, _ := strconv.ParseFloat(os.Getenv("TRJ_SMCEV_TOL"), 64)
	names := []string{"full", "gamma", "mixture", "w1"}
	if v := os.Getenv("TRJ_SMCEV_MODELS"); v != "" {
		names = strings.Split(v, ",")
	}
	for _, name := range names {
		s := map[string]*signFlip{"full": full, "gamma": gamma, "mixture": mix, "w1": w1}[name]
		exact := s.logEvidence()
		var errs []float64
		evals := 0
		for seed := 1; seed <= 20; seed++ {
			r, err := RunSMC(context.Background(), func(int) (TemperedModel, error) { return s.clone(), nil }, &SMCSettings{Particles: n, Seed: uint64(seed), ESSFraction: ess, MoveTolerance: tol})
			if err != nil {
				t.Fatal(err)
			}
			errs = append(errs, r.LogZ-exact)
			evals += r.Evals
		}
		m, sd := stat.MeanStdDev(errs, nil)
		t.Logf("%s N=%d ESS %.2f tol %g: error mean %.3f sd %.3f, evals per run %d, var×evals %.3g", name, n, ess, tol, m, sd, evals/20, sd*sd*float64(evals/20))
	}
}

// TestSMCEvidenceCalibration checks the SMC evidence and its standard error
// as trj's SMC pilots form them (the log of the mean evidence of
// independent default runs, here of 100 particles, with the delta-method SE) on
// signFlip, whose evidence is exact: over 20 seeds the z-scores must have
// mean within 3/√20 of 0 and sd in [0.7, 1.4]. Before the moves were
// fitted without the particles they move, single runs were 1.7 nats high
// (400 particles); with the paper's conditional ESS of 0.5 the runs
// scatter so much (sd 1.6 nats with 200 particles) that the mean of ten
// is unstable and its SE too small (z sd 2.0).
func TestSMCEvidenceCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("long statistical test")
	}
	s := newSignFlip()
	exact := s.logEvidence()
	f := func(int) (TemperedModel, error) { return s.clone(), nil }
	const seeds, runs = 20, 10
	var zs, errs []float64
	for seed := range seeds {
		lz := make([]float64, runs)
		for r := range lz {
			res, err := RunSMC(context.Background(), f, &SMCSettings{Particles: 100, Seed: uint64(1000*seed + r), Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			lz[r] = res.LogZ
			errs = append(errs, res.LogZ-exact)
		}
		est, se := checks.LogMeanExp(lz)
		zs = append(zs, (est-exact)/se)
	}
	zm, zsd := stat.MeanStdDev(zs, nil)
	em, esd := stat.MeanStdDev(errs, nil)
	t.Logf("z over %d seeds: mean %.2f, sd %.2f; single runs' error %.3f ± %.3f (sd)", seeds, zm, zsd, em, esd)
	if math.Abs(zm) > 3/math.Sqrt(seeds) || zsd < 0.7 || zsd > 1.4 {
		t.Errorf("z-scores of the SMC evidence over %d seeds: mean %.2f, sd %.2f; want |mean| ≤ %.2f and sd in [0.7, 1.4]", seeds, zm, zsd, 3/math.Sqrt(seeds))
	}
}

// TestSMCMovesFitWithoutTheirParticles checks log Z on a 16-dimensional
// Gaussian regression (signFlip's regression block with w = 1) with few
// particles, where moves fitted to covariances that include the moved
// particle made it 1.55 nats too high for both moves (100 particles; 4 SE
// over these 10 seeds is 0.4–0.5).
func TestSMCMovesFitWithoutTheirParticles(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical test")
	}
	s := newSignFlip()
	s.nl, s.z, s.w = 0, nil, 1
	exact := s.logEvidence()
	for _, mv := range []SMCMove{SMCEigenRWM{}, SMCRWM{}} {
		t.Run(mv.String(), func(t *testing.T) {
			var zs []float64
			for seed := uint64(1); seed <= 10; seed++ {
				r, err := RunSMC(context.Background(), func(int) (TemperedModel, error) { return s.clone(), nil },
					&SMCSettings{Particles: 100, Seed: seed, Move: mv, Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				zs = append(zs, r.LogZ)
			}
			checkAcrossSeeds(t, "log Z", zs, exact)
		})
	}
}
