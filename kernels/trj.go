package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// TRJConfig holds the inputs of Algorithm 1 (transport reversible jump).
type TRJConfig struct {
	// Target is π(k, θ_k).
	Target TransdimensionalTarget
	// Transports[k] is T_k, carrying π_k(θ_k) ∝ π(k, θ_k) (approximately)
	// to the standard normal on R^{n_k}; the reference ν is N(0, 1).
	Transports []Transport
	// Jump[k][k'] is j_k(k'), the probability of proposing model k' from
	// model k. Rows sum to one; Jump[k][k] is the probability of a
	// within-model move. A move k → k' must have j_{k'}(k) > 0.
	Jump [][]float64
	// Within is P_k, the within-model kernel, run when k' = k is drawn (and
	// after every jump proposal if Alternate). Nil means no within-model
	// moves.
	Within WithinModelKernel
	// Alternate makes every step a jump proposal followed by a within-model
	// move, the scheme of the paper's experiments; otherwise a step is
	// exactly Algorithm 1 (a jump or, when k' = k, a within-model move).
	Alternate bool
	// Permutations optionally replaces the identity h̄ by a permutation.
	// For each pair with (n_k, k) < (n_{k'}, k') lexicographically,
	// Permutations[k][k'] (length n_{k'}) gives
	// h̄_{k,k'}(z_k, u)[i] = (z_k, u)[P[i]]; the opposite move uses the
	// inverse permutation. Nil (or a nil entry) is the identity. Entries
	// for the opposite ordering must be nil.
	Permutations [][][]int
}

// TRJ is Algorithm 1 of the paper: between-model moves
// θ' = T_{k'}⁻¹(h̄(T_k(θ), u)), u ~ ν^{n_{k'}−n_k}, accepted with probability
//
//	α = 1 ∧ π(k', θ') j_{k'}(k) g'_u |J_{T_k}(θ)| / (π(k, θ) j_k(k') g_u |J_{T_{k'}}(θ')|)
//
// where g_u = ν(u) when auxiliaries are drawn (n_{k'} > n_k) and g'_u = ν(u)
// for the auxiliaries dropped when n_{k'} < n_k. With exact transports the
// ratio reduces to π(k')j_{k'}(k)/(π(k)j_k(k')) (Proposition 1).
//
// A TRJ keeps scratch space and uses its transports and target, so it
// serves one chain at a time. Step does not allocate (given allocation-free
// transports, target and within-model kernel).
type TRJ struct {
	core       *rjCore
	transports []Transport
	perm       [][][]int
	z, w, prop []float64
}

