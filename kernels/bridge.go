package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// JumpProposer makes one between-model proposal from a given point without
// moving a chain; TRJ, CTRJ and IndependenceRJ implement it.
type JumpProposer interface {
	ProposeJump(rng *rand.Rand, k int, theta []float64) (JumpRecord, error)
}

// EvaluationJumps makes one proposal from every evaluation draw: draws[k]
// holds draws θ from π_k (one slice per draw). The destination model is
// drawn from j_k(· | k' ≠ k) by p. Use the records with BartolucciBridge;
// the paper uses draws independent of the ones the transports were fitted
// to.
func EvaluationJumps(rng *rand.Rand, p JumpProposer, draws [][][]float64) ([]JumpRecord, error) {
	if p == nil || rng == nil {
		return nil, errors.New("kernels: EvaluationJumps needs a proposer and a random stream")
	}
	n := 0
	for _, d := range draws {
		n += len(d)
	}
	out := make([]JumpRecord, 0, n)
	for k, d := range draws {
		for i, theta := range d {
			r, err := p.ProposeJump(rng, k, theta)
			if err != nil {
				return nil, fmt.Errorf("kernels: evaluation draw %d of model %d: %w", i, k, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// BridgeEstimate is the Bartolucci bridge estimate of model probabilities
// from the acceptance probabilities of between-model proposals
// (Bartolucci, Scaccia and Mira 2006, eq. 16; the paper's eq. for B̂ and
// π̂). Undefined entries (no proposals in a direction) are NaN.
//
// The identity behind it is detailed balance of the jump part of the
// kernel, integrated over θ:
//
//	π(k) j_k(k') ᾱ_{k→k'} = π(k') j_{k'}(k) ᾱ_{k'→k},
//
// where ᾱ_{k→k'} is the mean acceptance probability of proposals from
// θ ~ π_k to k'. Hence the ratio of means in the paper's B̂_{k,k'} (mean α
// of the proposals k' → k over mean α of the proposals k → k') estimates
// the posterior odds π(k)/π(k') times j_k(k')/j_{k'}(k), and the Bayes factor
// m_k/m_{k'} after dividing by the prior odds p(k)/p(k'). The paper writes
// B̂ for the Bayes factor, which is exact when jumps are symmetric and model
// priors uniform; this type keeps the three quantities apart.
type BridgeEstimate struct {
	// Count[k][k'] is the number of proposals k → k'.
	Count [][]int
	// MeanAccept[k][k'] is ᾱ_{k→k'}.
	MeanAccept [][]float64
	// Ratio[k][k'] is the paper's B̂_{k,k'} = ᾱ_{k'→k} / ᾱ_{k→k'}.
	Ratio [][]float64
	// Odds[k][k'] estimates the posterior odds π(k)/π(k') =
	// Ratio[k][k']·j_{k'}(k)/j_k(k').
	Odds [][]float64
	// BayesFactor[k][k'] estimates m_k/m_{k'} = Odds[k][k']·p(k')/p(k),
	// p the prior model probabilities inside the target's log-density.
	BayesFactor [][]float64
	// Raw[k] is π̂(k) by the paper's formula with reference model j = k,
	// π̂(k) = (1 + Σ_{i≠k} Odds[i][k])⁻¹, which equals the paper's
	// B̂_{k,k}⁻¹(1 + Σ_{i≠k} B̂_{i,k})⁻¹ with Bayes factors under uniform
	// priors. As in the published code it is not renormalised: with more
	// than two models the pairwise estimates are not transitive, so the
	// Raw values need not sum to one.
	Raw []float64
	// Normalized is Raw divided by its sum.
	Normalized []float64
}

// ErrNoJumps is returned (wrapped) when the records leave a needed pair of
// models without proposals in one direction, or with zero mean acceptance.
var ErrNoJumps = errors.New("kernels: not enough accepted-probability mass between models")

// BartolucciBridge computes the bridge estimate from jump records (from a
// chain's RJInfo.Jump or from EvaluationJumps). jump is the matrix j_k(k')
// the proposals used; prior holds the prior model probabilities included in
// the target's log-density (nil: uniform), used only for BayesFactor and
// Probabilities.
//
// It returns an error wrapping ErrNoJumps when some model k lacks, for some
// other model i, proposals in both directions with positive mean acceptance
// (Raw[k] then needs Odds[i][k]); the partial estimate is still returned.
func BartolucciBridge(records []JumpRecord, jump [][]float64, prior []float64) (BridgeEstimate, error) {
	nm := len(jump)
	if nm == 0 {
		return BridgeEstimate{}, fmt.Errorf("%w: empty", ErrJumpMatrix)
	}
	jt, err := newRJJumps(jump, nm)
	if err != nil {
		return BridgeEstimate{}, err
	}
	if prior == nil {
		prior = make([]float64, nm)
		for i := range prior {
			prior[i] = 1 / float64(nm)
		}
	}
	if len(prior) != nm {
		return BridgeEstimate{}, fmt.Errorf("%w: %d prior probabilities for %d models", ErrDimension, len(prior), nm)
	}
	for i, p := range prior {
		if !(p > 0) || math.IsInf(p, 0) {
			return BridgeEstimate{}, fmt.Errorf("kernels: prior model probability %d is %v, want > 0", i, p)
		}
	}
	e := BridgeEstimate{
		Count: make([][]int, nm), MeanAccept: rjMatrix(nm), Ratio: rjMatrix(nm),
		Odds: rjMatrix(nm), BayesFactor: rjMatrix(nm),
		Raw: make([]float64, nm), Normalized: make([]float64, nm),
	}
	sum := rjMatrix(nm)
	for k := range e.Count {
		e.Count[k] = make([]int, nm)
		for kp := range sum[k] {
			sum[k][kp] = 0
		}
	}
	for i, r := range records {
		if r.From < 0 || r.From >= nm || r.To < 0 || r.To >= nm || r.From == r.To {
			return BridgeEstimate{}, fmt.Errorf("kernels: record %d has models %d → %d (of %d)", i, r.From, r.To, nm)
		}
		if !(r.AcceptProb >= 0 && r.AcceptProb <= 1) {
			return BridgeEstimate{}, fmt.Errorf("kernels: record %d has acceptance probability %v", i, r.AcceptProb)
		}
		e.Count[r.From][r.To]++
		sum[r.From][r.To] += r.AcceptProb
	}
	for k := 0; k < nm; k++ {
		for kp := 0; kp < nm; kp++ {
			if k == kp {
				e.MeanAccept[k][kp], e.Ratio[k][kp], e.Odds[k][kp], e.BayesFactor[k][kp] = math.NaN(), 1, 1, 1
				continue
			}
			if c := e.Count[k][kp]; c > 0 {
				e.MeanAccept[k][kp] = sum[k][kp] / float64(c)
			}
		}
	}
	for k := 0; k < nm; k++ {
		for kp := 0; kp < nm; kp++ {
			if k == kp {
				continue
			}
			fwd, back := e.MeanAccept[k][kp], e.MeanAccept[kp][k]
			if fwd > 0 && back > 0 {
				e.Ratio[k][kp] = back / fwd
				e.Odds[k][kp] = e.Ratio[k][kp] * jt.p[kp][k] / jt.p[k][kp]
				e.BayesFactor[k][kp] = e.Odds[k][kp] * prior[kp] / prior[k]
			}
		}
	}
	var missing error
	total := 0.0
	for k := 0; k < nm; k++ {
		s := 1.0
		for i := 0; i < nm; i++ {
			if i == k {
				continue
			}
			if math.IsNaN(e.Odds[i][k]) {
				if missing == nil {
					missing = fmt.Errorf("%w: models %d and %d (counts %d and %d)", ErrNoJumps, i, k, e.Count[i][k], e.Count[k][i])
				}
				continue
			}
			s += e.Odds[i][k]
		}
		e.Raw[k] = 1 / s
		total += e.Raw[k]
	}
	for k := range e.Raw {
		e.Normalized[k] = e.Raw[k] / total
	}
	if missing != nil {
		for k := range e.Raw {
			e.Raw[k], e.Normalized[k] = math.NaN(), math.NaN()
		}
	}
	return e, missing
}

func rjMatrix(n int) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range m[i] {
			m[i][j] = math.NaN()
		}
	}
	return m
}

// Probabilities re-expresses the estimate under other prior model
// probabilities (nil: uniform, the paper's setting):
// raw[k] = (1 + Σ_{i≠k} prior[i]/prior[k]·BayesFactor[i][k])⁻¹, and
// normalized = raw / Σ raw.
func (e BridgeEstimate) Probabilities(prior []float64) (raw, normalized []float64, err error) {
	nm := len(e.Raw)
	if prior == nil {
		prior = make([]float64, nm)
		for i := range prior {
			prior[i] = 1 / float64(nm)
		}
	}
	if len(prior) != nm {
		return nil, nil, fmt.Errorf("%w: %d prior probabilities for %d models", ErrDimension, len(prior), nm)
	}
	for i, p := range prior {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, nil, fmt.Errorf("kernels: prior model probability %d is %v, want > 0", i, p)
		}
	}
	raw = make([]float64, nm)
	normalized = make([]float64, nm)
	total := 0.0
	for k := 0; k < nm; k++ {
		s := 1.0
		for i := 0; i < nm; i++ {
			if i != k {
				s += prior[i] / prior[k] * e.BayesFactor[i][k]
			}
		}
		raw[k] = 1 / s
		total += raw[k]
	}
	for k := range raw {
		normalized[k] = raw[k] / total
	}
	if math.IsNaN(total) {
		return raw, normalized, fmt.Errorf("%w: some Bayes factors are undefined", ErrNoJumps)
	}
	return raw, normalized, nil
}

// ReferenceProbabilities is the paper's formula with a fixed reference
// model j: π̂(k) = Odds[k][j] / (1 + Σ_{i≠j} Odds[i][j]). These sum to one by
// construction but use only the bridges into j.
func (e BridgeEstimate) ReferenceProbabilities(j int) ([]float64, error) {
	nm := len(e.Raw)
	if j < 0 || j >= nm {
		return nil, fmt.Errorf("kernels: reference model %d out of range [0, %d)", j, nm)
	}
	s := 0.0
	for i := 0; i < nm; i++ {
		s += e.Odds[i][j]
	}
	out := make([]float64, nm)
	for k := range out {
		out[k] = e.Odds[k][j] / s
	}
	if math.IsNaN(s) {
		return out, fmt.Errorf("%w: some bridges into model %d are undefined", ErrNoJumps, j)
	}
	return out, nil
}

// Balance returns the balance estimate of the model probabilities from the
// same proposals as e: the stationary distribution π of the model-to-model
// matrix P[k][k'] = jump[k][k']·MeanAccept[k][k'] (k' ≠ k; the diagonal
// holds the rest), which the RJ kernel's detailed balance makes the
// posterior in the limit (jump is the matrix the proposals were made
// with). It solves π(P − I) = 0 with Σπ = 1, which needs no diagonal, and
// fails when the solution is not a finite distribution (models cut off
// from the others).
func (e BridgeEstimate) Balance(jump [][]float64) ([]float64, error) {
	K := len(jump)
	// A = (P − I)ᵀ with its last row replaced by ones, A·π = e_K.
	a := mat.NewDense(K, K, nil)
	for k := range K {
		for i := range K {
			if i == k {
				continue
			}
			v := 0.0
			if i < len(e.MeanAccept[k]) && !math.IsNaN(e.MeanAccept[k][i]) {
				v = jump[k][i] * e.MeanAccept[k][i]
			}
			a.Set(i, k, v)
			a.Set(k, k, a.At(k, k)-v)
		}
	}
	for k := range K {
		a.Set(K-1, k, 1)
	}
	rhs := mat.NewVecDense(K, nil)
	rhs.SetVec(K-1, 1)
	var pi mat.VecDense
	if err := pi.SolveVec(a, rhs); err != nil {
		return nil, fmt.Errorf("kernels: balance: %w", err)
	}
	out := make([]float64, K)
	for k := range out {
		v := pi.AtVec(k)
		if !(v > 0 && v < 1+1e-9) {
			return nil, fmt.Errorf("kernels: balance: model %d has stationary probability %v", k, v)
		}
		out[k] = v
	}
	return out, nil
}

// AcceptESS returns the effective number of accepted proposals (Σα)²/Σα²
// over the acceptance probabilities α of the proposals k → k' in records
// (of all groups), for every pair of K models (0 on the diagonal and where
// none was accepted), and its smallest off-diagonal value with its pair.
// The relative standard error of the mean acceptance is about
// ESS^(−1/2): a bridge estimate resting on a few accepted proposals is
// skewed and its standard error too small.
func AcceptESS(records [][]JumpRecord, K int) (ess [][]float64, least float64, from, to int) {
	sum, sq := make([]float64, K*K), make([]float64, K*K)
	for _, rs := range records {
		for _, r := range rs {
			sum[r.From*K+r.To] += r.AcceptProb
			sq[r.From*K+r.To] += r.AcceptProb * r.AcceptProb
		}
	}
	ess = make([][]float64, K)
	least = math.Inf(1)
	for k := range K {
		ess[k] = make([]float64, K)
		for kp := range K {
			if kp == k {
				continue
			}
			if s := sq[k*K+kp]; s > 0 {
				ess[k][kp] = sum[k*K+kp] * sum[k*K+kp] / s
			}
			if ess[k][kp] < least {
				least, from, to = ess[k][kp], k, kp
			}
		}
	}
	return ess, least, from, to
}

// JackknifeSE is the delete-one jackknife standard error
// √((G−1)/G · Σ_g (θ_{−g} − θ̄)²) of an estimate θ from its values loo[g]
// = θ_{−g} computed without group g, for each of G groups.
func JackknifeSE(loo []float64) float64 {
	G := float64(len(loo))
	var mean float64
	for _, v := range loo {
		mean += v
	}
	mean /= G
	var ss float64
	for _, v := range loo {
		d := v - mean
		ss += d * d
	}
	return math.Sqrt((G - 1) / G * ss)
}
