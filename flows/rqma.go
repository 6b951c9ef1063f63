package flows

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/scalar"
)

// ErrNonFinite is returned (wrapped) when a flow evaluation produces a NaN or
// infinite value, for example a point so far in the tails that the sigmoid
// saturates to exactly 0 or 1. Samplers treat it as a rejected proposal. It
// is the same value as the ErrNonFinite of packages ppl/diag and models/sas.
var ErrNonFinite = scalar.ErrNonFinite

// RQMAConfig is the architecture of a masked autoregressive
// rational-quadratic spline flow.
type RQMAConfig struct {
	// Layers is the number of [reverse permutation, autoregressive spline]
	// layers.
	Layers int
	// Bins is the number of spline bins per coordinate.
	Bins int
	// HiddenPerDim sets the MADE hidden width to HiddenPerDim·n units in each
	// of its two hidden layers.
	HiddenPerDim int
	// SigmoidScale c sets the squashing map h(v) = 1/(1+exp(−c·v)); 0 means 1.
	// The factor-analysis variant of the paper uses √(8/π), which makes h
	// close to the standard normal CDF.
	SigmoidScale float64
}

// PaperRQMAConfig returns the configuration of the paper's RQMA flows:
// 3 layers, 10 bins, MADE hidden width 32·n, plain sigmoid.
func PaperRQMAConfig() RQMAConfig {
	return RQMAConfig{Layers: 3, Bins: 10, HiddenPerDim: 32, SigmoidScale: 1}
}

func (c RQMAConfig) validate(n int) error {
	switch {
	case n < 1:
		return fmt.Errorf("flows: dimension %d < 1", n)
	case c.Layers < 1:
		return fmt.Errorf("flows: %d layers", c.Layers)
	case c.Bins < 1 || c.Bins > 100:
		return fmt.Errorf("flows: %d bins, need 1..100", c.Bins)
	case c.HiddenPerDim < 1:
		return fmt.Errorf("flows: hidden width per dimension %d < 1", c.HiddenPerDim)
	case c.SigmoidScale < 0 || math.IsNaN(c.SigmoidScale) || math.IsInf(c.SigmoidScale, 0):
		return fmt.Errorf("flows: sigmoid scale %v", c.SigmoidScale)
	}
	return nil
}

func (c RQMAConfig) sigmoidScale() float64 {
	if c.SigmoidScale == 0 {
		return 1
	}
	return c.SigmoidScale
}

// RQMA is the flow T = h⁻¹ ∘ F ∘ h ∘ s of the paper: s(θ) = b ⊙ (θ − a) a
// fixed standardisation, h an elementwise sigmoid, and F a stack of masked
// autoregressive rational-quadratic spline layers on [0, 1]^n. The reference
// is the standard normal. Forward (θ → z) is one parallel pass, which is what
// training by maximum likelihood needs; Inverse is exact and takes n
// sequential passes per layer.
//
// An RQMA keeps scratch space for single-point evaluations, so a value must
// not be used from several goroutines at once; use Clone.
type RQMA struct {
	cfg    RQMAConfig
	net    *stack
	params []float64
	shift  []float64 // a
	scale  []float64 // b, reciprocal standard deviations
	c      float64
	work   *pointWork
	buf    []float64
	progs  *rqmaPrograms // compiled maps, shared by clones
	fwd    *ad.Program   // this value's copies, made on first use
	inv    *ad.Program
	out    []float64 // their outputs: n values, then the log-determinant
}

// rqmaPrograms holds an RQMA's compiled forward and inverse maps, compiled
// on the first evaluation of the flow or of any of its clones (a fit does
// not evaluate them). They never evaluate themselves: each value evaluates
// its own clones of them, so any goroutine may clone them.
type rqmaPrograms struct {
	once     sync.Once
	fwd, inv *ad.Program
	err      error
}

// programs returns f's own compiled maps, compiling them on first use.
func (f *RQMA) programs() error {
	if f.fwd != nil {
		return nil
	}
	p := f.progs
	p.once.Do(func() {
		if p.fwd, p.err = f.compileForward(); p.err != nil {
			return
		}
		p.inv, p.err = f.compileInverse()
	})
	if p.err != nil {
		return p.err
	}
	f.fwd, f.inv = p.fwd.Clone(), p.inv.Clone()
	return nil
}

