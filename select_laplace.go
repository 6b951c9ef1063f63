package trj

import (
	"context"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// SelectLaplace is a SelectProposal that gives each model, on its first
// visit, the affine transport of its Laplace approximation (mode by
// Newton's method, Hessian by finite differences of the compiled gradient):
// no pilot run, and a jump between two nearly Gaussian posteriors is
// accepted with about the ratio of their evidences. The within-model moves
// draw from the same Gaussian and walk in its whitened coordinates. Its
// fits (finite-difference Hessians) cost more than the default
// SelectFullConditional's single one; it is the default when
// SelectSettings.Informed needs every model's evidence.
type SelectLaplace struct{}

func (SelectLaplace) String() string { return "laplace" }

// Prepare implements SelectProposal.
func (SelectLaplace) Prepare(context.Context, *SelectPrepare) (SelectProposer, error) {
	return laplaceProposer{}, nil
}

type laplaceProposer struct{}

func (laplaceProposer) Laplace() bool { return true }
func (laplaceProposer) Model(_ ppl.Terms, _ *ppl.GraphModel, lap *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	return lap, lap, nil
}
