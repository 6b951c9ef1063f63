package docs_test

// The code of guide.md. Each region between "// snippet:NAME" and
// "// endsnippet:NAME" appears verbatim in the guide (TestMarkdown checks
// it); TestGuide runs the whole workflow and checks it against the exact
// answers of the conjugate model.

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/diag"
	"github.com/trjgo/trj/ppl/draws"
)

// snippet:data
// syntheticData returns n points on a grid over [−2, 2] with
// y = 1 + 0.5x + curvature·x² + N(0, 1) noise.
func syntheticData(n int, curvature float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	x, y = make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = -2 + 4*float64(i)/float64(n-1)
		y[i] = 1 + 0.5*x[i] + curvature*x[i]*x[i] + rng.NormFloat64()
	}
	return x, y
}

// endsnippet:data

// snippet:model
// Prior constants: β | σ² ~ N(0, σ²τ²I) and σ² ~ InverseGamma(a, b).
const (
	priorTau   = 3.0 // τ
	priorShape = 2.0 // a
	priorScale = 1.0 // b
)

// polynomialRegression is the model
//
//	y_i ~ N(β₁ + β₂x_i + … + β_{d+1}x_iᵈ, σ²),
//	β | σ² ~ N(0, σ²τ²I),  σ² ~ InverseGamma(a, b).
func polynomialRegression(x, y []float64, degree int) (*ppl.GraphModel, error) {
	n, p := len(x), degree+1
	design := make([]float64, 0, n*p) // row-major n×p: 1, x, x², …
	for _, xi := range x {
		for j, v := 0, 1.0; j < p; j, v = j+1, v*xi {
			design = append(design, v)
		}
	}

	b := ppl.NewBuilder()
	beta := b.Real("beta", p)
	sigma2 := b.Positive("sigma2")
	sigma := b.Check(gorgonia.Sqrt(sigma2))
	b.Sample(ppl.InverseGamma{Shape: priorShape, Scale: priorScale}, sigma2)
	b.Sample(ppl.Normal{Mu: 0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(priorTau)))}, beta)
	mu := b.Check(gorgonia.Mul(b.Data("X", design, n, p), beta))
	b.Sample(ppl.Normal{Mu: mu, Sigma: sigma}, b.Data("y", y))
	return b.Model()
}

// endsnippet:model

// snippet:nuts
// sampleNUTS runs four NUTS chains with Stan's warm-up (step size and
// diagonal metric), each chain on its own clone of m and its own random
// stream rand.NewPCG(seed, chain).
func sampleNUTS(ctx context.Context, m ppl.Model, warmup, numDraws int, seed uint64) (*kernels.SampleResult, error) {
	return kernels.Sample(ctx,
		func(chain int) (kernels.Target, error) { return m.Clone(), nil },
		nil, // Stan's initialisation: uniform(−2, 2) on the unconstrained scale
		&kernels.SampleSettings{Chains: 4, Warmup: warmup, Draws: numDraws, Seed: seed})
}

// endsnippet:nuts

// snippet:constrain
// constrained maps the unconstrained positions of res back to m's
// parameters and stores them with Stan's sampler columns.
func constrained(m ppl.Model, res *kernels.SampleResult) (*draws.Draws, error) {
	return res.ToDraws(func(chain int) kernels.Constrainer { return m })
}

// endsnippet:constrain

// snippet:fit
// fitQuadratic samples the quadratic regression, prints a stansummary-style
// table to w and refuses draws that fail the convergence checks.
func fitQuadratic(ctx context.Context, w io.Writer, x, y []float64) (*draws.Draws, error) {
	m, err := polynomialRegression(x, y, 2)
	if err != nil {
		return nil, err
	}
	res, err := sampleNUTS(ctx, m, 500, 1000, 1)
	if err != nil {
		return nil, err
	}
	d, err := constrained(m, res)
	if err != nil {
		return nil, err
	}
	sum, err := draws.Summarize(d)
	if err != nil {
		return nil, err
	}
	if err := sum.WriteTable(w); err != nil {
		return nil, err
	}

	// Rank-normalised split-R̂ above 1.01 means the chains disagree;
	// divergences mean NUTS could not follow the posterior's geometry.
	for _, s := range sum.Stats {
		if s.Rhat > 1.01 {
			return d, fmt.Errorf("%s: R-hat %.3f > 1.01", s.Name, s.Rhat)
		}
	}
	div, err := d.Column(draws.Divergent)
	if err != nil {
		return nil, err
	}
	for _, chain := range div {
		if n := floats.Sum(chain); n > 0 {
			return d, fmt.Errorf("%v divergent transitions", n)
		}
	}
	beta2, err := d.Column("beta.3")
	if err != nil {
		return nil, err
	}
	ess, err := diag.ESSBulk(beta2)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "bulk ESS of the quadratic coefficient: %.0f\n", ess)
	return d, nil
}

// endsnippet:fit

// snippet:pilot
// pilot is one model with NUTS draws from its posterior: the adapted chains
// and the unconstrained draws split into a training half, to fit the
// transport, and an independent evaluation half, for the bridge estimator.
type pilot struct {
	model       ppl.Model
	fit         *kernels.SampleResult
	train, eval [][]float64
}

