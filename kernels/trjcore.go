package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// TransdimensionalTarget is a density π(k, θ_k) on a finite union of models
// k = 0, …, NumModels()−1, model k having parameters θ_k ∈ R^{ModelDim(k)}.
// LogDensity includes the log prior model probability, so that
// π(k) = ∫ π(k, θ) dθ is the posterior model probability (up to one constant
// shared by all models).
//
// As with Target, an error or a non-finite value is a rejection, never a
// panic. Implementations usually keep scratch space, so each chain needs its
// own.
type TransdimensionalTarget interface {
	// NumModels is the number of models K.
	NumModels() int
	// ModelDim is n_k, the dimension of θ_k.
	ModelDim(k int) int
	// LogDensity returns log π(k, θ), θ of length ModelDim(k).
	LogDensity(k int, theta []float64) (float64, error)
	// ModelLabel names model k for printing.
	ModelLabel(k int) string
}

// WithinModelKernel moves the parameters of the current model by a Markov
// kernel that leaves π(k, ·) invariant (the P_k of Algorithms 1 and 2).
// ModelRandomWalk is one; any other kernel (NUTS on a per-model Target, for
// instance) plugs in through WithinModelFunc.
type WithinModelKernel interface {
	// Step updates theta (length ModelDim(k)) in place. logDensity is
	// log π(k, θ) on entry; Step returns its value at exit and whether
	// θ moved.
	Step(rng *rand.Rand, k int, theta []float64, logDensity float64) (newLogDensity float64, accepted bool)
}

// WithinModelFunc adapts a function to WithinModelKernel.
type WithinModelFunc func(rng *rand.Rand, k int, theta []float64, logDensity float64) (float64, bool)

// Step calls f.
func (f WithinModelFunc) Step(rng *rand.Rand, k int, theta []float64, logDensity float64) (float64, bool) {
	return f(rng, k, theta, logDensity)
}

// JumpRecord is one proposed between-model move: its source and destination
// models and its acceptance probability α. Records are what the Bartolucci
// bridge estimator consumes.
type JumpRecord struct {
	From, To   int
	AcceptProb float64
}

// RJInfo describes one step of a transdimensional kernel (TRJ, CTRJ,
// IndependenceRJ).
type RJInfo struct {
	// Jumped reports whether a between-model move was proposed this step.
	Jumped bool
	// Jump is the proposed move; meaningful only when Jumped.
	Jump JumpRecord
	// JumpAccepted reports whether the proposed move was accepted.
	JumpAccepted bool
	// Within reports whether a within-model move was made, and
	// WithinAccepted whether it moved θ.
	Within, WithinAccepted bool
}

// ErrJumpMatrix is returned (wrapped) for an invalid model-jump matrix.
var ErrJumpMatrix = errors.New("kernels: invalid model-jump matrix")

// rjJumps holds the model-jump probabilities j_k(k') in the forms Step needs
// without allocating.
type rjJumps struct {
	p, logp [][]float64
	cum     [][]float64 // cumulative j_k(·)
	offCum  [][]float64 // cumulative j_k(·) over k' ≠ k, renormalised
}

