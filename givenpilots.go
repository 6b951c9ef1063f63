package trj

import (
	"context"
	"fmt"

	"github.com/trjgo/trj/ppl"
)

// GivenPilots takes each model's pilot from draws made elsewhere.
type GivenPilots struct {
	// Draws gives each model's unconstrained draws: Draws[k][g] is group g
	// of model k's draws (groups are independent, such as separate
	// chains); the first half of the groups train, the second half
	// evaluate. Every model needs an even number of groups, at least 2.
	Draws [][][][]float64
}

// Name returns "given".
func (GivenPilots) Name() string { return "given" }

// CheckSpace refuses draws given for another number of models than the
// space's.
func (p GivenPilots) CheckSpace(space *ppl.Space) error {
	if len(p.Draws) != space.NumModels() {
		return fmt.Errorf("pilot draws given for %d models (GivenPilots.Draws), the space has %d", len(p.Draws), space.NumModels())
	}
	return nil
}

// Pilot splits the model's groups of draws into training and evaluation
// halves, after checking them.
func (ps GivenPilots) Pilot(_ context.Context, job *PilotJob) (*Pilot, error) {
	if job.K >= len(ps.Draws) {
		return nil, fmt.Errorf("no draws given for model %d (GivenPilots.Draws has %d models)", job.K, len(ps.Draws))
	}
	g := ps.Draws[job.K]
	if len(g) < 2 || len(g)%2 != 0 {
		return nil, fmt.Errorf("%d groups of given draws: need an even number ≥ 2", len(g))
	}
	p := &pilot{}
	for i, grp := range g {
		if len(grp) == 0 {
			return nil, fmt.Errorf("given draw group %d is empty", i)
		}
		for j, x := range grp {
			if len(x) != job.Model.Dim() {
				return nil, fmt.Errorf("given draw %d of group %d has length %d, the model has dimension %d", j, i, len(x), job.Model.Dim())
			}
			if !allFinite(x) {
				return nil, fmt.Errorf("given draw %d of group %d is not finite", j, i)
			}
		}
		if i < len(g)/2 {
			p.Train = append(p.Train, grp...)
		} else {
			p.Eval = append(p.Eval, grp)
		}
	}
	return p, nil
}
