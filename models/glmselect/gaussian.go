package glmselect

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// Gaussian returns the selection space of the linear regression
// y = α + Xβ + ε, ε ~ N(0, σ² I), under Settings.Prior (default GPrior{},
// the unit-information g-prior). Each model's parameters are beta (the
// intercept, the mean response at the predictors' means, then the active
// coefficients in increasing term index, each in y-units per unit of its
// predictor), then the shared sigma2 (on the log scale) and, for the
// hyper-g priors, shrinkage = g/(1+g) (HyperG; (g/n)/(1+g/n) for HyperGN,
// on the logit scale) or, for ZellnerSiow, g (on the log scale).
//
// Each model's log-density is its prior times likelihood exactly, so that
// its integral is the closed-form evidence of Evidence: the g-prior's
// per-model constant ½ log|X_γᵀX_γ| is the space's model offset
// (ppl.WithModelOffset). A model the g-prior is not defined for (more than
// n − 2 terms, or terms exactly collinear) has prior probability zero
// (Evidence.Support describes them).
//
// Under the g-priors with more than 2,000 terms, the space compiles each
// visited model's graph (Settings.PerModel) whatever the setting: the
// saturated model's graph would hold the p × p Gram matrix.
func Gaussian(X mat.Matrix, y []float64, settings *Settings) (*ppl.SelectionSpace, error) {
	s, d, err := prepare(X, y, settings)
	if err != nil {
		return nil, err
	}
	r, err := resolve(s.Prior, d.n, d.p)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(d, &r); err != nil {
		return nil, err
	}
	gp := &gaussianPlan{d: d, r: r}
	shared := 1
	opts, err := d.predictOption(&s, identity)
	if err != nil {
		return nil, err
	}
	if r.isG() && s.Raw {
		return nil, errors.New("glmselect: the g-priors are defined on centred predictors, so Settings.Raw applies only to NormalInverseGamma")
	}
	// Every prior has closed-form evidences: the space knows them, for
	// informed jumps and exact reported evidences.
	ev, err := newEvidence(&s, d, r)
	if err != nil {
		return nil, err
	}
	logEvidence, neighbours := ev.concurrent()
	opts = append(opts, ppl.WithModelEvidence(logEvidence), ppl.WithNeighbourEvidence(neighbours))
	if r.isG() {
		gp.gram = ev.gm
		opts = append(opts, ppl.WithModelOffset(gp.gram.offset), ppl.WithModelSupport(gp.gram.inSupport),
			ppl.WithTermCorrelation(gp.gram.corr))
		if r.kind != gFixed {
			shared = 2
		} else {
			opts = append(opts, ppl.WithModelPosterior(posteriorOf(d, gp.gram, r.g)),
				ppl.WithNeighbourhoodScorer(func() (ppl.NeighbourhoodScorer, error) { return newScorer(ev, d) }))
		}
	}
	if r.isG() && d.p > fullGramMaxP {
		// The saturated form's graph holds the (1+p)² Gram matrix and all
		// p columns, O(n p²) to build; beyond fullGramMaxP terms each
		// visited model's own graph is the one that scales.
		if !s.PerModel && (settings == nil || settings.Cache == 0) {
			s.Cache = ppl.DefaultModelCache
		}
		s.PerModel = true
	}
	build := func(b *ppl.Builder, t ppl.Terms) error { return gp.graph(b, t.Indices(), nil) }
	masked := func(b *ppl.Builder, mask *gorgonia.Node) error { return gp.graph(b, d.all(), mask) }
	return d.choose(build, masked, &s, shared, opts...)
}

// gaussianPlan is what a Gaussian space's graphs are built from.
type gaussianPlan struct {
	d    *design
	r    resolved
	gram *gram // g-priors only
}

// graph declares the parameters of the model over the terms cols and adds
// its log-density. mask is nil for a model of its own; for the saturated
// model of a masked space, cols are every term and mask switches them.
func (gp *gaussianPlan) graph(b *ppl.Builder, cols []int, mask *gorgonia.Node) error {
	d, r := gp.d, &gp.r
	t, _ := ppl.NewTerms(d.p, cols...)
	X := d.matrix(t)
	beta := b.Real("beta", 1+len(cols))
	sigma2 := b.Positive("sigma2")
	bm, k := beta, gorgonia.NewConstant(float64(len(cols)))
	var wm, xn *gorgonia.Node
	if mask != nil {
		wm = withIntercept(b, mask)
		bm = b.Check(gorgonia.HadamardProd(beta, wm))
		k = b.Check(gorgonia.Sum(mask))
	}
	sigma := b.Check(gorgonia.Sqrt(sigma2))
	if r.kind == gNIG {
		// On the standardised predictors every coefficient is
		// N(0, σ²G); per unit of predictor j that is sd N(0, σ²G/sd_j²).
		scale := make([]float64, 1+len(cols))
		for i, j := range cols {
			scale[1+i] = math.Sqrt(r.nig.G) / d.scale[j]
		}
		scale[0] = math.Sqrt(r.nig.G)
		b.Sample(ppl.InverseGamma{Shape: r.nig.A, Scale: r.nig.B}, sigma2)
		prior := ppl.Normal{Mu: 0.0, Sigma: b.Check(gorgonia.Mul(sigma, b.Data("prior_scale", scale)))}
		if mask == nil {
			b.Sample(prior, beta)
		} else {
			b.AddLogDensity(b.Check(gorgonia.HadamardProd(b.Check(prior.LogProbs(beta)), wm)))
		}
	} else {
		xn = gp.gPrior(b, cols, X, bm, k, sigma2)
	}
	if xn == nil {
		xn = b.DataMatrix("X", X)
	}
	b.AddLogDensity(b.Check(ops.NormalIDGLM(xn, bm, b.Data("y", d.y), sigma)))
	return nil
}