// newRJJumps validates a K×K row-stochastic matrix (rows are renormalised
// when they sum to one within 1e-9).
func newRJJumps(j [][]float64, k int) (*rjJumps, error) {
	if len(j) != k {
		return nil, fmt.Errorf("%w: %d rows for %d models", ErrJumpMatrix, len(j), k)
	}
	t := &rjJumps{}
	for a, row := range j {
		if len(row) != k {
			return nil, fmt.Errorf("%w: row %d has %d entries for %d models", ErrJumpMatrix, a, len(row), k)
		}
		sum := 0.0
		for b, v := range row {
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: j[%d][%d] = %v", ErrJumpMatrix, a, b, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			return nil, fmt.Errorf("%w: row %d sums to %v", ErrJumpMatrix, a, sum)
		}
		p := make([]float64, k)
		lp := make([]float64, k)
		cum := make([]float64, k)
		off := make([]float64, k)
		c, offSum := 0.0, sum-row[a]
		oc := 0.0
		for b, v := range row {
			p[b] = v / sum
			lp[b] = math.Log(p[b])
			c += p[b]
			cum[b] = c
			if b != a && offSum > 0 {
				oc += v / offSum
			}
			off[b] = oc
		}
		t.p = append(t.p, p)
		t.logp = append(t.logp, lp)
		t.cum = append(t.cum, cum)
		t.offCum = append(t.offCum, off)
	}
	// A move k → k' with j_{k'}(k) = 0 could never be reversed; the
	// acceptance ratio would be zero. Flag it early: it is always a mistake.
	for a := range j {
		for b := range j {
			if a != b && (t.p[a][b] > 0) != (t.p[b][a] > 0) {
				return nil, fmt.Errorf("%w: j[%d][%d] = %v but j[%d][%d] = %v; moves must be reversible", ErrJumpMatrix, a, b, t.p[a][b], b, a, t.p[b][a])
			}
		}
	}
	return t, nil
}

// pick returns the first index whose cumulative probability exceeds u,
// skipping zero-probability entries even under rounding.
func rjPick(cum []float64, u float64) int {
	last := -1
	prev := 0.0
	for i, c := range cum {
		if c > prev {
			if u < c {
				return i
			}
			last = i
		}
		prev = c
	}
	return last
}

// sample draws k' ~ j_k.
func (t *rjJumps) sample(rng *rand.Rand, k int) int {
	return rjPick(t.cum[k], rng.Float64())
}

// sampleOff draws k' ~ j_k(· | k' ≠ k); it returns −1 when model k has no
// between-model moves.
func (t *rjJumps) sampleOff(rng *rand.Rand, k int) int {
	return rjPick(t.offCum[k], rng.Float64())
}

// ProportionalJumps returns the model-jump matrix j_k(k') = probs[k'] for
// every k, the choice of the paper's corollary to Proposition 1: with exact
// transports and probs equal to the posterior model probabilities, every
// jump is accepted. probs (e.g. estimated model probabilities) is
// renormalised; entries must be positive so every move is reversible.
func ProportionalJumps(probs []float64) ([][]float64, error) {
	if len(probs) == 0 {
		return nil, fmt.Errorf("%w: no models", ErrJumpMatrix)
	}
	sum := 0.0
	for i, p := range probs {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%w: probability %d is %v, want > 0", ErrJumpMatrix, i, p)
		}
		sum += p
	}
	j := make([][]float64, len(probs))
	for a := range j {
		j[a] = make([]float64, len(probs))
		for b, p := range probs {
			j[a][b] = p / sum
		}
	}
	return j, nil
}

// UniformJumps returns the K×K model-jump matrix that always proposes a
// different model, uniformly (for K = 1 the only move is within-model). It
// returns an empty matrix for k < 1, which NewTRJ and NewCTRJ reject.
func UniformJumps(k int) [][]float64 {
	j := make([][]float64, max(k, 0))
	for a := range j {
		j[a] = make([]float64, k)
		for b := range j[a] {
			if k == 1 {
				j[a][b] = 1
			} else if a != b {
				j[a][b] = 1 / float64(k-1)
			}
		}
	}
	return j
}

// RJState is the state of a TRJ or IndependenceRJ chain. Step reuses the
// backing arrays of Theta and Visits: the state passed in is consumed, and
// a caller that wants to keep θ must copy it.
type RJState struct {
	// Model is the current model k.
	Model int
	// Theta is θ_k, of length ModelDim(Model) (its capacity holds the
	// largest model).
	Theta []float64
	// LogDensity is log π(k, θ_k).
	LogDensity float64
	// Visits[k] counts the steps that ended in model k.
	Visits []int
	// Steps counts the steps taken.
	Steps int
}

