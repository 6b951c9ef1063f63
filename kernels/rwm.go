package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// RWMState is the state of a random-walk Metropolis chain.
type RWMState struct {
	Position   []float64
	LogDensity float64
}

// RWMInfo records what one random-walk Metropolis transition did.
type RWMInfo struct {
	// AcceptProb is min(1, p(x')/p(x)) for the proposal x'.
	AcceptProb float64
	// Accepted reports whether the chain moved to x'.
	Accepted bool
	// Scale is the proposal scale used.
	Scale float64
}

// RWM is random-walk Metropolis with Gaussian proposals
// x' = x + Scale·L·z, z ~ N(0, I), where L·Lᵀ = Σ is the proposal
// covariance (the identity unless set). Its proposal is symmetric, so the
// acceptance probability is the density ratio. An RWM value owns scratch
// space, so it serves one chain.
type RWM struct {
	// Scale multiplies the proposal's standard deviations; it must be
	// positive.
	Scale float64

	target Target
	dim    int
	chol   []float64 // row-major lower factor of Σ; nil is the identity
	prop   []float64
	grad   []float64
}

// checkKernelArgs checks what NewNUTS and NewRWM share, a target of
// positive dimension and a positive finite step (named what), and returns
// the dimension.
func checkKernelArgs(t Target, what string, step float64) (int, error) {
	if t == nil {
		return 0, errors.New("kernels: nil target")
	}
	n := t.Dim()
	if n <= 0 {
		return 0, fmt.Errorf("%w: target dimension %d", ErrDimension, n)
	}
	if !(step > 0) || math.IsInf(step, 1) {
		return 0, fmt.Errorf("kernels: %s %v, want positive and finite", what, step)
	}
	return n, nil
}

// NewRWM returns a random-walk Metropolis kernel for t with proposal
// N(0, scale²·cov); a nil cov means the identity.
func NewRWM(t Target, scale float64, cov mat.Symmetric) (*RWM, error) {
	n, err := checkKernelArgs(t, "proposal scale", scale)
	if err != nil {
		return nil, err
	}
	k := &RWM{Scale: scale, target: t, dim: n, prop: make([]float64, n), grad: make([]float64, n)}
	if cov != nil {
		if err := k.SetCovariance(cov); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// SetCovariance sets the proposal covariance Σ (before scaling), which must
// be symmetric positive definite; nil restores the identity.
func (k *RWM) SetCovariance(cov mat.Symmetric) error {
	if cov == nil {
		k.chol = nil
		return nil
	}
	if n := cov.SymmetricDim(); n != k.dim {
		return fmt.Errorf("%w: covariance is %d×%d, target dimension %d", ErrDimension, n, n, k.dim)
	}
	l, err := choleskyLower(cov)
	if err != nil {
		return fmt.Errorf("kernels: proposal covariance: %w", err)
	}
	k.chol = l
	return nil
}

// Covariance returns a copy of the proposal covariance Σ before scaling.
func (k *RWM) Covariance() *mat.SymDense {
	out := mat.NewSymDense(k.dim, nil)
	n := k.dim
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if k.chol == nil {
				if i == j {
					out.SetSym(i, i, 1)
				}
				continue
			}
			s := 0.0
			for m := 0; m <= i; m++ {
				s += k.chol[i*n+m] * k.chol[j*n+m]
			}
			out.SetSym(i, j, s)
		}
	}
	return out
}

// Target returns the kernel's target.
func (k *RWM) Target() Target { return k.target }

// Init returns a state at a copy of x. It fails if the log-density there
// is not finite.
func (k *RWM) Init(x []float64) (RWMState, error) {
	if len(x) != k.dim {
		return RWMState{}, fmt.Errorf("%w: position has length %d, target dimension %d", ErrDimension, len(x), k.dim)
	}
	s := RWMState{Position: append([]float64(nil), x...)}
	s.LogDensity = evalValue(k.target, s.Position, k.grad)
	if math.IsInf(s.LogDensity, -1) {
		return RWMState{}, initialPointError(k.target, s.Position, k.grad, false)
	}
	return s, nil
}

// Step runs one Metropolis transition from s, writing an accepted position
// into s.Position; s must not be used afterwards except through the
// returned value. Step does not allocate.
func (k *RWM) Step(rng *rand.Rand, s RWMState) (RWMState, RWMInfo) {
	n := k.dim
	if k.chol == nil {
		for i := range k.prop {
			k.prop[i] = s.Position[i] + k.Scale*rng.NormFloat64()
		}
	} else {
		// Draw z into prop first, then form x + scale·L·z from the bottom
		// row up so that each z_j is read before it is overwritten.
		for i := range k.prop {
			k.prop[i] = rng.NormFloat64()
		}
		for i := n - 1; i >= 0; i-- {
			row := k.chol[i*n : i*n+i+1]
			v := 0.0
			for j, l := range row {
				v += l * k.prop[j]
			}
			k.prop[i] = s.Position[i] + k.Scale*v
		}
	}
	lp := evalValue(k.target, k.prop, k.grad)
	info := RWMInfo{Scale: k.Scale}
	logRatio := lp - s.LogDensity
	switch {
	case math.IsInf(lp, -1):
		info.AcceptProb = 0
	case logRatio >= 0:
		info.AcceptProb = 1
	default:
		info.AcceptProb = math.Exp(logRatio)
	}
	if info.AcceptProb == 1 || rng.Float64() < info.AcceptProb {
		info.Accepted = true
		copy(s.Position, k.prop)
		s.LogDensity = lp
	}
	return s, info
}

