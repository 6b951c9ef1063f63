package selection

import (
	"context"
	"errors"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// ModelPosterior (the default Proposal on a space that has them) takes
// each model's transport from the Gaussian posterior approximation its
// space gives in closed form (ppl.WithModelPosterior), such as
// glmselect.Gaussian's under a fixed-g g-prior: no fit and no pilot, one
// small factorisation per model, and, where the approximation is exact in
// the coefficients, jumps nearly as good as a sampler on the closed-form
// evidences. Models get no Laplace evidence (the space's exact ones, if
// any, are reported).
type ModelPosterior struct{}

func (ModelPosterior) String() string { return "posterior" }

// Prepare checks that the space gives its models' posteriors.
func (ModelPosterior) Prepare(_ context.Context, in *Preparation) (Proposer, error) {
	if !in.Space.HasPosterior() {
		return nil, errors.New("the space gives no model posteriors (ppl.WithModelPosterior); use another family")
	}
	return modelPosteriorProposer{sp: in.Space}, nil
}

type modelPosteriorProposer struct{ sp *ppl.SelectionSpace }

func (modelPosteriorProposer) Laplace() bool { return false }

func (p modelPosteriorProposer) Model(tm ppl.Terms, _ *ppl.GraphModel, _ *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	mean, prec, err := p.sp.ModelPosterior(tm)
	if err != nil {
		return nil, nil, err
	}
	t, err := flows.NewLaplace(mean, prec)
	return t, t, err
}