// ModelFrequencies writes the running estimate of the posterior model
// probabilities (visit frequencies) into dst (length NumModels) and returns
// it; dst == nil allocates.
func (s RJState) ModelFrequencies(dst []float64) []float64 {
	return rjFrequencies(s.Visits, s.Steps, dst)
}

func rjFrequencies(visits []int, steps int, dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(visits))
	}
	for k, v := range visits {
		if steps > 0 {
			dst[k] = float64(v) / float64(steps)
		} else {
			dst[k] = math.NaN()
		}
	}
	return dst
}

// rjProposer makes a between-model proposal from (k, θ) to model kp: it
// writes θ' into its proposal buffer and returns log α (before min with 0)
// and log π(kp, θ'); any failure gives log α = −∞.
type rjProposer interface {
	propose(rng *rand.Rand, k int, theta []float64, logDensity float64, kp int) (logAlpha, newLogDensity float64)
	proposal(kp int) []float64
}

// rjCore is the part of Algorithm 1 shared by every kernel on the
// (k, θ_k) space: choosing k', accept/reject, within-model moves and the
// visit tally.
type rjCore struct {
	target    TransdimensionalTarget
	jumps     *rjJumps
	within    WithinModelKernel
	alternate bool
	dims      []int
	nmax      int
}

func newRJCore(target TransdimensionalTarget, jump [][]float64, within WithinModelKernel, alternate bool) (*rjCore, error) {
	if target == nil {
		return nil, errors.New("kernels: nil transdimensional target")
	}
	k := target.NumModels()
	if k < 1 {
		return nil, fmt.Errorf("kernels: target has %d models", k)
	}
	j, err := newRJJumps(jump, k)
	if err != nil {
		return nil, err
	}
	c := &rjCore{target: target, jumps: j, within: within, alternate: alternate, dims: make([]int, k)}
	for m := range c.dims {
		n := target.ModelDim(m)
		if n < 0 {
			return nil, fmt.Errorf("%w: model %d has dimension %d", ErrDimension, m, n)
		}
		c.dims[m] = n
		c.nmax = max(c.nmax, n)
	}
	return c, nil
}

// init builds a state at (k, θ).
func (c *rjCore) init(k int, theta []float64) (RJState, error) {
	if k < 0 || k >= len(c.dims) {
		return RJState{}, fmt.Errorf("kernels: model %d out of range [0, %d)", k, len(c.dims))
	}
	if len(theta) != c.dims[k] {
		return RJState{}, fmt.Errorf("%w: len(theta)=%d, model %d has dimension %d", ErrDimension, len(theta), k, c.dims[k])
	}
	th := make([]float64, c.dims[k], c.nmax)
	copy(th, theta)
	lp, err := c.target.LogDensity(k, th)
	if err != nil || math.IsNaN(lp) || math.IsInf(lp, 0) {
		return RJState{}, fmt.Errorf("%w: model %d, log π = %v, err = %v", ErrNoFinitePoint, k, lp, err)
	}
	return RJState{Model: k, Theta: th, LogDensity: lp, Visits: make([]int, len(c.dims))}, nil
}

// checkState guards Step against states that did not come from init.
func (c *rjCore) checkState(s *RJState) bool {
	if s.Model < 0 || s.Model >= len(c.dims) || len(s.Theta) != c.dims[s.Model] {
		return false
	}
	if cap(s.Theta) < c.nmax {
		th := make([]float64, len(s.Theta), c.nmax)
		copy(th, s.Theta)
		s.Theta = th
	}
	if len(s.Visits) != len(c.dims) {
		v := make([]int, len(c.dims))
		copy(v, s.Visits)
		s.Visits = v
	}
	return true
}

