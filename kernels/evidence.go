package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// EvidenceGroup is one independent group of draws for MengWongEvidence:
// log-density ratios l = log p̃(θ) − log q(θ) of the unnormalised target p̃
// over a normalised density q, at draws from the target (Post) and at draws
// from q (Ref).
type EvidenceGroup struct {
	Post, Ref []float64
}

// EvidenceSettings configures MengWongEvidence and TransportEvidence; nil
// means the defaults.
type EvidenceSettings struct {
	// RefDraws is the number of draws from q that TransportEvidence makes
	// for each group (0: as many as the group's posterior draws).
	RefDraws int
	// Tol is the change in log Z at which the fixed-point iteration stops
	// (1e-10), MaxIter the most iterations it makes (1000).
	Tol     float64
	MaxIter int
}

// EvidenceEstimate is a log-evidence estimate with its standard error.
type EvidenceEstimate struct {
	// LogZ estimates log Z = log ∫ p̃(θ) dθ and SE its standard error: the
	// delete-one-group jackknife's over the Groups groups, each dropping a
	// group's target draws and its draws from q together.
	LogZ, SE float64
	Groups   int
	// LOO[g] is the estimate without group g.
	LOO []float64
	// NumPost and NumRef count the draws from the target and from q.
	NumPost, NumRef int
	// RefOutside counts the draws from q where the target or the inverse
	// transport failed or gave log p̃ = −∞ (they enter as p̃ = 0); many of
	// them mean q covers much that the target does not.
	RefOutside int
	// Iterations is the number of fixed-point iterations of the full
	// estimate.
	Iterations int
}

// ErrEvidence is returned (wrapped) when the evidence cannot be estimated
// from the given draws.
var ErrEvidence = errors.New("kernels: evidence estimate")

// MengWongEvidence estimates the normalising constant Z of an unnormalised
// density p̃ by Meng and Wong's (1996) optimal bridge sampling between p̃
// and a normalised density q, from log-ratios l = log p̃ − log q at N₁
// draws from p̃/Z (Post) and N₂ draws from q (Ref). With s_i = N_i/(N₁+N₂)
// it iterates
//
//	Z ← [ (1/N₂) Σ_j e^{l_j} / (s₁e^{l_j} + s₂Z) ] / [ (1/N₁) Σ_i 1 / (s₁e^{l_i} + s₂Z) ]
//
// to its fixed point (in logs, so that extreme ratios neither overflow nor
// vanish). The estimate is consistent whatever q, and efficient when q
// overlaps p̃/Z well; unlike importance sampling it stays finite when q's
// tails are lighter than the target's.
//
// The standard error is the delete-one-group jackknife's: groups are to be
// independent (separate runs, or batches of a chain long enough to be
// nearly independent), so that it covers the autocorrelation of the target
// draws within a group. At least two groups are needed, and every group
// needs draws of both kinds.
func MengWongEvidence(groups []EvidenceGroup, settings *EvidenceSettings) (EvidenceEstimate, error) {
	var s EvidenceSettings
	if settings != nil {
		s = *settings
	}
	if s.Tol == 0 {
		s.Tol = 1e-10
	}
	if s.MaxIter == 0 {
		s.MaxIter = 1000
	}
	if !(s.Tol > 0) || s.MaxIter < 0 {
		return EvidenceEstimate{}, fmt.Errorf("%w: tolerance %v and %d iterations", ErrEvidence, s.Tol, s.MaxIter)
	}
	G := len(groups)
	if G < 2 {
		return EvidenceEstimate{}, fmt.Errorf("%w: %d group(s) of draws: the standard error needs at least 2", ErrEvidence, G)
	}
	e := EvidenceEstimate{Groups: G, LOO: make([]float64, G)}
	for g, gr := range groups {
		if len(gr.Post) == 0 || len(gr.Ref) == 0 {
			return EvidenceEstimate{}, fmt.Errorf("%w: group %d has %d target and %d reference draws, need both", ErrEvidence, g, len(gr.Post), len(gr.Ref))
		}
		for i, l := range gr.Post {
			if math.IsNaN(l) {
				return EvidenceEstimate{}, fmt.Errorf("%w: log-ratio of target draw %d of group %d is NaN", ErrEvidence, i, g)
			}
		}
		for i, l := range gr.Ref {
			switch {
			case math.IsNaN(l) || math.IsInf(l, 1):
				return EvidenceEstimate{}, fmt.Errorf("%w: log-ratio of reference draw %d of group %d is %v", ErrEvidence, i, g, l)
			case math.IsInf(l, -1):
				e.RefOutside++
			}
		}
		e.NumPost += len(gr.Post)
		e.NumRef += len(gr.Ref)
	}
	var err error
	if e.LogZ, e.Iterations, err = mengWong(groups, -1, math.NaN(), s); err != nil {
		return e, err
	}
	for g := range G {
		if e.LOO[g], _, err = mengWong(groups, g, e.LogZ, s); err != nil {
			return e, fmt.Errorf("without group %d: %w", g, err)
		}
	}
	e.SE = JackknifeSE(e.LOO)
	return e, nil
}

