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

	"github.com/trjgo/trj"
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
	return linearRegression(design, n, p, y)
}

// linearRegression is y ~ N(Xβ, σ²) under the prior above, X the n×p
// design, row-major.
func linearRegression(design []float64, n, p int, y []float64) (*ppl.GraphModel, error) {
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
		func(chain int) (kernels.Target, error) { return m.Clone(), nil }, &kernels.SampleSettings{Chains: 4, Warmup: warmup, Draws: numDraws, Seed: seed})
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

// snippet:compare
// compareModels asks whether the quadratic term is needed: it joins the
// linear and the quadratic regression in a model space and compares them
// with trj.Run (NUTS pilots, a transport per model, the bridge estimate and
// eight TRJ chains), then prints the table of model probabilities.
func compareModels(ctx context.Context, w io.Writer, x, y []float64) (*trj.Result, error) {
	var models []ppl.Model
	for degree := 1; degree <= 2; degree++ {
		m, err := polynomialRegression(x, y, degree)
		if err != nil {
			return nil, err
		}
		models = append(models, m)
	}
	space, err := ppl.NewSpace(models, ppl.WithLabels("linear", "quadratic"))
	if err != nil {
		return nil, err
	}
	res, err := trj.Run(ctx, space, &trj.Settings{Seed: 1})
	if err != nil {
		return nil, err
	}
	fmt.Fprint(w, res)
	return res, nil
}

// endsnippet:compare

// snippet:subsets
// predictorData returns n observations of three predictors and
// y = 1 + 0.6x₁ + 0.25x₂ + N(0, 1) noise: x₃ plays no part.
func predictorData(n int, seed uint64) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	x, y = make([][]float64, n), make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		y[i] = 1 + 0.6*x[i][0] + 0.25*x[i][1] + rng.NormFloat64()
	}
	return x, y
}

// subsetRegression is y ~ N(Σ_{j∈S} β_j x_j, σ²) with the guide's
// conjugate prior, S the columns of the design [1, x₁, x₂, …] whose
// indicator is 1. σ², the noise variance, is a parameter of every model, its
// last.
func subsetRegression(x [][]float64, y []float64, indicator []int) (*ppl.GraphModel, error) {
	var design []float64 // row-major: the included columns of [1, x]
	for _, row := range x {
		for j, in := range indicator {
			if in == 1 && j == 0 {
				design = append(design, 1)
			} else if in == 1 {
				design = append(design, row[j-1])
			}
		}
	}
	return linearRegression(design, len(y), len(design)/len(y), y)
}

// endsnippet:subsets

// snippet:select
// selectPredictors compares the 2ᵖ subsets of the predictors (the intercept
// in every model) with SMC pilots, which also estimate every model's
// evidence, and prints the table; then CTRJ with one conditional flow on the
// saturated space, reusing the pilots, whose transport it saves for later
// runs (trj.LoadedTransports).
func selectPredictors(ctx context.Context, w, saved io.Writer, x [][]float64, y []float64) (trjRes, ctrjRes *trj.Result, err error) {
	var models []ppl.Model
	var indicators [][]int
	for mask := 0; mask < 1<<len(x[0]); mask++ {
		ind := []int{1} // the intercept, then one indicator per predictor
		for j := range x[0] {
			ind = append(ind, mask>>j&1)
		}
		m, err := subsetRegression(x, y, ind)
		if err != nil {
			return nil, nil, err
		}
		models, indicators = append(models, m), append(indicators, ind)
	}
	space, err := ppl.NewSpace(models, ppl.WithIndicators(indicators),
		ppl.WithPositions(ppl.IndicatorPositions(indicators)), ppl.WithShared(1)) // σ² in every model
	if err != nil {
		return nil, nil, err
	}
	trjRes, pilots, err := trj.RunFitted(ctx, space, &trj.Settings{Seed: 1, Pilot: trj.PilotSettings{Method: trj.SMCPilots{}}})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprint(w, trjRes)
	ctrjRes, flow, err := trj.RunFitted(ctx, space, &trj.Settings{Seed: 1, Pilot: trj.PilotSettings{From: pilots},
		Proposals: &trj.Conditional{}})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprint(w, ctrjRes)
	return trjRes, ctrjRes, flow.Save(saved)
}

// endsnippet:select

// snippet:exact
// logEvidence is log p(y | degree) in closed form: with β and σ² integrated
// out, y ~ t_{2a}(0, (b/a)(I + τ²XXᵀ)).
func logEvidence(x, y []float64, degree int) (float64, error) {
	return logEvidenceOf(polynomialDesign(x, degree), y)
}

// polynomialDesign is the design matrix of rows 1, x_i, x_i², …, x_iᵈ.
func polynomialDesign(x []float64, degree int) *mat.Dense {
	n, p := len(x), degree+1
	X := mat.NewDense(n, p, nil)
	for i, xi := range x {
		for j, v := 0, 1.0; j < p; j, v = j+1, v*xi {
			X.Set(i, j, v)
		}
	}
	return X
}

// logEvidenceOf is log p(y) of y ~ N(Xβ, σ²) under the prior above, for
// any design X.
func logEvidenceOf(X *mat.Dense, y []float64) (float64, error) {
	n, _ := X.Dims()
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
	X := polynomialDesign(x, degree)
	n, p := X.Dims()
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
