package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// AuxiliaryDensity is the univariate density ν of the auxiliary coordinates
// of a saturated space. The reference of CTRJ is the standard normal; the
// independent-auxiliary proposal of Brooks et al. (2003) uses the prior.
type AuxiliaryDensity interface {
	// LogProb returns log ν(x).
	LogProb(x float64) float64
	// Rand draws from ν.
	Rand(rng *rand.Rand) float64
}

// NormalAux is the auxiliary density N(Mean, SD²).
type NormalAux struct {
	Mean, SD float64
}

// LogProb returns log N(x; Mean, SD²).
func (n NormalAux) LogProb(x float64) float64 {
	d := (x - n.Mean) / n.SD
	return logStdNormal(d) - math.Log(n.SD)
}

// Rand draws from N(Mean, SD²).
func (n NormalAux) Rand(rng *rand.Rand) float64 { return n.Mean + n.SD*rng.NormFloat64() }

// IdentityConditionalTransport is the identity map on the saturated space
// for every model. CTRJ with it proposes ξ' = ξ: coordinates switched on are
// reinstated from their auxiliary values and those switched off are kept as
// auxiliaries, the deterministic proposal of the independent-auxiliary
// method.
type IdentityConditionalTransport struct {
	N int
}

// MaxDim returns N.
func (t IdentityConditionalTransport) MaxDim() int { return t.N }

// Forward copies xi to z.
func (t IdentityConditionalTransport) Forward(k int, xi, z []float64) (float64, error) {
	if len(xi) != t.N || len(z) != t.N {
		return 0, fmt.Errorf("%w: identity transport of dimension %d got %d and %d", ErrDimension, t.N, len(xi), len(z))
	}
	copy(z, xi)
	return 0, nil
}

// Inverse copies z to xi.
func (t IdentityConditionalTransport) Inverse(k int, z, xi []float64) (float64, error) {
	return t.Forward(k, z, xi)
}

// CTRJConfig holds the inputs of Algorithm 2 (conditional transport
// reversible jump).
type CTRJConfig struct {
	// Target is π(k, θ_k).
	Target TransdimensionalTarget
	// Transport is T̃(·|k) on the saturated space of dimension n_max; nil
	// is the identity (see IdentityConditionalTransport).
	Transport ConditionalTransport
	// Active[k] (length n_max) marks the saturated coordinates that hold
	// θ_k, in order; the others hold the auxiliaries u (the concatenation
	// c_k). It must have ModelDim(k) true entries.
	Active [][]bool
	// Jump[k][k'] is j_k(k'), as in TRJConfig.
	Jump [][]float64
	// Within is P_k acting on θ_k; nil means no within-model moves.
	Within WithinModelKernel
	// Aux is ν, the density of the auxiliaries in the saturated target
	// π̃(k, θ, u) = π(k, θ)·Π ν(u_i); nil is the standard normal.
	Aux AuxiliaryDensity
	// FixedAux leaves the auxiliaries unchanged by within-model moves, as
	// Algorithm 2 is printed; they then change only through jumps. That
	// is π̃-invariant but can mix very badly with imperfect transports (in
	// our tests a chain stayed in one model for 60000 steps). By default
	// (false) the auxiliaries are redrawn from ν after each within-model
	// move, an exact Gibbs update of π̃.
	FixedAux bool
	// Alternate makes every step a jump proposal followed by a
	// within-model move.
	Alternate bool
}

// CTRJState is the state (k, ξ) of a CTRJ chain on the saturated space.
// Step reuses its slices: the state passed in is consumed.
type CTRJState struct {
	// Model is the current model k.
	Model int
	// Xi is the saturated vector ξ = c_k(θ_k, u) of length n_max.
	Xi []float64
	// LogDensity is log π̃(k, ξ) = log π(k, θ_k) + Σ log ν(u_i).
	LogDensity float64
	// Visits[k] counts the steps that ended in model k.
	Visits []int
	// Steps counts the steps taken.
	Steps int
}

// ModelFrequencies writes the running estimate of the posterior model
// probabilities into dst (length NumModels) and returns it; nil allocates.
func (s CTRJState) ModelFrequencies(dst []float64) []float64 {
	return rjFrequencies(s.Visits, s.Steps, dst)
}

// CTRJ is Algorithm 2 of the paper: on the saturated target π̃ a jump
// proposes ξ' = T̃⁻¹(T̃(ξ|k)|k') and accepts with probability
//
//	α = 1 ∧ π̃(k', ξ') j_{k'}(k) |J_T̃(ξ|k)| / (π̃(k, ξ) j_k(k') |J_T̃(ξ'|k')|).
//
// Within-model moves update the active coordinates only. A CTRJ keeps
// scratch space and serves one chain at a time; Step does not allocate.
type CTRJ struct {
	target    TransdimensionalTarget
	transport ConditionalTransport
	aux       AuxiliaryDensity
	jumps     *rjJumps
	within    WithinModelKernel
	refresh   bool
	alternate bool
	active    [][]int // active[k]: saturated indices of θ_k, in order
	inactive  [][]int
	nmax      int
	z, prop   []float64
	theta     []float64 // θ_k gathered for the target
	cur       []float64 // ξ built by ProposeJump
}

