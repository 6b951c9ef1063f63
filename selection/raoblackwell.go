package selection

import (
	"fmt"
	"math"

	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// The PIP estimators of Result.PIPEstimator.
const (
	pipVisits           = "visits"
	pipRaoBlackwellised = "rao-blackwellised"
)

// rbAcc accumulates one chain's Rao-Blackwellised inclusion
// probabilities: at each kept step in model γ, term j's conditional
// probability P(γ_j = 1 | γ_−j, y) from the exact evidences of γ and its
// flip neighbour (ppl.WithModelEvidence), summed in the batches of
// answerAcc. A chain that stays in a model reuses its vector.
type rbAcc struct {
	sp  *ppl.SelectionSpace
	sum []float64 // by batch, p each
	cur []float64 // the conditional probabilities of the model key
	le  []float64
	key string
	// source, when set, writes the conditional probabilities of the
	// chain's current model (a collapsed kernel has its neighbours'
	// evidences already).
	source func(dst []float64)
	// every is the stride of the steps at which the vector is renewed
	// (0 or 1: every step); step counts the steps added, batch the steps
	// of each of sum's batches.
	every, step, batch int
}

// rbBatches is the number of batches of a chain's Rao-Blackwellised
// sums. R̂ of a well-mixed term, from n batch means per half-chain,
// exceeds 1 by about (χ²/df − 1)/2n: over P = 1,000 terms the largest of
// these is about 0.01 at 256 batches (N3finemapping's seeds gave
// 1.009–1.013) and 0.005 at 512, where R̂ and ESS of every term after the
// chains cost half of 1,024's. 512 batches of P = 1,000 take 4 MB per
// chain: float64, since float32 sums round a conditional of 1 − 10⁻⁹ to
// 1 and leave a near-certain term's estimate off by more than its MCSE.
const rbBatches = 512

func newRBAcc(sp *ppl.SelectionSpace, steps int) *rbAcc {
	if !sp.HasEvidence() {
		return nil
	}
	p := sp.P()
	batch := max(1, (steps+rbBatches-1)/rbBatches)
	return &rbAcc{sp: sp, cur: make([]float64, p), le: make([]float64, p),
		batch: batch, sum: make([]float64, 0, ((steps+batch-1)/batch)*p)}
}

// add adds model t's conditional probabilities to batch b.
func (r *rbAcc) add(t ppl.Terms, key string, p int) error {
	// With every > 1 the vector is renewed at every every-th step only (a
	// step in between adds the last one computed): the thinned chain's
	// estimate, unbiased as the whole chain's, at a fraction of the
	// neighbour evaluations.
	renew := r.every <= 1 || r.step%r.every == 0
	b := r.step / r.batch
	r.step++
	if r.key == "" || (key != r.key && renew) {
		if err := r.conditional(t); err != nil {
			return err
		}
		r.key = key
	}
	for len(r.sum) < (b+1)*p {
		r.sum = append(r.sum, make([]float64, p)...)
	}
	s := r.sum[b*p : (b+1)*p]
	for j, v := range r.cur {
		s[j] += v
	}
	return nil
}

// conditional sets r.cur to model t's conditional inclusion
// probabilities: with ρ_j the posterior odds of t's flip neighbour j
// against t, 1/(1+ρ_j) for a term t has and ρ_j/(1+ρ_j) for one it lacks.
func (r *rbAcc) conditional(t ppl.Terms) error {
	if r.source != nil {
		r.source(r.cur)
		return nil
	}
	self, err := r.sp.NeighbourLogEvidences(t, r.le)
	if err != nil {
		return fmt.Errorf("selection: Rao-Blackwellised PIPs: %w", err)
	}
	lp, err := r.sp.LogPrior(t)
	if err != nil {
		return err
	}
	for j := range r.cur {
		in := t.Has(j)
		lr := math.Inf(-1)
		if !math.IsInf(r.le[j], -1) {
			nb := t.With(j)
			if in {
				nb = t.Without(j)
			}
			lpj, err := r.sp.LogPrior(nb)
			if err != nil {
				return err
			}
			lr = lpj + r.le[j] - lp - self
		}
		// P(the other state) = 1/(1 + e^−lr), computed without overflow.
		other := 1 / (1 + math.Exp(-lr))
		if math.IsInf(lr, -1) {
			other = 0
		}
		if in {
			r.cur[j] = 1 - other
		} else {
			r.cur[j] = other
		}
	}
	return nil
}

// raoBlackwell returns the Rao-Blackwellised PIPs of the chains' accs
// (nil when the space has no exact evidences): the mean of the
// conditional probabilities over the kept steps, its MCSE from the
// batch means.
func raoBlackwell(accs []*answerAcc) []pipeline.Estimate {
	if len(accs) == 0 || accs[0].rb == nil {
		return nil
	}
	p := accs[0].p
	out := make([]pipeline.Estimate, p)
	x := make([][]float64, len(accs))
	for j := range p {
		var S, N float64
		for i, a := range accs {
			r := a.rb
			nb := len(r.sum) / p
			for b := range nb {
				S += r.sum[b*p+j]
			}
			N += float64(r.step)
			// The series of whole batches' means.
			x[i] = x[i][:0]
			for b := range min(nb, r.step/r.batch) {
				x[i] = append(x[i], r.sum[b*p+j]/float64(r.batch))
			}
		}
		e := pipeline.EstimateMean(x)
		if e.Steps < 4 {
			e.MCSE, e.Rhat = math.NaN(), math.NaN()
		}
		e.P = S / N
		// The batch means' ESS counts batches. Reported instead: the
		// number of independent posterior draws whose visit frequency
		// would be as precise, P(1 − P)/MCSE², which compares with the
		// frequencies' ESS and, unlike the conditional probabilities'
		// variance over the steps, does not vanish for a term whose
		// conditionals barely move.
		e.ESS = essOf(math.Sqrt(min(1, max(0, e.P))*min(1, max(0, 1-e.P))), e)
		e.Steps = int(N)
		out[j] = e
	}
	return out
}
