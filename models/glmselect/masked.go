package glmselect

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// The saturated forms of the families: one model over all p terms, with
// the selection mask as an input (ppl.NewMaskedSelectionSpace), compiled
// once instead of once per model. The coefficients enter the likelihood as
// β ⊙ m and each coefficient's prior log-density is multiplied by its mask
// entry, where m = (1, mask) keeps the intercept in, so that at mask = γ
// with the inactive coefficients at 0 the saturated log-density is model
// γ's exactly.

// full is the n×(1+p) design of the saturated model: a column of ones,
// then every predictor.
func (d *design) full() *mat.Dense {
	all := make([]int, d.p)
	for j := range all {
		all[j] = j
	}
	t, _ := ppl.NewTerms(d.p, all...)
	return d.matrix(t)
}

// withIntercept returns (1, mask), the mask of the coefficient vector.
func withIntercept(b *ppl.Builder, mask *gorgonia.Node) *gorgonia.Node {
	return b.Check(gorgonia.Concat(0, b.Data("intercept_mask", []float64{1}), mask))
}

func gaussianMasked(d *design, s *Settings) ppl.MaskedBuildFunc {
	sqrtG := math.Sqrt(s.G)
	X := d.full()
	return func(b *ppl.Builder, mask *gorgonia.Node) error {
		m := withIntercept(b, mask)
		beta := b.Real("beta", 1+d.p)
		sigma2 := b.Positive("sigma2")
		b.Sample(ppl.InverseGamma{Shape: s.A, Scale: s.B}, sigma2)
		sigma := b.Check(gorgonia.Sqrt(sigma2))
		prior := ppl.Normal{Mu: 0.0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(sqrtG)))}
		b.AddLogDensity(b.Check(gorgonia.HadamardProd(b.Check(prior.LogProbs(beta)), m)))
		bm := b.Check(gorgonia.HadamardProd(beta, m))
		b.AddLogDensity(b.Check(ops.NormalIDGLM(b.DataMatrix("X", X), bm, b.Data("y", d.y), sigma)))
		return nil
	}
}

func glmMasked(d *design, s *Settings, lik func(x, beta, y *gorgonia.Node) (*gorgonia.Node, error)) ppl.MaskedBuildFunc {
	X := d.full()
	sd := make([]float64, 1+d.p)
	sd[0] = s.InterceptSD
	for j := 1; j <= d.p; j++ {
		sd[j] = s.PriorSD
	}
	return func(b *ppl.Builder, mask *gorgonia.Node) error {
		m := withIntercept(b, mask)
		beta := b.Real("beta", 1+d.p)
		prior := ppl.Normal{Mu: 0.0, Sigma: sd}
		b.AddLogDensity(b.Check(gorgonia.HadamardProd(b.Check(prior.LogProbs(beta)), m)))
		bm := b.Check(gorgonia.HadamardProd(beta, m))
		b.AddLogDensity(b.Check(lik(b.DataMatrix("X", X), bm, b.Data("y", d.y))))
		return nil
	}
}

// choose returns the space of build (one model compiled per visit) when
// s.PerModel is set, else the space of the saturated form masked; with
// s.Predict, its quantities are the predictions through the inverse link.
func (d *design) choose(build ppl.BuildFunc, masked ppl.MaskedBuildFunc, s *Settings, shared int, link func(float64) float64) (*ppl.SelectionSpace, error) {
	opts := []ppl.SelectionOption{ppl.WithTermNames(d.names...), ppl.WithModelPrior(s.ModelPrior),
		ppl.WithModelCache(s.Cache), ppl.WithSelectionShared(shared)}
	if s.Predict != nil {
		q, err := d.predictions(s.Predict, link)
		if err != nil {
			return nil, err
		}
		opts = append(opts, q)
	}
	if s.PerModel {
		return ppl.NewSelectionSpace(d.p, build, opts...)
	}
	return ppl.NewMaskedSelectionSpace(d.p, masked, opts...)
}
