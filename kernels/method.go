package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trjgo/trj/ppl/draws"
	"gonum.org/v1/gonum/mat"
)

// Method is the kernel every chain of Sample runs, with its warm-up:
// NUTSMethod or RWMMethod, or a method of the caller's own. A nil Method in
// SampleSettings means NUTSMethod{}.
type Method interface {
	// DiagnosticColumns names the CmdStan sampler columns of the method's
	// draws, in order (DrawInfo.AppendDiagnostics writes their values).
	DiagnosticColumns() []string
	// NewChain returns a chain of the method on t, the chain's own target,
	// starting at x0, a point of finite log-density that the chain may keep,
	// with warmup warm-up iterations to come. Sample calls it once per
	// chain, from the chain's goroutine.
	NewChain(t Target, x0 []float64, warmup int) (MethodChain, error)
}

// MethodChain is one chain of a Method. Sample calls it from the chain's
// goroutine only: Step for every iteration, the warm-up ones first, and
// Adapted once between the last warm-up and the first kept iteration
// (also when there is no warm-up).
type MethodChain interface {
	// Step makes iteration it (0-based, warm-up first) and returns the new
	// position, valid until the next call, and its record. Warm-up
	// iterations adapt the kernel; an error stops the chain.
	Step(rng *rand.Rand, it int) ([]float64, DrawInfo, error)
	// Adapted writes what the warm-up adapted into ch: StepSize and Metric
	// for NUTS, RWMScale and RWMCovariance for RWM.
	Adapted(ch *Chain)
	// GradEvals counts the log-density evaluations (with gradient for
	// NUTS) so far, excluding the initialization.
	GradEvals() int
}

// validator is a Method that can refuse its settings before any chain
// starts; Sample asks it first.
type validator interface {
	validate() error
}

// NUTSMethod runs the No-U-Turn sampler with Stan's warm-up. Zero fields
// take the defaults.
type NUTSMethod struct {
	// StepSize is the initial step size (1) before the search.
	StepSize float64
	// Metric, when non-nil, is the initial metric (the unit metric); with
	// no warm-up it is used as is.
	Metric *Metric
	// MaxTreeDepth bounds the trees (10).
	MaxTreeDepth int
	// Adapt configures the warm-up; its Metric field picks the metric to
	// adapt (diagonal by default).
	Adapt NUTSAdaptConfig
}

func (m NUTSMethod) validate() error {
	switch {
	case m.StepSize != 0 && (!(m.StepSize > 0) || math.IsInf(m.StepSize, 1)):
		return fmt.Errorf("kernels: initial step size %v, want positive and finite", m.StepSize)
	case m.MaxTreeDepth < 0:
		return fmt.Errorf("kernels: maximum tree depth %d, want positive (0 means %d)", m.MaxTreeDepth, DefaultMaxTreeDepth)
	}
	return nil
}

func (m NUTSMethod) withDefaults() NUTSMethod {
	setDefault(&m.StepSize, 1)
	setDefault(&m.MaxTreeDepth, DefaultMaxTreeDepth)
	return m
}

// DiagnosticColumns returns CmdStan's seven NUTS columns
// (draws.NUTSColumns).
func (NUTSMethod) DiagnosticColumns() []string { return draws.NUTSColumns() }

// NewChain implements Method.
func (m NUTSMethod) NewChain(t Target, x0 []float64, warmup int) (MethodChain, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	m = m.withDefaults()
	k, err := NewNUTS(t, m.StepSize, m.Metric)
	if err != nil {
		return nil, err
	}
	k.MaxTreeDepth = m.MaxTreeDepth
	s, err := k.Init(x0)
	if err != nil {
		return nil, err
	}
	ad, err := NewNUTSAdaptation(k, warmup, m.Adapt)
	if err != nil {
		return nil, err
	}
	return &nutsChain{k: k, ad: ad, s: s, warmup: warmup}, nil
}