// NewCTRJ validates cfg and returns the kernel.
func NewCTRJ(cfg CTRJConfig) (*CTRJ, error) {
	if cfg.Target == nil {
		return nil, fmt.Errorf("kernels: nil transdimensional target")
	}
	nm := cfg.Target.NumModels()
	if nm < 1 {
		return nil, fmt.Errorf("kernels: target has %d models", nm)
	}
	if len(cfg.Active) != nm {
		return nil, fmt.Errorf("%w: %d active masks for %d models", ErrDimension, len(cfg.Active), nm)
	}
	nmax := len(cfg.Active[0])
	tr := cfg.Transport
	if tr == nil {
		tr = IdentityConditionalTransport{N: nmax}
	}
	if tr.MaxDim() != nmax {
		return nil, fmt.Errorf("%w: transport has dimension %d, masks %d", ErrDimension, tr.MaxDim(), nmax)
	}
	jumps, err := newRJJumps(cfg.Jump, nm)
	if err != nil {
		return nil, err
	}
	aux := cfg.Aux
	if aux == nil {
		aux = NormalAux{Mean: 0, SD: 1}
	}
	if n, ok := aux.(NormalAux); ok && (!(n.SD > 0) || math.IsInf(n.SD, 0) || !rjFinite(n.Mean)) {
		return nil, fmt.Errorf("kernels: auxiliary N(%v, %v²) is not a proper density", n.Mean, n.SD)
	}
	c := &CTRJ{
		target: cfg.Target, transport: tr, aux: aux, jumps: jumps, within: cfg.Within,
		refresh: !cfg.FixedAux, alternate: cfg.Alternate, nmax: nmax,
		z: make([]float64, nmax), prop: make([]float64, nmax), theta: make([]float64, nmax), cur: make([]float64, nmax),
	}
	for k, mask := range cfg.Active {
		if len(mask) != nmax {
			return nil, fmt.Errorf("%w: active mask %d has length %d, want %d", ErrDimension, k, len(mask), nmax)
		}
		var on, off []int
		for i, a := range mask {
			if a {
				on = append(on, i)
			} else {
				off = append(off, i)
			}
		}
		if len(on) != cfg.Target.ModelDim(k) {
			return nil, fmt.Errorf("%w: active mask %d has %d coordinates, model has dimension %d", ErrDimension, k, len(on), cfg.Target.ModelDim(k))
		}
		c.active = append(c.active, on)
		c.inactive = append(c.inactive, off)
	}
	return c, nil
}

// NumModels returns the number of models.
func (c *CTRJ) NumModels() int { return len(c.active) }

// MaxDim returns n_max.
func (c *CTRJ) MaxDim() int { return c.nmax }

// Theta writes θ_k, the active coordinates of s, into dst (nil allocates)
// and returns it.
func (c *CTRJ) Theta(s CTRJState, dst []float64) []float64 {
	on := c.active[s.Model]
	if dst == nil {
		dst = make([]float64, len(on))
	}
	for i, j := range on {
		dst[i] = s.Xi[j]
	}
	return dst
}

// Init returns the state at model k with parameters θ (copied) and
// auxiliaries drawn from ν.
func (c *CTRJ) Init(rng *rand.Rand, k int, theta []float64) (CTRJState, error) {
	if k < 0 || k >= len(c.active) {
		return CTRJState{}, fmt.Errorf("kernels: model %d out of range [0, %d)", k, len(c.active))
	}
	if len(theta) != len(c.active[k]) {
		return CTRJState{}, fmt.Errorf("%w: len(theta)=%d, model %d has dimension %d", ErrDimension, len(theta), k, len(c.active[k]))
	}
	xi := make([]float64, c.nmax)
	c.scatter(k, theta, xi)
	for _, j := range c.inactive[k] {
		xi[j] = c.aux.Rand(rng)
	}
	return c.InitSaturated(k, xi)
}

// InitSaturated returns the state at model k with saturated vector ξ
// (copied).
func (c *CTRJ) InitSaturated(k int, xi []float64) (CTRJState, error) {
	if k < 0 || k >= len(c.active) {
		return CTRJState{}, fmt.Errorf("kernels: model %d out of range [0, %d)", k, len(c.active))
	}
	if len(xi) != c.nmax {
		return CTRJState{}, fmt.Errorf("%w: len(xi)=%d, want %d", ErrDimension, len(xi), c.nmax)
	}
	x := append([]float64(nil), xi...)
	lp := c.logDensity(k, x)
	if !rjFinite(lp) {
		return CTRJState{}, fmt.Errorf("%w: model %d, log π̃ = %v", ErrNoFinitePoint, k, lp)
	}
	return CTRJState{Model: k, Xi: x, LogDensity: lp, Visits: make([]int, len(c.active))}, nil
}

