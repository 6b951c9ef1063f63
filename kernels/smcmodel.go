package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// SplitModel is a TemperedModel made of two Targets, the log prior and
// the log likelihood (two compiled ad.Programs, say), and a prior sampler.
// It keeps scratch space, so each SMC worker needs its own. A model built
// with ppl needs none of this: (*ppl.GraphModel).Tempered returns its
// TemperedModel, prior sampler included.
type SplitModel struct {
	prior, lik Target
	sample     func(rng *rand.Rand, x []float64) error
	gp, gl     []float64
}

// NewSplitModel returns the TemperedModel with log prior prior, log
// likelihood lik and prior draws from sample; the two targets must have
// the same dimension.
func NewSplitModel(prior, lik Target, sample func(rng *rand.Rand, x []float64) error) (*SplitModel, error) {
	if prior == nil || lik == nil || sample == nil {
		return nil, errors.New("kernels: SplitModel needs a prior, a likelihood and a prior sampler")
	}
	n := prior.Dim()
	if n <= 0 || lik.Dim() != n {
		return nil, fmt.Errorf("%w: prior dimension %d, likelihood dimension %d", ErrDimension, n, lik.Dim())
	}
	return &SplitModel{prior: prior, lik: lik, sample: sample, gp: make([]float64, n), gl: make([]float64, n)}, nil
}

// Dim returns the dimension.
func (m *SplitModel) Dim() int { return m.prior.Dim() }

// LogPriorLik evaluates both targets; without gradient buffers it uses
// the targets' gradient-free evaluation when they have one.
func (m *SplitModel) LogPriorLik(x, gradPrior, gradLik []float64) (float64, float64, error) {
	if len(x) != len(m.gp) {
		return 0, 0, fmt.Errorf("%w: position has length %d, model dimension %d", ErrDimension, len(x), len(m.gp))
	}
	if gradPrior == nil || gradLik == nil {
		lp, err := valueOf(m.prior, x, m.gp)
		if err != nil {
			return 0, 0, err
		}
		ll, err := valueOf(m.lik, x, m.gl)
		return lp, ll, err
	}
	lp, err := m.prior.LogDensityGrad(x, gradPrior)
	if err != nil {
		return 0, 0, err
	}
	ll, err := m.lik.LogDensityGrad(x, gradLik)
	return lp, ll, err
}

// SamplePrior draws x from the prior.
func (m *SplitModel) SamplePrior(rng *rand.Rand, x []float64) error { return m.sample(rng, x) }

func valueOf(t Target, x, scratch []float64) (float64, error) {
	if ld, ok := t.(logDensityer); ok {
		return ld.LogDensity(x)
	}
	return t.LogDensityGrad(x, scratch)
}
