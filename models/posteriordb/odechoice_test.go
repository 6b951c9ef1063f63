package posteriordb

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// lotkaVolterraPrey is the Lotka–Volterra system with self-limited prey
// growth, θ = (α, β, γ, δ, κ):
//
//	dz₁/dt = (α − β z₂ − κ z₁) z₁,  dz₂/dt = (−γ + δ z₁) z₂.
//
// κ = 0 is the classic system.
func lotkaVolterraPrey() (*ops.ODE, error) {
	return ops.NewODE(2, 5, func(_ *gorgonia.Node, z, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		var e nodeErr
		hare, lynx := z[0], z[1]
		growth := e.sub(e.sub(th[0], e.mul(th[1], lynx)), e.mul(th[4], hare))
		dLynx := e.mul(e.sub(e.mul(th[3], hare), th[2]), lynx)
		return []*gorgonia.Node{e.mul(growth, hare), dLynx}, e.err
	})
}

// lotkaVolterraChoice returns the space of two models of pelts y_init (at
// time 0) and y (N × 2, at times 1, …, N): posteriordb's Lotka–Volterra
// model ("classic", 8 parameters) and the same with self-limited prey,
// κ ~ normal(0, 0.005) ("self-limited", 9 parameters). Both use
// posteriordb's priors and tolerances and start their chains at the prior's
// centre (see LotkaVolterra).
func lotkaVolterraChoice(yInit []float64, y [][2]float64) (*ppl.Space, error) {
	var models []ppl.Model
	for _, selfLimited := range []bool{false, true} {
		sys, err := lotkaVolterraSystem()
		if selfLimited {
			sys, err = lotkaVolterraPrey()
		}
		if err != nil {
			return nil, err
		}
		m, err := lotkaVolterraOf(sys, yInit, y)
		if err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	return ppl.NewSpace(models, ppl.WithLabels("classic", "self-limited"))
}

// lotkaVolterraOf is posteriordb's Lotka–Volterra model with the system
// sys, whose fifth parameter, if any, is κ.
func lotkaVolterraOf(sys *ops.ODE, yInit []float64, y [][2]float64) (*ppl.GraphModel, error) {
	n := len(y)
	ts := make([]float64, n)
	obs := make([]float64, 0, 2*n)
	for i := range y {
		ts[i] = float64(i + 1)
		obs = append(obs, y[i][0], y[i][1])
	}
	b := ppl.NewBuilder()
	g := graph{b}
	rates := b.Positive("theta", 4)
	b.Sample(ppl.Normal{Mu: []float64{1, 0.05, 1, 0.05}, Sigma: []float64{0.5, 0.05, 0.5, 0.05}}, rates)
	b.AddLogDensity(g.c(-2 * (math.Log(distuv.UnitNormal.CDF(2)) + math.Log(distuv.UnitNormal.CDF(1)))))
	theta := rates
	init := map[string][]float64{"theta": {1, 0.05, 1, 0.05}, "z_init": yInit, "sigma": {0.5, 0.5}}
	if sys.Params() == 5 {
		// κ = 0.005·κ_raw, κ_raw ~ normal(0, 1): on the sampler's scale κ
		// is then as wide as the other coordinates, which NUTS's first
		// warm-up steps (before the metric adapts) need.
		kappaRaw := b.Real("kappa_raw")
		b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, kappaRaw)
		kappa := g.mul(g.c(0.005), kappaRaw)
		b.Report("kappa", kappa)
		theta = b.Check(gorgonia.Concat(0, rates, b.Check(gorgonia.Reshape(kappa, []int{1}))))
		init["kappa_raw"] = []float64{0}
	}
	zInit := b.Positive("z_init", 2)
	sigma := b.Positive("sigma", 2)
	b.Sample(ppl.LogNormal{Mu: -1.0, Sigma: 1.0}, sigma)
	b.Sample(ppl.LogNormal{Mu: math.Log(10), Sigma: 1.0}, zInit)
	b.Sample(ppl.LogNormal{Mu: g.log(zInit), Sigma: sigma}, b.Data("y_init", yInit))
	logZ := g.log(b.Check(ops.ODESolve(sys, zInit, theta, 0, ts, lotkaVolterraODE(n))))
	// σ as an N × 2 matrix, column k holding σ_k, so that one lognormal
	// statement covers both species.
	ones := b.Data("ones", floats.Span(make([]float64, n), 1, 1), n, 1)
	sigmas := g.matVec(ones, b.Check(gorgonia.Reshape(sigma, []int{1, 2})))
	b.Sample(ppl.LogNormal{Mu: logZ, Sigma: sigmas}, b.Data("y", obs, n, 2))
	m, err := b.Model()
	if err != nil {
		return nil, err
	}
	return m.WithInit(init)
}

// simulatedPelts draws pelts from the classic system at posteriordb's
// posterior mean, θ = (0.55, 0.028, 0.80, 0.024), z₀ = (34, 5.9), with
// lognormal noise of scale 0.25, at times 0, 1, …, 20 (fixed seed).
func simulatedPelts() (yInit []float64, y [][2]float64) {
	rng := rand.New(rand.NewPCG(1900, 1920))
	noisy := func(z float64) float64 { return z * math.Exp(0.25*rng.NormFloat64()) }
	z0 := []float64{34, 5.9}
	yInit = []float64{noisy(z0[0]), noisy(z0[1])}
	for _, z := range lotkaVolterraRK4([]float64{0.55, 0.028, 0.80, 0.024}, z0, 20, 2000) {
		y = append(y, [2]float64{noisy(z[0]), noisy(z[1])})
	}
	return yInit, y
}

