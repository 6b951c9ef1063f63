package selection

import (
	"context"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Laplace is a Proposal that gives each model, on its first
// visit, the affine transport of its Laplace approximation (mode by
// Newton's method, Hessian by finite differences of the compiled gradient):
// no pilot run, and a jump between two nearly Gaussian posteriors is
// accepted with about the ratio of their evidences. The within-model moves
// draw from the same Gaussian and walk in its whitened coordinates. Its
// fits (finite-difference Hessians) cost more than the default
// FullConditional's single one; it is the default when
// Settings.Informed needs every model's evidence.
type Laplace struct{}

func (Laplace) String() string { return "laplace" }

// Prepare implements Proposal.
func (Laplace) Prepare(context.Context, *Preparation) (Proposer, error) {
	return laplaceProposer{}, nil
}

type laplaceProposer struct{}

func (laplaceProposer) Laplace() bool { return true }
func (laplaceProposer) Model(_ ppl.Terms, _ *ppl.GraphModel, lap *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	return lap, lap, nil
}