// NewTRJ validates cfg and returns the kernel.
func NewTRJ(cfg TRJConfig) (*TRJ, error) {
	core, err := newRJCore(cfg.Target, cfg.Jump, cfg.Within, cfg.Alternate)
	if err != nil {
		return nil, err
	}
	nm := len(core.dims)
	if len(cfg.Transports) != nm {
		return nil, fmt.Errorf("%w: %d transports for %d models", ErrDimension, len(cfg.Transports), nm)
	}
	for k, tr := range cfg.Transports {
		if tr == nil {
			return nil, fmt.Errorf("kernels: transport %d is nil", k)
		}
		if tr.Dim() != core.dims[k] {
			return nil, fmt.Errorf("%w: transport %d has dimension %d, model has %d", ErrDimension, k, tr.Dim(), core.dims[k])
		}
	}
	t := &TRJ{
		core:       core,
		transports: append([]Transport(nil), cfg.Transports...),
		z:          make([]float64, core.nmax),
		w:          make([]float64, core.nmax),
		prop:       make([]float64, core.nmax),
	}
	if cfg.Permutations != nil {
		if t.perm, err = rjCheckPermutations(cfg.Permutations, core.dims); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// rjUp reports whether the move k → kp applies h̄ forwards (as opposed to
// its inverse): it goes to a larger model, or an equal one of higher index.
func rjUp(dims []int, k, kp int) bool {
	return dims[k] < dims[kp] || (dims[k] == dims[kp] && k < kp)
}

func rjCheckPermutations(p [][][]int, dims []int) ([][][]int, error) {
	nm := len(dims)
	if len(p) != nm {
		return nil, fmt.Errorf("%w: permutations for %d models, want %d", ErrDimension, len(p), nm)
	}
	out := make([][][]int, nm)
	for k := range p {
		if p[k] == nil {
			continue
		}
		if len(p[k]) != nm {
			return nil, fmt.Errorf("%w: permutations row %d has %d entries, want %d", ErrDimension, k, len(p[k]), nm)
		}
		out[k] = make([][]int, nm)
		for kp, perm := range p[k] {
			if perm == nil {
				continue
			}
			if k == kp || !rjUp(dims, k, kp) {
				return nil, fmt.Errorf("kernels: permutation [%d][%d] given for a move that uses the inverse of [%d][%d]", k, kp, kp, k)
			}
			n := dims[kp]
			if len(perm) != n {
				return nil, fmt.Errorf("%w: permutation [%d][%d] has length %d, want %d", ErrDimension, k, kp, len(perm), n)
			}
			seen := make([]bool, n)
			for _, v := range perm {
				if v < 0 || v >= n || seen[v] {
					return nil, fmt.Errorf("kernels: permutation [%d][%d] = %v is not a permutation of 0..%d", k, kp, perm, n-1)
				}
				seen[v] = true
			}
			out[k][kp] = append([]int(nil), perm...)
		}
	}
	return out, nil
}

// Init returns the state at model k with parameters θ (copied).
func (t *TRJ) Init(k int, theta []float64) (RJState, error) { return t.core.init(k, theta) }

// Step makes one transition: draw k' ~ j_k; if k' ≠ k propose the transport
// jump and accept or reject it; if k' = k (or always, with Alternate) make a
// within-model move. Non-finite or failing densities and transports reject.
// s is consumed (its slices are reused).
func (t *TRJ) Step(rng *rand.Rand, s RJState) (RJState, RJInfo) {
	return t.core.step(rng, s, t)
}

// ProposeJump makes one TRJ proposal from (k, θ) without moving anything:
// k' is drawn from j_k conditioned on k' ≠ k and the acceptance probability
// is returned. This is the "one proposal per evaluation sample" use of the
// Bartolucci bridge estimator.
func (t *TRJ) ProposeJump(rng *rand.Rand, k int, theta []float64) (JumpRecord, error) {
	return t.core.proposeOne(rng, k, theta, t)
}

// NumModels returns the number of models.
func (t *TRJ) NumModels() int { return len(t.core.dims) }

func (t *TRJ) proposal(kp int) []float64 { return t.prop[:t.core.dims[kp]] }

// hbar maps in (length m) to out (length m) by h̄_{k,kp}: the permutation
// for the pair, forwards or inverted, or the identity.
func (t *TRJ) hbar(k, kp int, in, out []float64) {
	up := rjUp(t.core.dims, k, kp)
	var perm []int
	if t.perm != nil {
		if up && t.perm[k] != nil {
			perm = t.perm[k][kp]
		} else if !up && t.perm[kp] != nil {
			perm = t.perm[kp][k]
		}
	}
	switch {
	case perm == nil:
		copy(out, in)
	case up:
		for i, p := range perm {
			out[i] = in[p]
		}
	default:
		for i, p := range perm {
			out[p] = in[i]
		}
	}
}

func (t *TRJ) propose(rng *rand.Rand, k int, theta []float64, logDensity float64, kp int) (float64, float64) {
	ninf := math.Inf(-1)
	nk, nkp := t.core.dims[k], t.core.dims[kp]
	z := t.z[:nk]
	ldF, err := t.transports[k].Forward(theta, z)
	if err != nil || !rjFinite(ldF) {
		return ninf, ninf
	}
	m := max(nk, nkp)
	w := t.w[:m]
	logG := 0.0 // log g'_u − log g_u
	if nkp >= nk {
		// Draw the auxiliaries into the tail of z's buffer, then apply h̄.
		zz := t.z[:m]
		for i := nk; i < nkp; i++ {
			u := rng.NormFloat64()
			zz[i] = u
			logG -= logStdNormal(u)
		}
		t.hbar(k, kp, zz, w)
	} else {
		t.hbar(k, kp, z, w)
		for _, u := range w[nkp:] {
			logG += logStdNormal(u)
		}
	}
	prop := t.prop[:nkp]
	ldI, err := t.transports[kp].Inverse(w[:nkp], prop)
	if err != nil || !rjFinite(ldI) {
		return ninf, ninf
	}
	return t.core.acceptAt(k, kp, prop, logDensity, logG, ldF, ldI)
}

// CheckPermutations checks TRJ's map h̄ (TRJConfig.Permutations) against
// models of dimensions dims, as NewTRJ does: callers that build kernels
// late can refuse a bad map before any work.
func CheckPermutations(p [][][]int, dims []int) error {
	_, err := rjCheckPermutations(p, dims)
	return err
}