// mengWong iterates the optimal bridge over every group but skip, from
// log Z = start unless that is NaN, and returns log Z and the number of
// iterations.
func mengWong(groups []EvidenceGroup, skip int, start float64, s EvidenceSettings) (float64, int, error) {
	var n1, n2 int
	for g, gr := range groups {
		if g != skip {
			n1 += len(gr.Post)
			n2 += len(gr.Ref)
		}
	}
	ls1 := math.Log(float64(n1) / float64(n1+n2))
	ls2 := math.Log(float64(n2) / float64(n1+n2))
	// Start from the importance-sampling estimate log mean e^{l} over the
	// draws from q, or from the mean log-ratio over the target's draws when
	// q's draws all fell outside the target.
	lz := logMeanExpOf(groups, skip, func(gr EvidenceGroup) []float64 { return gr.Ref }, func(l float64) float64 { return l })
	if math.IsInf(lz, 0) || math.IsNaN(lz) {
		var sum float64
		for g, gr := range groups {
			if g != skip {
				for _, l := range gr.Post {
					sum += l
				}
			}
		}
		lz = sum / float64(n1)
	}
	if math.IsInf(lz, 0) || math.IsNaN(lz) {
		return math.NaN(), 0, fmt.Errorf("%w: no finite starting value", ErrEvidence)
	}
	if !math.IsNaN(start) {
		lz = start
	}
	s1, s2 := math.Exp(ls1), math.Exp(ls2)
	for it := 1; it <= s.MaxIter; it++ {
		// Both means scaled by Z: their terms lie in [0, 1/s₁] and
		// [0, 1/s₂], one exponential each; only when every term
		// underflows does the slower log-space form take over.
		num := meanOf(groups, skip, func(gr EvidenceGroup) []float64 { return gr.Ref }, func(l float64) float64 {
			return 1 / (s1 + s2*math.Exp(lz-l))
		})
		den := meanOf(groups, skip, func(gr EvidenceGroup) []float64 { return gr.Post }, func(l float64) float64 {
			return 1 / (s1*math.Exp(l-lz) + s2)
		})
		next := lz + math.Log(num) - math.Log(den)
		if !(num > 0 && den > 0) || math.IsInf(num, 0) || math.IsInf(den, 0) {
			c := ls2 + lz
			lnum := logMeanExpOf(groups, skip, func(gr EvidenceGroup) []float64 { return gr.Ref }, func(l float64) float64 {
				return l - logAddExp(ls1+l, c)
			})
			lden := logMeanExpOf(groups, skip, func(gr EvidenceGroup) []float64 { return gr.Post }, func(l float64) float64 {
				return -logAddExp(ls1+l, c)
			})
			next = lnum - lden
		}
		if math.IsNaN(next) || math.IsInf(next, 0) {
			return math.NaN(), it, fmt.Errorf("%w: the iteration left the finite numbers (log Z %v): the draws from q and from the target do not overlap", ErrEvidence, next)
		}
		if math.Abs(next-lz) < s.Tol {
			return next, it, nil
		}
		lz = next
	}
	return lz, s.MaxIter, fmt.Errorf("%w: no convergence in %d iterations", ErrEvidence, s.MaxIter)
}

// meanOf is the mean of f over the values pick gives of every group but
// skip.
func meanOf(groups []EvidenceGroup, skip int, pick func(EvidenceGroup) []float64, f func(float64) float64) float64 {
	var sum float64
	n := 0
	for g, gr := range groups {
		if g == skip {
			continue
		}
		for _, l := range pick(gr) {
			sum += f(l)
		}
		n += len(pick(gr))
	}
	return sum / float64(n)
}