// gPrior adds the g-prior's log-density but its per-model constant:
// p(σ²) ∝ 1/σ², a flat intercept and
// log N(β; 0, gσ²(XᵀX)⁻¹) − ½ log|XᵀX| = −(k/2) log(2πgσ²) − βᵀXᵀXβ/(2gσ²),
// with bm the coefficients (intercept first, masked) and k their number.
// When the Gram matrix is kept whole, βᵀXᵀXβ reads it; above
// fullGramMaxP terms it is ‖X_γβ‖² from X (the model's design, a column
// of ones then the centred predictors), declared here as the data "X"
// and returned, so that no Gram row is computed for a graph.
func (gp *gaussianPlan) gPrior(b *ppl.Builder, cols []int, X *mat.Dense, bm, k, sigma2 *gorgonia.Node) (xn *gorgonia.Node) {
	r, gm := &gp.r, gp.gram
	var quad *gorgonia.Node
	if gm.c == nil {
		// (0, β): the intercept's column is not in XᵀX.
		keep := make([]float64, 1+len(cols))
		for i := range cols {
			keep[1+i] = 1
		}
		xn = b.DataMatrix("X", X)
		fit := b.Check(gorgonia.Mul(xn, b.Check(gorgonia.HadamardProd(bm, b.Data("slopes", keep)))))
		quad = b.Check(gorgonia.Sum(b.Check(gorgonia.Square(fit))))
	} else {
		// XᵀX of the centred predictors in data units, bordered by a zero
		// row and column for the intercept.
		m := len(cols)
		xtx := mat.NewDense(1+m, 1+m, nil)
		for a, i := range cols {
			row := gm.row(i)
			for c, j := range cols {
				xtx.Set(1+a, 1+c, row[j]*math.Exp(gm.logScale[i]+gm.logScale[j]))
			}
		}
		quad = b.Check(gorgonia.Sum(b.Check(gorgonia.HadamardProd(bm, b.Check(gorgonia.Mul(b.DataMatrix("xtx", xtx), bm))))))
	}
	var g *gorgonia.Node
	switch r.kind {
	case gFixed:
		g = gorgonia.NewConstant(r.g)
	case gHyper, gHyperN:
		s := b.Interval("shrinkage", 0.0, 1.0)
		b.Sample(ppl.Beta{Alpha: 1.0, Beta: r.a/2 - 1}, s)
		g = b.Check(gorgonia.Div(s, b.Check(gorgonia.Sub(gorgonia.NewConstant(1.0), s))))
		if r.kind == gHyperN {
			g = b.Check(gorgonia.Mul(g, gorgonia.NewConstant(r.n)))
		}
	case gZS:
		g = b.Positive("g")
		b.Sample(ppl.InverseGamma{Shape: 0.5, Scale: r.n / 2}, g)
	}
	logS2 := b.Check(gorgonia.Log(sigma2))
	b.AddLogDensity(b.Check(gorgonia.Neg(logS2)))
	gs2 := b.Check(gorgonia.Mul(g, sigma2))
	logNorm := b.Check(gorgonia.Add(gorgonia.NewConstant(math.Log(2*math.Pi)), b.Check(gorgonia.Log(gs2))))
	lp := b.Check(gorgonia.Add(
		b.Check(gorgonia.Mul(gorgonia.NewConstant(-0.5), b.Check(gorgonia.Mul(k, logNorm)))),
		b.Check(gorgonia.Neg(b.Check(gorgonia.Div(quad, b.Check(gorgonia.Mul(gorgonia.NewConstant(2.0), gs2))))))))
	b.AddLogDensity(lp)
	return xn
}

// checkResponse refuses a constant response under a g-prior, whose
// posterior of σ² it leaves improper.
func checkResponse(d *design, r *resolved) error {
	if !r.isG() {
		return nil
	}
	for _, v := range d.y[1:] {
		if v != d.y[0] {
			return nil
		}
	}
	return fmt.Errorf("%w: the response is constant (%v), which leaves nothing to explain", ErrData, d.y[0])
}