// nutsChain is a chain of NUTSMethod.
type nutsChain struct {
	k      *NUTS
	ad     *NUTSAdaptation
	s      NUTSState
	warmup int
	evals  int // leapfrog steps after the warm-up
}

func (c *nutsChain) Step(rng *rand.Rand, it int) ([]float64, DrawInfo, error) {
	var info NUTSInfo
	if it < c.warmup {
		var err error
		if c.s, info, err = c.ad.Step(rng, c.s); err != nil {
			return nil, DrawInfo{}, err
		}
		if it == c.warmup-1 {
			c.ad.Finish()
		}
	} else {
		c.s, info = c.k.Step(rng, c.s)
		c.evals += info.NumLeapfrog
	}
	return c.s.Position, DrawInfo{
		LogDensity: c.s.LogDensity, AcceptStat: info.AcceptProb, StepSize: info.StepSize,
		TreeDepth: info.TreeDepth, NumLeapfrog: info.NumLeapfrog, Divergent: info.Divergent, Energy: info.Energy,
	}, nil
}

func (c *nutsChain) Adapted(ch *Chain) { ch.StepSize, ch.Metric = c.k.StepSize, c.k.Metric }

func (c *nutsChain) GradEvals() int { return c.ad.GradEvals + c.evals }

// RWMMethod runs random-walk Metropolis with Robbins–Monro scale
// adaptation. Zero fields take the defaults.
type RWMMethod struct {
	// Scale is the initial proposal scale (2.38/√d).
	Scale float64
	// Covariance, when non-nil, is the initial proposal covariance (a
	// fixed covariance with no warm-up).
	Covariance mat.Symmetric
	// Adapt configures the warm-up.
	Adapt RWMAdaptConfig
}

func (m RWMMethod) validate() error {
	if m.Scale != 0 && (!(m.Scale > 0) || math.IsInf(m.Scale, 1)) {
		return fmt.Errorf("kernels: initial proposal scale %v, want positive and finite", m.Scale)
	}
	return nil
}

// DiagnosticColumns returns lp__, accept_stat__ and stepsize__ (the
// proposal scale).
func (RWMMethod) DiagnosticColumns() []string {
	return []string{draws.LP, draws.AcceptStat, draws.StepSize}
}

// NewChain implements Method.
func (m RWMMethod) NewChain(t Target, x0 []float64, warmup int) (MethodChain, error) {
	setDefault(&m.Scale, 2.38/math.Sqrt(float64(t.Dim())))
	k, err := NewRWM(t, m.Scale, m.Covariance)
	if err != nil {
		return nil, err
	}
	s, err := k.Init(x0)
	if err != nil {
		return nil, err
	}
	ad, err := NewRWMAdaptation(k, warmup, m.Adapt)
	if err != nil {
		return nil, err
	}
	return &rwmChain{k: k, ad: ad, s: s, warmup: warmup}, nil
}

// rwmChain is a chain of RWMMethod.
type rwmChain struct {
	k      *RWM
	ad     *RWMAdaptation
	s      RWMState
	warmup int
	evals  int
}

func (c *rwmChain) Step(rng *rand.Rand, it int) ([]float64, DrawInfo, error) {
	var info RWMInfo
	if it < c.warmup {
		var err error
		if c.s, info, err = c.ad.Step(rng, c.s); err != nil {
			return nil, DrawInfo{}, err
		}
	} else {
		c.s, info = c.k.Step(rng, c.s)
	}
	c.evals++
	return c.s.Position, DrawInfo{LogDensity: c.s.LogDensity, AcceptStat: info.AcceptProb, StepSize: info.Scale}, nil
}

func (c *rwmChain) Adapted(ch *Chain) { ch.RWMScale, ch.RWMCovariance = c.k.Scale, c.k.Covariance() }

func (c *rwmChain) GradEvals() int { return c.evals }

// orNUTS returns m, or NUTSMethod{} when m is nil.
func orNUTS(m Method) Method {
	if m == nil {
		return NUTSMethod{}
	}
	return m
}
