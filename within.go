package trj

import (
	"fmt"
	"math"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// WithinKind selects the chains' within-model move (ChainSettings.Within).
type WithinKind int

const (
	// WithinNUTS is a NUTS transition with the step size and metric adapted
	// in the pilot (the default).
	WithinNUTS WithinKind = iota
	// WithinRandomWalk is Gaussian random-walk Metropolis with the fixed
	// proposal N(0, Σ_k), Σ_k = RWScale/n_k · Cov(training draws of model
	// k) in unconstrained coordinates: the within-model move of the
	// paper's chains. It needs no gradient and no NUTS adaptation, so with
	// PilotGiven draws none runs.
	WithinRandomWalk
)

// String names the kind.
func (w WithinKind) String() string {
	switch w {
	case WithinNUTS:
		return "NUTS"
	case WithinRandomWalk:
		return "random walk"
	}
	return fmt.Sprintf("WithinKind(%d)", int(w))
}

// defaultRWScale is the classic 2.38² random-walk scaling (Roberts, Gelman
// and Gilks 1997), divided by the dimension in Σ_k.
const defaultRWScale = 2.38 * 2.38

// validateWithin checks the within-model and fixed-jump fields.
func (c *ChainSettings) validateWithin(numModels int) error {
	switch {
	case c.Within < WithinNUTS || c.Within > WithinRandomWalk:
		return fmt.Errorf("trj: unknown within-model kind %d (Chains.Within)", int(c.Within))
	case !(c.RWScale > 0) || math.IsInf(c.RWScale, 0):
		return fmt.Errorf("trj: random-walk scale %v (Chains.RWScale): need a finite value > 0", c.RWScale)
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
	return s.Chains.Within == WithinNUTS || (s.Pilot.Method == PilotSMC && s.Pilot.From == nil && s.Pilot.Refresh > 0)
}

// chainJumps is the chains' jump matrix: Chains.Jump for every row when
// set, else j_k(k') ∝ max(π̂(k'), JumpFloor) from the bridge estimate.
func (s *Settings) chainJumps(bridge []float64) ([][]float64, error) {
	if s.Chains.Jump != nil {
		return kernels.ProportionalJumps(s.Chains.Jump)
	}
	return jumpMatrix(bridge, s.Chains.JumpFloor)
}

// withinFactory returns a function that makes one chain's within-model
// kernel, with its own clones of the models.
func (s *Settings) withinFactory(space *ppl.Space, pilots []*pilot) (func() (kernels.WithinModelKernel, error), error) {
	if s.Chains.Within == WithinNUTS {
		return func() (kernels.WithinModelKernel, error) { return withinKernel(space, pilots) }, nil
	}
	train := make([][][]float64, len(pilots))
	for k, p := range pilots {
		train[k] = p.Train
	}
	cov, err := kernels.RandomWalkCovariances(train, s.Chains.RWScale)
	if err != nil {
		return nil, err
	}
	return func() (kernels.WithinModelKernel, error) {
		return kernels.NewModelRandomWalk(space.Clone(), cov)
	}, nil
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