func (c *rjCore) step(rng *rand.Rand, s RJState, p rjProposer) (RJState, RJInfo) {
	var info RJInfo
	if !c.checkState(&s) {
		// A malformed state cannot move; report nothing rather than panic.
		return s, info
	}
	k := s.Model
	kp := c.jumps.sample(rng, k)
	if kp != k {
		logA, lp := p.propose(rng, k, s.Theta, s.LogDensity, kp)
		a := rjAcceptProb(logA)
		info.Jumped = true
		info.Jump = JumpRecord{From: k, To: kp, AcceptProb: a}
		if rng.Float64() < a {
			info.JumpAccepted = true
			s.Theta = s.Theta[:c.dims[kp]]
			copy(s.Theta, p.proposal(kp))
			s.Model = kp
			s.LogDensity = lp
		}
	}
	if (kp == k || c.alternate) && c.within != nil {
		info.Within = true
		lp, ok := c.within.Step(rng, s.Model, s.Theta, s.LogDensity)
		info.WithinAccepted = ok
		s.LogDensity = lp
	}
	s.Visits[s.Model]++
	s.Steps++
	return s, info
}

// proposeOne makes a single between-model proposal from (k, θ), the model
// drawn from j_k restricted to k' ≠ k.
func (c *rjCore) proposeOne(rng *rand.Rand, k int, theta []float64, p rjProposer) (JumpRecord, error) {
	if k < 0 || k >= len(c.dims) {
		return JumpRecord{}, fmt.Errorf("kernels: model %d out of range [0, %d)", k, len(c.dims))
	}
	if len(theta) != c.dims[k] {
		return JumpRecord{}, fmt.Errorf("%w: len(theta)=%d, model %d has dimension %d", ErrDimension, len(theta), k, c.dims[k])
	}
	kp := c.jumps.sampleOff(rng, k)
	if kp < 0 {
		return JumpRecord{}, fmt.Errorf("%w: model %d has no between-model moves", ErrJumpMatrix, k)
	}
	lp, err := c.target.LogDensity(k, theta)
	if err != nil || math.IsNaN(lp) || math.IsInf(lp, 0) {
		return JumpRecord{}, fmt.Errorf("%w: model %d, log π = %v, err = %v", ErrNoFinitePoint, k, lp, err)
	}
	logA, _ := p.propose(rng, k, theta, lp, kp)
	return JumpRecord{From: k, To: kp, AcceptProb: rjAcceptProb(logA)}, nil
}

// logAccept is log α = lp − logDensity + log j(k'→k) − log j(k→k') plus the
// proposal's own terms (log-density ratios and Jacobians, added in order)
// for a jump from model k with log-density logDensity to model kp with lp;
// it returns log α and lp, or (−∞, −∞) where log α is NaN.
func (j *rjJumps) logAccept(k, kp int, lp, logDensity float64, terms ...float64) (float64, float64) {
	logA := lp - logDensity + j.logp[kp][k] - j.logp[k][kp]
	for _, t := range terms {
		logA += t
	}
	if math.IsNaN(logA) {
		return math.Inf(-1), math.Inf(-1)
	}
	return logA, lp
}

// acceptAt evaluates the target at prop in model kp and returns
// jumps.logAccept's log α and lp, or (−∞, −∞) where the target fails or is
// not finite.
func (c *rjCore) acceptAt(k, kp int, prop []float64, logDensity float64, terms ...float64) (float64, float64) {
	lp, err := c.target.LogDensity(kp, prop)
	if err != nil || !rjFinite(lp) {
		return math.Inf(-1), math.Inf(-1)
	}
	return c.jumps.logAccept(k, kp, lp, logDensity, terms...)
}

// rjAcceptProb is min(1, exp(logA)) with NaN mapped to 0.
func rjAcceptProb(logA float64) float64 {
	if math.IsNaN(logA) {
		return 0
	}
	if logA >= 0 {
		return 1
	}
	return math.Exp(logA)
}

// rjFinite reports whether v is a usable log-density.
func rjFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// logStdNormal is log φ(x).
func logStdNormal(x float64) float64 { return -0.5*x*x - 0.91893853320467274178 }
