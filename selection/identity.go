package selection

import (
	"context"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Identity is a baseline Proposal: the jumps use independent
// N(0, 1) auxiliaries and no transport (θ itself is the reference
// coordinate); the within-model moves use each model's Laplace fit as
// Laplace's do.
type Identity struct{}

func (Identity) String() string { return "identity" }

// Prepare implements Proposal.
func (Identity) Prepare(context.Context, *Preparation) (Proposer, error) {
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
