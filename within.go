package trj

import (
	"context"
	"fmt"
	"math"

	"github.com/trjgo/trj/kernels"
)

// WithinMove is the chains' move within the current model after each jump
// proposal (ChainSettings.Within). The moves of this package are NUTSMove
// (the default) and RandomWalkMove, one file each; a move of one's own
// implements this interface (docs/pilot_test.go shows one). A move that
// implements SpaceChecker has its settings checked before any work.
type WithinMove interface {
	// Name names the move ("NUTS" or "random walk").
	Name() string
	// Fit prepares the move from every model's pilot (d.Pilots, fitted
	// once before the chains start; it may add to a pilot what a later
	// run reusing it can use, as NUTSMove adds its adapted kernel) and
	// returns a function that makes one chain's kernel. Run calls that
	// function once per chain, from several goroutines at once: each
	// kernel must have its own clones of the models (d.Space.Clone) and of
	// anything else with scratch space. Fit may use several goroutines;
	// ctx cancels it.
	Fit(ctx context.Context, d *FitData) (func() (kernels.WithinModelKernel, error), error)
}

// validateWithin checks the fixed-jump fields.
func (c *ChainSettings) validateWithin(numModels int) error {
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

// chainJumps is the chains' jump matrix: Chains.Jump for every row when
// set, else j_k(k') ∝ max(π̂(k'), JumpFloor) from the bridge estimate.
func (s *Settings) chainJumps(bridge []float64) ([][]float64, error) {
	if s.Chains.Jump != nil {
		return kernels.ProportionalJumps(s.Chains.Jump)
	}
	return jumpMatrix(bridge, s.Chains.JumpFloor)
}
