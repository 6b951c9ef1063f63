package glmselect

import (
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
	t, _ := ppl.NewTerms(d.p, d.all()...)
	return d.matrix(t)
}

// withIntercept returns (1, mask), the mask of the coefficient vector.
func withIntercept(b *ppl.Builder, mask *gorgonia.Node) *gorgonia.Node {
	return b.Check(ops.Concat(0, b.Data("intercept_mask", []float64{1}), mask))
}

func glmMasked(d *design, prior ppl.Normal, lik func(x, beta, y *gorgonia.Node) (*gorgonia.Node, error)) ppl.MaskedBuildFunc {
	X := d.full()
	return func(b *ppl.Builder, mask *gorgonia.Node) error {
		m := withIntercept(b, mask)
		beta := b.Real("beta", 1+d.p)
		b.AddLogDensity(b.Check(gorgonia.HadamardProd(b.Check(prior.LogProbs(beta)), m)))
		bm := b.Check(gorgonia.HadamardProd(beta, m))
		b.AddLogDensity(b.Check(lik(b.DataMatrix("X", X), bm, b.Data("y", d.y))))
		return nil
	}
}

// choose returns the space of build (one model compiled per visit) when
// s.PerModel is set, else the space of the saturated form masked; opts
// are added to both.
func (d *design) choose(build ppl.BuildFunc, masked ppl.MaskedBuildFunc, s *Settings, shared int, opts ...ppl.SelectionOption) (*ppl.SelectionSpace, error) {
	opts = append([]ppl.SelectionOption{ppl.WithTermNames(d.names...), ppl.WithModelPrior(s.ModelPrior),
		ppl.WithModelCache(s.Cache), ppl.WithSelectionShared(shared)}, opts...)
	if s.PerModel {
		return ppl.NewSelectionSpace(d.p, build, opts...)
	}
	return ppl.NewMaskedSelectionSpace(d.p, masked, opts...)
}
