package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// IndependenceProposal is a per-model proposal density q_k(θ_k) that does not
// depend on the current state, the classic between-model RJMCMC proposal
// fitted to pilot draws (e.g. Lopes and West 2004). Implementations keep
// scratch space, so each chain needs its own.
type IndependenceProposal interface {
	// Dim is n_k.
	Dim() int
	// LogDensity returns log q_k(θ).
	LogDensity(theta []float64) (float64, error)
	// Sample draws θ ~ q_k into theta.
	Sample(rng *rand.Rand, theta []float64) error
}

// IndependenceRJConfig holds the inputs of an independence reversible-jump
// sampler.
type IndependenceRJConfig struct {
	// Target is π(k, θ_k).
	Target TransdimensionalTarget
	// Proposals[k] is q_k.
	Proposals []IndependenceProposal
	// Jump, Within and Alternate are as in TRJConfig.
	Jump      [][]float64
	Within    WithinModelKernel
	Alternate bool
}

// IndependenceRJ is RJMCMC with independence proposals between models:
// θ' ~ q_{k'}, accepted with probability
//
//	α = 1 ∧ π(k', θ') j_{k'}(k) q_k(θ) / (π(k, θ) j_k(k') q_{k'}(θ')).
//
// Its states and infos are those of TRJ. It serves one chain at a time;
// Step allocates nothing beyond what the proposals do.
type IndependenceRJ struct {
	core  *rjCore
	props []IndependenceProposal
	prop  []float64
}

// NewIndependenceRJ validates cfg and returns the kernel.
func NewIndependenceRJ(cfg IndependenceRJConfig) (*IndependenceRJ, error) {
	core, err := newRJCore(cfg.Target, cfg.Jump, cfg.Within, cfg.Alternate)
	if err != nil {
		return nil, err
	}
	if len(cfg.Proposals) != len(core.dims) {
		return nil, fmt.Errorf("%w: %d proposals for %d models", ErrDimension, len(cfg.Proposals), len(core.dims))
	}
	for k, q := range cfg.Proposals {
		if q == nil || q.Dim() != core.dims[k] {
			return nil, fmt.Errorf("%w: proposal %d does not match model dimension %d", ErrDimension, k, core.dims[k])
		}
	}
	return &IndependenceRJ{core: core, props: append([]IndependenceProposal(nil), cfg.Proposals...), prop: make([]float64, core.nmax)}, nil
}

// NumModels is the number of models K.
func (r *IndependenceRJ) NumModels() int { return len(r.core.dims) }

var _ RJKernel = (*IndependenceRJ)(nil)

// Init returns the state at model k with parameters θ (copied).
func (r *IndependenceRJ) Init(k int, theta []float64) (RJState, error) { return r.core.init(k, theta) }

// Step makes one transition (see TRJ.Step). s is consumed.
func (r *IndependenceRJ) Step(rng *rand.Rand, s RJState) (RJState, RJInfo) {
	return r.core.step(rng, s, r)
}

// ProposeJump makes one proposal from (k, θ) to k' ~ j_k(· | k' ≠ k) and
// returns its acceptance probability.
func (r *IndependenceRJ) ProposeJump(rng *rand.Rand, k int, theta []float64) (JumpRecord, error) {
	return r.core.proposeOne(rng, k, theta, r)
}

func (r *IndependenceRJ) proposal(kp int) []float64 { return r.prop[:r.core.dims[kp]] }

func (r *IndependenceRJ) propose(rng *rand.Rand, k int, theta []float64, logDensity float64, kp int) (float64, float64) {
	ninf := math.Inf(-1)
	prop := r.prop[:r.core.dims[kp]]
	if err := r.props[kp].Sample(rng, prop); err != nil {
		return ninf, ninf
	}
	qNew, err := r.props[kp].LogDensity(prop)
	if err != nil || !rjFinite(qNew) {
		return ninf, ninf
	}
	qOld, err := r.props[k].LogDensity(theta)
	if err != nil || !rjFinite(qOld) {
		return ninf, ninf
	}
	return r.core.acceptAt(k, kp, prop, logDensity, qOld, -qNew)
}

// NewIndependentAuxiliary returns the independent-auxiliary proposal of
// Brooks, Giudici and Roberts (2003) for variable selection, as used in the
// paper's §5.1: the saturated target with auxiliary density aux (there, the
// N(0, 10²) prior of a dropped coefficient) and the identity as conditional
// transport, so a jump keeps dropped coefficients as auxiliaries and
// reinstates them unchanged. Auxiliaries are fixed between jumps
// (CTRJConfig.FixedAux), as in the paper; the other arguments are as in
// CTRJConfig.
func NewIndependentAuxiliary(target TransdimensionalTarget, active [][]bool, jump [][]float64, within WithinModelKernel, aux AuxiliaryDensity, alternate bool) (*CTRJ, error) {
	if aux == nil {
		return nil, fmt.Errorf("kernels: the independent-auxiliary proposal needs an auxiliary density")
	}
	n := 0
	if len(active) > 0 {
		n = len(active[0])
	}
	return NewCTRJ(CTRJConfig{
		Target: target, Transport: IdentityConditionalTransport{N: n}, Active: active,
		Jump: jump, Within: within, Aux: aux, Alternate: alternate, FixedAux: true,
	})
}
