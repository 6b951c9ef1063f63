package trj

import (
	"fmt"
	"math"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// WithinMove is the chains' move within the current model after each jump
// proposal (ChainSettings.Within): NUTSMove (the default) or
// RandomWalkMove, each a value holding its own settings.
type WithinMove interface {
	// Name names the move ("NUTS" or "random walk").
	Name() string
	withDefaults() WithinMove
	validate() error
	// needsNUTS reports whether the move needs each model's adapted NUTS
	// kernel.
	needsNUTS() bool
	// factory returns a function that makes one chain's within-model
	// kernel, with its own clones of the models.
	factory(space *ppl.Space, pilots []*pilot) (func() (kernels.WithinModelKernel, error), error)
}

// NUTSMove is a NUTS transition with the step size and metric adapted in
// the pilot (or, for pilots that adapt none, in a short warm-up from
// them).
type NUTSMove struct{}

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

// Name returns "NUTS".
func (NUTSMove) Name() string { return "NUTS" }

// Name returns "random walk".
func (RandomWalkMove) Name() string { return "random walk" }

func (m NUTSMove) withDefaults() WithinMove { return m }

func (m RandomWalkMove) withDefaults() WithinMove {
	runs.OrDefault(&m.Scale, 2.38*2.38)
	return m
}

func (NUTSMove) validate() error { return nil }

func (m RandomWalkMove) validate() error {
	if !(m.Scale > 0) || math.IsInf(m.Scale, 0) {
		return fmt.Errorf("trj: random-walk scale %v (RandomWalkMove.Scale): need a finite value > 0", m.Scale)
	}
	return nil
}

func (NUTSMove) needsNUTS() bool       { return true }
func (RandomWalkMove) needsNUTS() bool { return false }

func (NUTSMove) factory(space *ppl.Space, pilots []*pilot) (func() (kernels.WithinModelKernel, error), error) {
	return func() (kernels.WithinModelKernel, error) { return withinKernel(space, pilots) }, nil
}

func (m RandomWalkMove) factory(space *ppl.Space, pilots []*pilot) (func() (kernels.WithinModelKernel, error), error) {
	train := make([][][]float64, len(pilots))
	for k, p := range pilots {
		train[k] = p.Train
	}
	cov, err := kernels.RandomWalkCovariances(train, m.Scale)
	if err != nil {
		return nil, err
	}
	return func() (kernels.WithinModelKernel, error) {
		return kernels.NewModelRandomWalk(space.Clone(), cov)
	}, nil
}

// withinMoveOf returns m as a value: NUTSMove for nil (and a nil
// pointer), the pointed-to value for a pointer to a move.
func withinMoveOf(m WithinMove) WithinMove {
	switch v := m.(type) {
	case nil:
		return NUTSMove{}
	case *NUTSMove:
		return NUTSMove{}
	case *RandomWalkMove:
		if v == nil {
			return RandomWalkMove{}
		}
		return *v
	}
	return m
}

// validateWithin checks the within-model and fixed-jump fields.
func (c *ChainSettings) validateWithin(numModels int) error {
	if err := c.Within.validate(); err != nil {
		return err
	}
	if c.Jump == nil {
		return nil
	}
	if len(c.Jump) != numModels {
		return fmt.Errorf("trj: %d fixed jump probabilities for %d models (Chains.Jump)", len(c.Jump), numModels)
	}
	var sum float64
	for k, p := range c.Jump {
		if !(p > 0) || math.IsInf(p, 0) {
			return fmt.Errorf("trj: fixed jump probability %d is %v (Chains.Jump): need a finite value > 0", k, p)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("trj: fixed jump probabilities sum to %v, want 1", sum)
	}
	return nil
}

// needsNUTS reports whether the run needs an adapted NUTS kernel for each
// model: for the within-model move, or for refreshing SMC particles.
func (s *Settings) needsNUTS() bool {
	smc, ok := s.Pilot.Method.(SMCPilots)
	return s.Chains.Within.needsNUTS() || (ok && s.Pilot.From == nil && smc.Refresh > 0)
}

// chainJumps is the chains' jump matrix: Chains.Jump for every row when
// set, else j_k(k') ∝ max(π̂(k'), JumpFloor) from the bridge estimate.
func (s *Settings) chainJumps(bridge []float64) ([][]float64, error) {
	if s.Chains.Jump != nil {
		return kernels.ProportionalJumps(s.Chains.Jump)
	}
	return jumpMatrix(bridge, s.Chains.JumpFloor)
}

// withinKernel is one NUTS kernel per model with the pilot's adaptation,
// over the chain's own model clones.
func withinKernel(space *ppl.Space, pilots []*pilot) (kernels.WithinModelKernel, error) {
	nuts := make([]*kernels.NUTS, len(pilots))
	for k, p := range pilots {
		m, err := space.Model(k)
		if err != nil {
			return nil, err
		}
		if nuts[k], err = kernels.NewNUTS(m.Clone(), p.StepSize, p.Metric); err != nil {
			return nil, err
		}
	}
	return kernels.NewNUTSWithin(nuts)
}