func runPilot(ctx context.Context, m ppl.Model, seed uint64) (pilot, error) {
	res, err := sampleNUTS(ctx, m, 500, 1000, seed)
	if err != nil {
		return pilot{}, err
	}
	p := pilot{model: m, fit: res}
	for c := range res.Chains {
		for i := range res.Chains[c].Info {
			if c < len(res.Chains)/2 {
				p.train = append(p.train, res.Chains[c].Draw(i))
			} else {
				p.eval = append(p.eval, res.Chains[c].Draw(i))
			}
		}
	}
	return p, nil
}

// endsnippet:pilot

// snippet:transports
// affineTransports fits z = L⁻¹(θ − μ) to each model's training draws: no
// training, exact when the posterior is Gaussian.
func affineTransports(pilots []pilot) ([]kernels.Transport, error) {
	ts := make([]kernels.Transport, len(pilots))
	for k, p := range pilots {
		t, err := flows.FitAffine(p.train, nil)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", k, err)
		}
		ts[k] = t
	}
	return ts, nil
}

// rqmaTransports trains the paper's rational-quadratic spline flow on each
// model's training draws with Adam (the paper runs 1000 iterations).
func rqmaTransports(pilots []pilot, iterations int) ([]kernels.Transport, error) {
	ts := make([]kernels.Transport, len(pilots))
	for k, p := range pilots {
		opts := flows.DefaultTrainOptions()
		opts.Iterations = iterations
		opts.Seed = uint64(k + 1)
		f, _, err := flows.FitRQMA(p.train, flows.PaperRQMAConfig(), opts)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", k, err)
		}
		ts[k] = f
	}
	return ts, nil
}

// endsnippet:transports

// snippet:bridge
// bridgeEstimate makes one TRJ proposal from every evaluation draw and turns
// the acceptance probabilities into model probabilities (Bartolucci, Scaccia
// and Mira 2006). No chain is run.
func bridgeEstimate(space *ppl.Space, ts []kernels.Transport, pilots []pilot, seed uint64) (kernels.BridgeEstimate, error) {
	jump := kernels.UniformJumps(space.NumModels())
	trj, err := kernels.NewTRJ(kernels.TRJConfig{Target: space, Transports: ts, Jump: jump})
	if err != nil {
		return kernels.BridgeEstimate{}, err
	}
	eval := make([][][]float64, len(pilots))
	for k, p := range pilots {
		eval[k] = p.eval
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	records, err := kernels.EvaluationJumps(rng, trj, eval)
	if err != nil {
		return kernels.BridgeEstimate{}, err
	}
	return kernels.BartolucciBridge(records, jump, nil) // nil: the space's uniform prior
}

// endsnippet:bridge

// snippet:trj
// runTRJ runs one TRJ chain of the given number of steps, each a jump
// proposal with j_k(k') = probs[k'] followed by a NUTS move within the
// current model (with the step size and metric adapted in the pilot run).
// It returns the model index after each step and the jump acceptance rate.
func runTRJ(space *ppl.Space, ts []kernels.Transport, pilots []pilot, probs []float64, steps int, seed uint64) ([]float64, float64, error) {
	space = space.Clone() // the chain's own scratch space
	jump, err := kernels.ProportionalJumps(probs)
	if err != nil {
		return nil, 0, err
	}
	nuts := make([]*kernels.NUTS, len(pilots))
	for k, p := range pilots {
		adapted := p.fit.Chains[0]
		if nuts[k], err = kernels.NewNUTS(p.model.Clone(), adapted.StepSize, adapted.Metric); err != nil {
			return nil, 0, err
		}
	}
	within, err := kernels.NewNUTSWithin(nuts)
	if err != nil {
		return nil, 0, err
	}
	trj, err := kernels.NewTRJ(kernels.TRJConfig{
		Target: space, Transports: ts, Jump: jump, Within: within, Alternate: true,
	})
	if err != nil {
		return nil, 0, err
	}
	s, err := trj.Init(0, pilots[0].train[0])
	if err != nil {
		return nil, 0, err
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	model := make([]float64, steps)
	proposed, accepted := 0, 0
	for i := range model {
		var info kernels.RJInfo
		s, info = trj.Step(rng, s)
		if info.Jumped {
			proposed++
			if info.JumpAccepted {
				accepted++
			}
		}
		model[i] = float64(s.Model)
	}
	return model, float64(accepted) / float64(max(proposed, 1)), nil
}

// endsnippet:trj

// snippet:compare
// comparison is what compareModels built and estimated.
type comparison struct {
	Space      *ppl.Space
	Pilots     []pilot
	Transports []kernels.Transport
	Bridge     kernels.BridgeEstimate
	TRJ, MCSE  float64 // π(quadratic | y) from the TRJ chains and its MCSE
}

// compareModels runs the whole workflow for the linear and the quadratic
// regression and prints the posterior probability of the quadratic model
// by the bridge estimator and by four TRJ chains.
func compareModels(ctx context.Context, w io.Writer, x, y []float64) (*comparison, error) {
	var cmp comparison
	var models []ppl.Model
	for degree := 1; degree <= 2; degree++ {
		m, err := polynomialRegression(x, y, degree)
		if err != nil {
			return nil, err
		}
		p, err := runPilot(ctx, m, uint64(10+degree))
		if err != nil {
			return nil, err
		}
		cmp.Pilots, models = append(cmp.Pilots, p), append(models, m)
	}
	var err error
	if cmp.Space, err = ppl.NewSpace(models, ppl.WithLabels("linear", "quadratic")); err != nil {
		return nil, err
	}
	if cmp.Transports, err = affineTransports(cmp.Pilots); err != nil {
		return nil, err
	}

	if cmp.Bridge, err = bridgeEstimate(cmp.Space, cmp.Transports, cmp.Pilots, 1); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "bridge:  π(quadratic | y) ≈ %.3f\n", cmp.Bridge.Normalized[1])

	// Proposing each model with its estimated probability: with exact
	// transports and probabilities every jump would be accepted (the
	// paper's Proposition 1), so the acceptance rate measures the flows.
	chains := make([][]float64, 4)
	for c := range chains {
		var rate float64
		chains[c], rate, err = runTRJ(cmp.Space, cmp.Transports, cmp.Pilots, cmp.Bridge.Normalized, 5000, uint64(100+c))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "chain %d: π(quadratic | y) ≈ %.3f, jump acceptance %.2f\n",
			c+1, floats.Sum(chains[c])/float64(len(chains[c])), rate)
	}
	// The running estimate of chain 1 settles as the chain grows.
	fmt.Fprint(w, "chain 1 running estimate:")
	for _, n := range []int{100, 500, 1000, 2000, 5000} {
		fmt.Fprintf(w, " %.3f (%d steps)", floats.Sum(chains[0][:n])/float64(n), n)
	}
	fmt.Fprintln(w)
	if cmp.MCSE, err = diag.MCSEMean(chains); err != nil {
		return nil, err
	}
	for _, c := range chains {
		cmp.TRJ += floats.Sum(c) / float64(len(c)*len(chains))
	}
	fmt.Fprintf(w, "TRJ:     π(quadratic | y) ≈ %.3f ± %.3f (MCSE)\n", cmp.TRJ, cmp.MCSE)
	return &cmp, nil
}