// RWMAdaptConfig sets the warm-up of random-walk Metropolis. Zero fields
// take the defaults.
type RWMAdaptConfig struct {
	// TargetAccept is the acceptance rate the scale is driven to (0.234,
	// optimal for many high-dimensional targets).
	TargetAccept float64
	// GainExponent is κ in the Robbins–Monro gain t^(−κ) (0.6); it must be
	// in (0.5, 1] for the scale to converge.
	GainExponent float64
	// AdaptCovariance estimates the proposal covariance from warm-up draws
	// (Haario et al. 2001), updating it at the ends of Stan-style slow
	// windows (InitBuffer 75, BaseWindow 25, TermBuffer 50) from every
	// slow-window draw after the first window; the scale restarts at
	// 2.38/√d after the first update.
	AdaptCovariance                    bool
	InitBuffer, BaseWindow, TermBuffer int
}

// maxRWMScale bounds the adapted random-walk scale, as NUTS's step size
// search is bounded: positions on the unconstrained scale are O(1)–O(100).
const maxRWMScale = 1e7

// RWMAdaptation tunes an RWM kernel during warm-up: Robbins–Monro on the
// log scale toward TargetAccept, and optionally the proposal covariance.
// Call Step once per warm-up iteration.
type RWMAdaptation struct {
	kernel   *RWM
	cfg      RWMAdaptConfig
	win      windows
	acc      *welford
	t        int
	logScale float64
	iter     int
	covSet   bool
}

// NewRWMAdaptation prepares numWarmup iterations of adaptation for k.
func NewRWMAdaptation(k *RWM, numWarmup int, cfg RWMAdaptConfig) (*RWMAdaptation, error) {
	if k == nil {
		return nil, errors.New("kernels: nil RWM kernel")
	}
	setDefault(&cfg.TargetAccept, 0.234)
	setDefault(&cfg.GainExponent, 0.6)
	setDefault(&cfg.InitBuffer, 75)
	setDefault(&cfg.BaseWindow, 25)
	setDefault(&cfg.TermBuffer, 50)
	if !(cfg.TargetAccept > 0 && cfg.TargetAccept < 1) {
		return nil, fmt.Errorf("kernels: target acceptance %v, want in (0, 1)", cfg.TargetAccept)
	}
	if !(cfg.GainExponent > 0.5 && cfg.GainExponent <= 1) {
		return nil, fmt.Errorf("kernels: gain exponent %v, want in (0.5, 1]", cfg.GainExponent)
	}
	if numWarmup < 0 {
		return nil, fmt.Errorf("kernels: %d warm-up iterations", numWarmup)
	}
	a := &RWMAdaptation{kernel: k, cfg: cfg, logScale: math.Log(k.Scale)}
	if cfg.AdaptCovariance {
		a.win = newWindows(numWarmup, cfg.InitBuffer, cfg.TermBuffer, cfg.BaseWindow)
		a.acc = newWelford(k.dim, true)
	}
	return a, nil
}

// Step runs one warm-up iteration: a transition, then the updates.
func (a *RWMAdaptation) Step(rng *rand.Rand, s RWMState) (RWMState, RWMInfo, error) {
	k := a.kernel
	s, info := k.Step(rng, s)
	a.t++
	a.logScale += math.Pow(float64(a.t), -a.cfg.GainExponent) * (info.AcceptProb - a.cfg.TargetAccept)
	// Keep the scale representable whatever the target does.
	a.logScale = math.Max(-700, math.Min(700, a.logScale))
	k.Scale = math.Exp(a.logScale)
	if k.Scale > maxRWMScale {
		// Proposals this far are accepted only by a density that does
		// not fall off: the draws would run off to infinity.
		return s, info, fmt.Errorf("kernels: random-walk scale grew past %g at warm-up iteration %d (acceptance %.2f); the posterior may be improper", maxRWMScale, a.iter+1, info.AcceptProb)
	}
	m, err := windowEstimate(a.win, a.acc, a.iter, s.Position, "covariance")
	if err != nil {
		return s, info, err
	}
	if m != nil {
		if err := k.SetCovariance(m.InvMass()); err != nil {
			return s, info, err
		}
		// Random-walk draws are strongly autocorrelated, so later
		// estimates pool every slow window; only the first, which may
		// hold the transient, is forgotten. The first update changes
		// the proposal's shape entirely, so the scale restarts at the
		// optimum for a Gaussian target, 2.38/√d.
		if !a.covSet {
			a.covSet = true
			a.acc.reset()
			a.t = 0
			a.logScale = math.Log(2.38 / math.Sqrt(float64(k.dim)))
			k.Scale = math.Exp(a.logScale)
		}
	}
	a.iter++
	return s, info, nil
}
