package docs_test

// The within-model-move example of architecture.md, checked by
// TestExtendPilotAndMove.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// snippet:move
// coordinateMove is a within-model move of one's own: a Metropolis random
// walk on one coordinate of θ_k at a time, its step Scale times that
// coordinate's standard deviation in model k's training draws.
type coordinateMove struct{ Scale float64 }

func (coordinateMove) Name() string { return "coordinate walk" }

// CheckSpace (trj.SpaceChecker) refuses a bad scale before any work.
func (m coordinateMove) CheckSpace(*ppl.Space) error {
	if !(m.Scale > 0) || math.IsInf(m.Scale, 1) {
		return fmt.Errorf("coordinateMove: Scale = %v: need a finite value > 0", m.Scale)
	}
	return nil
}

// Fit computes every model's steps from its pilot, once; each chain's
// kernel then gets its own clone of the space, which keeps scratch space,
// and shares the steps, which it only reads.
func (m coordinateMove) Fit(_ context.Context, d *trj.FitData) (func() (kernels.WithinModelKernel, error), error) {
	steps := make([][]float64, len(d.Pilots))
	for k, p := range d.Pilots {
		col := make([]float64, len(p.Train))
		for i := range d.Space.ModelDim(k) {
			for r, x := range p.Train {
				col[r] = x[i]
			}
			steps[k] = append(steps[k], m.Scale*stat.StdDev(col, nil))
		}
	}
	return func() (kernels.WithinModelKernel, error) {
		return &coordinateKernel{target: d.Space.Clone(), steps: steps}, nil
	}, nil
}

// coordinateKernel is one chain's kernel.
type coordinateKernel struct {
	target kernels.TransdimensionalTarget
	steps  [][]float64
}

// Step implements kernels.WithinModelKernel: a failing or non-finite
// density rejects.
func (w *coordinateKernel) Step(rng *rand.Rand, k int, theta []float64, logDensity float64) (float64, bool) {
	moved := false
	for i, old := range theta {
		theta[i] = old + w.steps[k][i]*rng.NormFloat64()
		lp, err := w.target.LogDensity(k, theta)
		if err == nil && !math.IsNaN(lp) && math.Log(rng.Float64()) < lp-logDensity {
			logDensity, moved = lp, true
			continue
		}
		theta[i] = old
	}
	return logDensity, moved
}

// endsnippet:move