// logMeanExpOf is log((1/n) Σ exp(f(l))) over the values pick gives of every
// group but skip.
func logMeanExpOf(groups []EvidenceGroup, skip int, pick func(EvidenceGroup) []float64, f func(float64) float64) float64 {
	top := math.Inf(-1)
	n := 0
	for g, gr := range groups {
		if g == skip {
			continue
		}
		for _, l := range pick(gr) {
			top = max(top, f(l))
			n++
		}
	}
	if math.IsInf(top, 0) {
		return top
	}
	var sum float64
	for g, gr := range groups {
		if g == skip {
			continue
		}
		for _, l := range pick(gr) {
			sum += math.Exp(f(l) - top)
		}
	}
	return top + math.Log(sum/float64(n))
}

// TransportEvidence estimates the log evidence log ∫ p̃(θ) dθ of target p̃
// (log p̃ its LogDensity, or LogDensityGrad's value) by MengWongEvidence,
// with q the density the transport t carries to the standard normal φ:
// q(θ) = φ(T(θ)) |det J_T(θ)|, normalised whatever T. draws[g] is group g
// of draws from p̃ (draws the transport was not fitted to); for each group
// it draws RefDraws fresh points θ = T⁻¹(z), z ~ N(0, I), from rng.
//
// A transport fitted to the target's draws makes q close to the posterior,
// so the estimate costs one target and one transport evaluation per draw,
// and its relative error is that of the overlap of q and the posterior:
// log Z ± SE, hence Bayes factors between any two models, to a relative
// accuracy that does not degrade with the model's posterior probability.
// target and t keep scratch space: give each goroutine its own.
func TransportEvidence(rng *rand.Rand, target Target, t Transport, draws [][][]float64, settings *EvidenceSettings) (EvidenceEstimate, error) {
	if rng == nil || target == nil || t == nil {
		return EvidenceEstimate{}, fmt.Errorf("%w: needs a random stream, a target and a transport", ErrEvidence)
	}
	n := target.Dim()
	if t.Dim() != n {
		return EvidenceEstimate{}, fmt.Errorf("%w: %w: transport of dimension %d for a target of dimension %d", ErrEvidence, ErrDimension, t.Dim(), n)
	}
	var s EvidenceSettings
	if settings != nil {
		s = *settings
	}
	if s.RefDraws < 0 {
		return EvidenceEstimate{}, fmt.Errorf("%w: %d reference draws per group", ErrEvidence, s.RefDraws)
	}
	logNorm := -0.5 * float64(n) * math.Log(2*math.Pi)
	logPhi := func(z []float64) float64 {
		var ss float64
		for _, v := range z {
			ss += v * v
		}
		return logNorm - ss/2
	}
	z, theta, grad := make([]float64, n), make([]float64, n), make([]float64, n)
	groups := make([]EvidenceGroup, len(draws))
	for g, d := range draws {
		gr := EvidenceGroup{Post: make([]float64, len(d))}
		for i, x := range d {
			if len(x) != n {
				return EvidenceEstimate{}, fmt.Errorf("%w: %w: draw %d of group %d has length %d, the target dimension %d", ErrEvidence, ErrDimension, i, g, len(x), n)
			}
			lp := evalValue(target, x, grad)
			if math.IsInf(lp, -1) {
				return EvidenceEstimate{}, fmt.Errorf("%w: draw %d of group %d has log-density −∞ or the target failed there: not a draw from the target", ErrEvidence, i, g)
			}
			ld, err := t.Forward(x, z)
			lq := logPhi(z) + ld
			if err != nil || math.IsNaN(lq) {
				lq = math.Inf(-1) // outside q's support: weight 0 in the bridge
			}
			gr.Post[i] = lp - lq
		}
		m := s.RefDraws
		if m == 0 {
			m = len(d)
		}
		gr.Ref = make([]float64, m)
		for j := range gr.Ref {
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			ldInv, err := t.Inverse(z, theta)
			lq := logPhi(z) - ldInv
			lp := math.Inf(-1)
			if err == nil && !math.IsNaN(lq) && !math.IsInf(lq, 0) {
				lp = evalValue(target, theta, grad)
			}
			gr.Ref[j] = lp - lq
			if math.IsInf(lp, -1) {
				gr.Ref[j] = math.Inf(-1)
			}
		}
		groups[g] = gr
	}
	return MengWongEvidence(groups, &s)
}
