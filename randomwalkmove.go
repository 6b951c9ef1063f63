package trj

import (
	"context"
	"fmt"
	"math"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// RandomWalkMove is Gaussian random-walk Metropolis with the fixed proposal
// N(0, Σ_k), Σ_k = Scale/n_k · Cov(training draws of model k) in
// unconstrained coordinates: the within-model move of the paper's chains.
// It needs no gradient and no NUTS adaptation, so with GivenPilots' draws
// none runs.
type RandomWalkMove struct {
	// Scale multiplies the training draws' covariance divided by the
	// dimension (2.38², the scaling of Roberts, Gelman and Gilks 1997).
	Scale float64
}

// Name returns "random walk".
func (RandomWalkMove) Name() string { return "random walk" }

func (m RandomWalkMove) withDefaults() WithinMove { return m.defaults() }

func (m RandomWalkMove) defaults() RandomWalkMove {
	runs.OrDefault(&m.Scale, 2.38*2.38)
	return m
}

// CheckSpace refuses a scale that is not finite and positive.
func (m RandomWalkMove) CheckSpace(*ppl.Space) error {
	m = m.defaults()
	if !(m.Scale > 0) || math.IsInf(m.Scale, 0) {
		return fmt.Errorf("random-walk scale %v (RandomWalkMove.Scale): need a finite value > 0", m.Scale)
	}
	return nil
}

// Fit computes every model's proposal covariance from its pilot's
// training draws.
func (m RandomWalkMove) Fit(_ context.Context, d *FitData) (func() (kernels.WithinModelKernel, error), error) {
	m = m.defaults()
	train := make([][][]float64, len(d.Pilots))
	for k, p := range d.Pilots {
		train[k] = p.Train
	}
	cov, err := kernels.RandomWalkCovariances(train, m.Scale)
	if err != nil {
		return nil, err
	}
	space := d.Space
	return func() (kernels.WithinModelKernel, error) {
		return kernels.NewModelRandomWalk(space.Clone(), cov)
	}, nil
}
