package trj

import (
	"context"

	"github.com/trjgo/trj/kernels"
)

// IndependentAux runs CTRJ with the identity transport on the saturated
// space: a jump keeps the shared coordinates and draws the new ones from
// Aux, the independent-auxiliary proposal of Brooks, Giudici and Roberts
// (2003) when Aux is their prior. It fits nothing.
type IndependentAux struct {
	// Aux is the auxiliary density ν (the standard normal when nil).
	Aux kernels.AuxiliaryDensity
}

// Name implements Proposals.
func (a *IndependentAux) Name() string { return "identity" }

// Fit implements Proposals.
func (a *IndependentAux) Fit(_ context.Context, d *FitData) (FittedProposals, error) {
	return newCTRJFit(d.Space, nil, a.Aux, "identity"), nil
}
