package trj

import (
	"context"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// SelectIdentity is a baseline SelectProposal: the jumps use independent
// N(0, 1) auxiliaries and no transport (θ itself is the reference
// coordinate); the within-model moves use each model's Laplace fit as
// SelectLaplace's do.
type SelectIdentity struct{}

func (SelectIdentity) String() string { return "identity" }

// Prepare implements SelectProposal.
func (SelectIdentity) Prepare(context.Context, *SelectPrepare) (SelectProposer, error) {
	return identityProposer{}, nil
}

type identityProposer struct{}

func (identityProposer) Laplace() bool { return true }
func (identityProposer) Model(_ ppl.Terms, m *ppl.GraphModel, lap *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	return identityTransport(m.Dim()), lap, nil
}

// identityTransport is z = θ.
type identityTransport int

func (d identityTransport) Dim() int { return int(d) }
func (d identityTransport) Forward(theta, z []float64) (float64, error) {
	copy(z, theta)
	return 0, nil
}
func (d identityTransport) Inverse(z, theta []float64) (float64, error) {
	copy(theta, z)
	return 0, nil
}