// endsnippet:compare

// snippet:exact
// logEvidence is log p(y | degree) in closed form: with β and σ² integrated
// out, y ~ t_{2a}(0, (b/a)(I + τ²XXᵀ)).
func logEvidence(x, y []float64, degree int) (float64, error) {
	n, p := len(x), degree+1
	X := mat.NewDense(n, p, nil)
	for i, xi := range x {
		for j, v := 0, 1.0; j < p; j, v = j+1, v*xi {
			X.Set(i, j, v)
		}
	}
	var xxt mat.SymDense
	xxt.SymOuterK(priorTau*priorTau, X)
	cov := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := xxt.At(i, j)
			if i == j {
				v++
			}
			cov.SetSym(i, j, priorScale/priorShape*v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(cov) {
		return 0, fmt.Errorf("evidence covariance is not positive definite")
	}
	var sol mat.VecDense
	yv := mat.NewVecDense(n, y)
	if err := chol.SolveVecTo(&sol, yv); err != nil {
		return 0, err
	}
	nu, fn := 2*priorShape, float64(n)
	lg1, _ := math.Lgamma((nu + fn) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	return lg1 - lg2 - fn/2*math.Log(nu*math.Pi) - chol.LogDet()/2 -
		(nu+fn)/2*math.Log1p(mat.Dot(yv, &sol)/nu), nil
}

// endsnippet:exact

// exactPosteriorMean returns E[β | y] = (XᵀX + I/τ²)⁻¹Xᵀy and
// E[σ² | y] = b_n/(a_n − 1), with a_n = a + n/2 and
// b_n = b + (yᵀy − μ_nᵀΛ_nμ_n)/2, the conjugate posterior of the model.
func exactPosteriorMean(x, y []float64, degree int) (beta []float64, sigma2 float64) {
	n, p := len(x), degree+1
	X := mat.NewDense(n, p, nil)
	for i, xi := range x {
		for j, v := 0, 1.0; j < p; j, v = j+1, v*xi {
			X.Set(i, j, v)
		}
	}
	var prec mat.Dense
	prec.Mul(X.T(), X)
	for j := 0; j < p; j++ {
		prec.Set(j, j, prec.At(j, j)+1/(priorTau*priorTau))
	}
	var xty, mu mat.VecDense
	yv := mat.NewVecDense(n, y)
	xty.MulVec(X.T(), yv)
	if err := mu.SolveVec(&prec, &xty); err != nil {
		return nil, math.NaN()
	}
	an := priorShape + float64(n)/2
	bn := priorScale + (mat.Dot(yv, yv)-mat.Dot(&mu, &xty))/2
	return mu.RawVector().Data, bn / (an - 1)
}