func (c *CTRJ) scatter(k int, theta, xi []float64) {
	for i, j := range c.active[k] {
		xi[j] = theta[i]
	}
}

// logAux is Σ log ν(u_i) over model k's auxiliaries.
func (c *CTRJ) logAux(k int, xi []float64) float64 {
	s := 0.0
	for _, j := range c.inactive[k] {
		s += c.aux.LogProb(xi[j])
	}
	return s
}

// logDensity is log π̃(k, ξ), −∞ on failure.
func (c *CTRJ) logDensity(k int, xi []float64) float64 {
	th := c.theta[:len(c.active[k])]
	for i, j := range c.active[k] {
		th[i] = xi[j]
	}
	lp, err := c.target.LogDensity(k, th)
	if err != nil || !rjFinite(lp) {
		return math.Inf(-1)
	}
	lp += c.logAux(k, xi)
	if !rjFinite(lp) {
		return math.Inf(-1)
	}
	return lp
}

// propose writes ξ' into c.prop and returns log α and log π̃(k', ξ').
func (c *CTRJ) propose(k int, xi []float64, logDensity float64, kp int) (float64, float64) {
	ninf := math.Inf(-1)
	ldF, err := c.transport.Forward(k, xi, c.z)
	if err != nil || !rjFinite(ldF) {
		return ninf, ninf
	}
	ldI, err := c.transport.Inverse(kp, c.z, c.prop)
	if err != nil || !rjFinite(ldI) {
		return ninf, ninf
	}
	lp := c.logDensity(kp, c.prop)
	if !rjFinite(lp) {
		return ninf, ninf
	}
	return c.jumps.logAccept(k, kp, lp, logDensity, ldF, ldI)
}

// Step makes one transition of Algorithm 2 (see CTRJConfig.Alternate and
// FixedAux for the variants). s is consumed.
func (c *CTRJ) Step(rng *rand.Rand, s CTRJState) (CTRJState, RJInfo) {
	var info RJInfo
	if s.Model < 0 || s.Model >= len(c.active) || len(s.Xi) != c.nmax {
		return s, info
	}
	if len(s.Visits) != len(c.active) {
		v := make([]int, len(c.active))
		copy(v, s.Visits)
		s.Visits = v
	}
	k := s.Model
	kp := c.jumps.sample(rng, k)
	if kp != k {
		logA, lp := c.propose(k, s.Xi, s.LogDensity, kp)
		a := rjAcceptProb(logA)
		info.Jumped = true
		info.Jump = JumpRecord{From: k, To: kp, AcceptProb: a}
		if rng.Float64() < a {
			info.JumpAccepted = true
			copy(s.Xi, c.prop)
			s.Model = kp
			s.LogDensity = lp
		}
	}
	if kp == k || c.alternate {
		m := s.Model
		if c.within != nil {
			info.Within = true
			th := c.theta[:len(c.active[m])]
			for i, j := range c.active[m] {
				th[i] = s.Xi[j]
			}
			la := c.logAux(m, s.Xi)
			lp, ok := c.within.Step(rng, m, th, s.LogDensity-la)
			info.WithinAccepted = ok
			c.scatter(m, th, s.Xi)
			s.LogDensity = lp + la
		}
		if c.refresh && len(c.inactive[m]) > 0 {
			la := c.logAux(m, s.Xi)
			for _, j := range c.inactive[m] {
				s.Xi[j] = c.aux.Rand(rng)
			}
			s.LogDensity += c.logAux(m, s.Xi) - la
		}
	}
	s.Visits[s.Model]++
	s.Steps++
	return s, info
}

// ProposeJump makes one CTRJ proposal from model k with parameters θ: the
// auxiliaries are drawn from ν, k' from j_k conditioned on k' ≠ k, and the
// acceptance probability is returned (for the Bartolucci estimator).
func (c *CTRJ) ProposeJump(rng *rand.Rand, k int, theta []float64) (JumpRecord, error) {
	if k < 0 || k >= len(c.active) {
		return JumpRecord{}, fmt.Errorf("kernels: model %d out of range [0, %d)", k, len(c.active))
	}
	if len(theta) != len(c.active[k]) {
		return JumpRecord{}, fmt.Errorf("%w: len(theta)=%d, model %d has dimension %d", ErrDimension, len(theta), k, len(c.active[k]))
	}
	kp := c.jumps.sampleOff(rng, k)
	if kp < 0 {
		return JumpRecord{}, fmt.Errorf("%w: model %d has no between-model moves", ErrJumpMatrix, k)
	}
	xi := c.cur
	c.scatter(k, theta, xi)
	for _, j := range c.inactive[k] {
		xi[j] = c.aux.Rand(rng)
	}
	lp := c.logDensity(k, xi)
	if !rjFinite(lp) {
		return JumpRecord{}, fmt.Errorf("%w: model %d, log π̃ = %v", ErrNoFinitePoint, k, lp)
	}
	logA, _ := c.propose(k, xi, lp, kp)
	return JumpRecord{From: k, To: kp, AcceptProb: rjAcceptProb(logA)}, nil
}