// momentIS estimates log ∫ exp(lp(u)) du by importance sampling from a
// multivariate t with 4 degrees of freedom whose centre and scale are the
// mean and covariance of a NUTS chain's draws: independent of trj's
// pilots, transports and bridge (any proposal that covers the posterior
// gives a consistent estimate; the chain only makes it efficient). It
// returns the estimate, its standard error (delta method) and the
// effective sample size of the weights.
func momentIS(t *testing.T, m ppl.Model, draws int, seed uint64) (logZ, se, ess float64) {
	t.Helper()
	res, err := kernels.Sample(context.Background(), func(int) (kernels.Target, error) { return m, nil },
		&kernels.SampleSettings{Init: func(_ int, rng *rand.Rand, x []float64) error { return m.Init(rng, x) },
			Chains: 1, Warmup: 500, Draws: 1000, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	n := m.Dim()
	ch := res.Chains[0]
	x := mat.NewDense(len(ch.Info), n, nil)
	for i := range ch.Info {
		x.SetRow(i, ch.Draw(i))
	}
	mode := make([]float64, n)
	for j := range n {
		mode[j] = stat.Mean(mat.Col(nil, j, x), nil)
	}
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, x, nil)
	// u = mode + L z / √(χ²₄/4): a t with 4 degrees of freedom and scale
	// LLᵀ = cov, whose log density is that of mvtLogProb.
	var chol mat.Cholesky
	if !chol.Factorize(&cov) {
		t.Fatal("the draws' covariance is not positive definite")
	}
	var l mat.TriDense
	chol.LTo(&l)
	const nu = 4.0
	rng := rand.New(rand.NewPCG(seed, 7))
	chi2 := distuv.ChiSquared{K: nu, Src: rng}
	logNorm := lgamma((nu+float64(n))/2) - lgamma(nu/2) - float64(n)/2*math.Log(nu*math.Pi) - 0.5*chol.LogDet()
	logW := make([]float64, 0, draws)
	u := make([]float64, n)
	zv := mat.NewVecDense(n, nil)
	lz := mat.NewVecDense(n, nil)
	for range draws {
		for i := range n {
			zv.SetVec(i, rng.NormFloat64())
		}
		scale := math.Sqrt(nu / chi2.Rand())
		lz.MulVec(&l, zv)
		for i := range u {
			u[i] = mode[i] + scale*lz.AtVec(i)
		}
		// (u − mode)ᵀ cov⁻¹ (u − mode) = scale² zᵀz.
		q := scale * scale * mat.Dot(zv, zv)
		logQ := logNorm - (nu+float64(n))/2*math.Log1p(q/nu)
		lp, err := m.LogDensity(u)
		if err != nil {
			lp = math.Inf(-1) // a failed solve: weight 0
		}
		logW = append(logW, lp-logQ)
	}
	top := floats.Max(logW)
	var s1, s2 float64
	for _, lw := range logW {
		w := math.Exp(lw - top)
		s1 += w
		s2 += w * w
	}
	mean := s1 / float64(draws)
	variance := s2/float64(draws) - mean*mean
	return top + math.Log(mean), math.Sqrt(variance/float64(draws)) / mean, s1 * s1 / s2
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// trj.Run chooses between the classic Lotka–Volterra model and one with
// self-limited prey on data simulated from the classic one; its model
// probabilities agree with those of importance sampling (momentIS) within 4 standard errors (both sides' combined).
func TestLotkaVolterraChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("two ODE models through trj.Run and importance sampling: minutes; skipped with -short")
	}
	yInit, y := simulatedPelts()
	space, err := lotkaVolterraChoice(yInit, y)
	if err != nil {
		t.Fatal(err)
	}
	res, err := trj.Run(context.Background(), space, &trj.Settings{
		Seed: 1,
		Progress: func(p pipeline.Progress) {
			if p.Done == p.Total {
				t.Logf("%s: model %d chain %d done", p.Stage, p.Model, p.Chain)
			}
		},
		Pilot:  trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 500}},
		Chains: trj.ChainSettings{Within: trj.RandomWalkMove{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%v", res)

	logZ, logZSE := make([]float64, 2), make([]float64, 2)
	for k := range space.NumModels() {
		m, err := space.Model(k)
		if err != nil {
			t.Fatal(err)
		}
		var ess float64
		logZ[k], logZSE[k], ess = momentIS(t, m, 20000, uint64(k+1))
		t.Logf("%s: importance sampling log Z = %.4f ± %.4f (weights' ESS %.0f of 20000)", space.ModelLabel(k), logZ[k], logZSE[k], ess)
	}
	p, se, err := trj.PosteriorProbabilities(logZ, logZSE, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range p {
		c := res.Chain[k]
		z := (c.P - p[k]) / math.Hypot(c.MCSE, se[k])
		t.Logf("%s: chains %.4f ± %.4f, importance sampling %.4f ± %.4f, z = %.2f", space.ModelLabel(k), c.P, c.MCSE, p[k], se[k], z)
		if !(math.Abs(z) <= 4) {
			t.Errorf("%s: chains %.4f ± %.4f, importance sampling %.4f ± %.4f: |z| = %.2f > 4", space.ModelLabel(k), c.P, c.MCSE, p[k], se[k], math.Abs(z))
		}
	}
}