// NewRQMA returns an untrained RQMA flow on R^n, n = len(shift), with the
// standardisation s(θ) = scale ⊙ (θ − shift) and network weights initialised
// deterministically from seed.
func NewRQMA(shift, scale []float64, cfg RQMAConfig, seed uint64) (*RQMA, error) {
	n := len(shift)
	if err := cfg.validate(n); err != nil {
		return nil, err
	}
	if len(scale) != n {
		return nil, fmt.Errorf("flows: %d shifts but %d scales", n, len(scale))
	}
	for i := range shift {
		if !scalar.Finite(shift[i]) || !(scale[i] > 0) || math.IsInf(scale[i], 0) {
			return nil, fmt.Errorf("flows: standardisation %d: shift %v, scale %v", i, shift[i], scale[i])
		}
	}
	f := newRQMA(n, cfg)
	copy(f.shift, shift)
	copy(f.scale, scale)
	f.net.init(f.params, rand.New(rand.NewPCG(seed, 0x5eed)))
	f.progs = &rqmaPrograms{}
	f.out = make([]float64, n+1)
	return f, nil
}

func newRQMA(n int, cfg RQMAConfig) *RQMA {
	net := newStack(n, cfg.HiddenPerDim*n, cfg.Bins, 0, cfg.Layers)
	return &RQMA{
		cfg:    cfg,
		net:    net,
		params: make([]float64, net.numParams()),
		shift:  make([]float64, n),
		scale:  make([]float64, n),
		c:      cfg.sigmoidScale(),
		work:   net.newPointWork(),
		buf:    make([]float64, n),
	}
}

// Dim returns the dimension n of the flow.
func (f *RQMA) Dim() int { return f.net.n }

// Config returns the flow's architecture.
func (f *RQMA) Config() RQMAConfig { return f.cfg }

// NumParams returns the number of trainable parameters (masked weights, which
// are fixed at zero, included).
func (f *RQMA) NumParams() int { return len(f.params) }

// Clone returns a flow for another goroutine: it shares f's parameters and
// standardisation (a fitted flow never changes them) and owns its scratch
// space, so a clone costs a few buffers of the network's width.
func (f *RQMA) Clone() *RQMA {
	// Field by field: f's own programs may be set by a concurrent first
	// evaluation of f, so they are not read here.
	return &RQMA{
		cfg: f.cfg, net: f.net, params: f.params, shift: f.shift, scale: f.scale, c: f.c,
		work:  f.net.newPointWork(),
		buf:   make([]float64, f.net.n),
		progs: f.progs,
		out:   make([]float64, f.net.n+1),
	}
}

// Forward sets z = T(θ) and returns log|det J_T(θ)|.
func (f *RQMA) Forward(theta, z []float64) (float64, error) {
	return f.apply(false, theta, z)
}

// Inverse sets θ = T⁻¹(z) and returns log|det J_T⁻¹(z)| = −log|det J_T(θ)|.
func (f *RQMA) Inverse(z, theta []float64) (float64, error) {
	return f.apply(true, z, theta)
}

// apply runs the forward or inverse map on in, writes its value to out and
// returns its log-determinant.
func (f *RQMA) apply(inverse bool, in, out []float64) (float64, error) {
	dir := "Forward"
	if inverse {
		dir = "Inverse"
	}
	if n := f.net.n; len(in) != n || len(out) != n {
		return 0, fmt.Errorf("flows: %s on %d→%d values, flow dimension %d", dir, len(in), len(out), n)
	}
	if err := f.programs(); err != nil {
		return math.NaN(), err
	}
	p := f.fwd
	if inverse {
		p = f.inv
	}
	return mapResult(dir, p.Outputs(in, f.out), f.out, out)
}

// LogDensity returns the flow's log-density at θ, log N(T(θ); 0, I) +
// log|det J_T(θ)|. It uses the flow's scratch space like Forward.
func (f *RQMA) LogDensity(theta []float64) (float64, error) {
	z := f.work.b
	ld, err := f.Forward(theta, z)
	if err != nil {
		return math.Inf(-1), err
	}
	return stdNormalLogPDF(z) + ld, nil
}

const halfLog2Pi = 0.91893853320467274178

// mapResult finishes one evaluation of a compiled map in direction dir:
// the evaluation's error err, wrapped, or the map's outputs out (the
// mapped values, then the log-determinant) copied into dst and the
// log-determinant returned, or ErrNonFinite when any of them is not
// finite.
func mapResult(dir string, err error, out, dst []float64) (float64, error) {
	if err != nil {
		return math.NaN(), fmt.Errorf("flows: %s: %w", dir, err)
	}
	copy(dst, out[:len(dst)])
	ld := out[len(dst)]
	if !scalar.Finite(ld) || !scalar.AllFinite(dst) {
		return ld, fmt.Errorf("flows: %s: %w", dir, ErrNonFinite)
	}
	return ld, nil
}

func stdNormalLogPDF(z []float64) float64 {
	s := 0.0
	for _, v := range z {
		s -= 0.5 * v * v
	}
	return s - float64(len(z))*halfLog2Pi
}
