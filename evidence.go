package trj

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// ModelEvidence is every model's log evidence log p(y | k) from its own
// transport, by bridge sampling between the model's posterior (the pilot's
// evaluation draws, which the transport was not fitted to) and the
// normalised density the transport defines (kernels.TransportEvidence), and
// the model probabilities it implies.
//
// Each model's estimate uses only that model's draws, so its error is
// relative: a model of posterior probability 10⁻¹² gets its probability to
// the same few per cent as a likely one, where the chains' frequencies and
// the cross-model bridge (which rest on visits to and accepted jumps into
// the model) give it at best to within an absolute error. The standard
// errors are delete-one-group jackknife errors over the evaluation groups,
// so they cover the pilot draws' autocorrelation, or, for NUTS pilots, the
// larger of that and the jackknife over whole pilot chains (see
// Pilot.EvalChains); the errors of different models are independent. A
// mode that no pilot chain found is missing from the estimate, and no
// standard error can show it: Result.CheckModelEvidence compares the
// estimates with the chains'.
type ModelEvidence struct {
	// LogZ[k] estimates log p(y | k) and LogZSE is its standard error.
	LogZ   []float64 `json:"log_z"`
	LogZSE []float64 `json:"log_z_se"`
	// P[k] = p(k)·Z_k / Σ_j p(j)·Z_j, the posterior model probabilities,
	// and SE their delta-method standard errors.
	P  []float64 `json:"p"`
	SE []float64 `json:"se"`
	// Estimates are the full per-model estimates (counts, leave-one-out
	// values).
	Estimates []kernels.EvidenceEstimate `json:"-"`
}

// LogBayesFactor returns log(Z_k / Z_j), the log Bayes factor of model k
// against model j, and its standard error (the models' errors are
// independent). It returns NaN, NaN when e is nil or k or j is out of
// range.
func (e *ModelEvidence) LogBayesFactor(k, j int) (logBF, se float64) {
	if e == nil || k < 0 || j < 0 || k >= len(e.LogZ) || j >= len(e.LogZ) {
		return math.NaN(), math.NaN()
	}
	if k == j {
		return 0, 0
	}
	return e.LogZ[k] - e.LogZ[j], math.Hypot(e.LogZSE[k], e.LogZSE[j])
}

// modelEvidence estimates every model's log evidence from its transport,
// one model per worker, each with its own stream. It fails for families
// without per-model transports (CTRJ, independence proposals).
func modelEvidence(ctx context.Context, seed uint64, space *ppl.Space, props FittedProposals, pilots []*Pilot, prior []float64) (*ModelEvidence, error) {
	pm, ok := props.(ModelTransports)
	if !ok {
		return nil, errors.New("the proposals have no per-model transports")
	}
	K := len(pilots)
	e := &ModelEvidence{LogZ: make([]float64, K), LogZSE: make([]float64, K), Estimates: make([]kernels.EvidenceEstimate, K)}
	err := parallel.For(ctx, K, func(ctx context.Context, k int) error {
		m, err := space.Model(k)
		if err != nil {
			return err
		}
		t, err := pm.ModelTransport(k)
		if err != nil {
			return fmt.Errorf("transport of model %q: %w", space.ModelLabel(k), err)
		}
		groups := thin(pilots[k].Eval, evidenceDraws)
		est, err := kernels.TransportEvidence(runs.Stream(seed, "evidence", k), m.Clone(), t, groups, nil)
		if err != nil {
			return fmt.Errorf("model %q: %w", space.ModelLabel(k), err)
		}
		e.Estimates[k], e.LogZ[k], e.LogZSE[k] = est, est.LogZ, est.SE
		if c := pilots[k].EvalChains; c > 1 && len(groups) > c && len(groups)%c == 0 {
			// The jackknife over whole chains sees what the one over
			// groups cannot: chains that sit in different modes in
			// proportions other than the posterior's (factor analysis:
			// log Z errors of 5 group SEs, 2.7 chain SEs).
			byChain, err := kernels.TransportEvidence(runs.Stream(seed, "evidence/chains", k), m.Clone(), t, mergeGroups(groups, c), nil)
			if err != nil {
				return fmt.Errorf("model %q: %w", space.ModelLabel(k), err)
			}
			e.LogZSE[k] = max(est.SE, byChain.SE)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.P, e.SE = logZProbabilities(prior, e.LogZ, e.LogZSE)
	return e, nil
}

// evidenceDraws bounds the evaluation draws per model behind the per-model
// evidence: with 2000 its log Z SE was already 0.002–0.004 on the
// conjugate tests, and `trj run sas -paper` has 10⁶ per model, at each of
// which the transport and the model would be evaluated twice.
const evidenceDraws = 20000

// mergeGroups joins consecutive groups into n groups of equal count.
func mergeGroups(groups [][][]float64, n int) [][][]float64 {
	per := len(groups) / n
	out := make([][][]float64, n)
	for i := range out {
		for _, g := range groups[i*per : (i+1)*per] {
			out[i] = append(out[i], g...)
		}
	}
	return out
}

// thin returns the groups with at most n draws in all, each group cut in
// the same proportion to evenly spaced draws (at least one each).
func thin(groups [][][]float64, n int) [][][]float64 {
	total := 0
	for _, g := range groups {
		total += len(g)
	}
	if total <= n {
		return groups
	}
	out := make([][][]float64, len(groups))
	for i, g := range groups {
		out[i] = spread(g, max(len(g)*n/total, 1))
	}
	return out
}

// PosteriorProbabilities returns the posterior model probabilities
// p_k = p(k)·Z_k / Σ_j p(j)·Z_j from the models' log evidences logZ, with
// delta-method standard errors for independent log Z errors logZSE (nil:
// exact log evidences), as bridgesampling's post_prob does. prior holds
// the prior model probabilities, normalised here (nil: uniform). Since
// ∂p_k/∂log Z_j = p_k(δ_kj − p_j), SE(p_k)/p_k stays the size of the log Z
// errors however small p_k is. The SE is finite for every finite logZSE
// (at most half the largest); since no estimate confined to [0, 1] has a
// standard deviation above ½, an SE that large says only that the
// linearisation fails and p_k is unknown. It fails on empty or mismatched
// inputs, a log evidence that is NaN or +Inf, a negative or non-finite
// standard error and a prior that is not positive and finite.
func PosteriorProbabilities(logZ, logZSE, prior []float64) (p, se []float64, err error) {
	K := len(logZ)
	if K == 0 {
		return nil, nil, errors.New("trj: PosteriorProbabilities of no models")
	}
	if logZSE == nil {
		logZSE = make([]float64, K)
	}
	if prior == nil {
		prior = make([]float64, K)
		for k := range prior {
			prior[k] = 1
		}
	}
	if len(logZSE) != K || len(prior) != K {
		return nil, nil, fmt.Errorf("trj: PosteriorProbabilities of %d log evidences with %d standard errors and %d prior probabilities", K, len(logZSE), len(prior))
	}
	finite := false
	for k := range logZ {
		switch {
		case math.IsNaN(logZ[k]) || math.IsInf(logZ[k], 1):
			return nil, nil, fmt.Errorf("trj: log evidence %d is %v", k, logZ[k])
		case !(logZSE[k] >= 0) || math.IsInf(logZSE[k], 1):
			return nil, nil, fmt.Errorf("trj: standard error %d of the log evidences is %v", k, logZSE[k])
		case !(prior[k] > 0) || math.IsInf(prior[k], 1):
			return nil, nil, fmt.Errorf("trj: prior probability %d is %v, want positive and finite", k, prior[k])
		}
		finite = finite || !math.IsInf(logZ[k], -1)
	}
	if !finite {
		return nil, nil, errors.New("trj: every log evidence is −Inf")
	}
	p, se = logZProbabilities(prior, logZ, logZSE)
	return p, se, nil
}

// logZProbabilities is PosteriorProbabilities without its checks, for
// inputs Run made itself (an unnormalised prior is fine).
func logZProbabilities(prior, logZ, se []float64) (p, pse []float64) {
	K := len(logZ)
	l := make([]float64, K)
	top := math.Inf(-1)
	for k := range l {
		l[k] = math.Log(prior[k]) + logZ[k]
		top = max(top, l[k])
	}
	p, pse = make([]float64, K), make([]float64, K)
	var sum float64
	for k := range l {
		p[k] = math.Exp(l[k] - top)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	for k := range p {
		var v float64
		for j := range p {
			d := -p[k] * p[j]
			if j == k {
				d += p[k]
			}
			v += d * d * se[j] * se[j]
		}
		pse[k] = math.Sqrt(v)
		if math.IsInf(v, 1) {
			pse[k] = deltaSEScaled(k, p, se)
		}
	}
	return p, pse
}

// deltaSEScaled is the delta-method SE of p_k, √(Σ_j (∂p_k/∂log Z_j·se_j)²),
// with each term divided by the largest before it is squared, for standard
// errors whose squares overflow (the direct sum is kept otherwise: same
// bits as before). It is finite for finite se: Σ_j |∂p_k/∂log Z_j| =
// 2p_k(1 − p_k) ≤ ½ bounds it by half the largest se_j.
func deltaSEScaled(k int, p, se []float64) float64 {
	term := func(j int) float64 {
		d := -p[k] * p[j]
		if j == k {
			d += p[k]
		}
		return math.Abs(d * se[j])
	}
	var top float64
	for j := range p {
		top = max(top, term(j))
	}
	if top == 0 {
		return 0
	}
	var v float64
	for j := range p {
		r := term(j) / top
		v += r * r
	}
	return top * math.Sqrt(v)
}

// evidence is Run's stage that estimates every model's log evidence from
// its transport. Its failure stops nothing (the chains need no evidence):
// Result.ModelEvidenceError records it.
func (r *runner) evidence() error {
	if _, ok := r.props.(ModelTransports); !ok {
		return nil // CTRJ and independence proposals: no per-model density
	}
	e, err := modelEvidence(r.ctx, r.s.Seed, r.space, r.props, r.pilots, r.res.Prior)
	if err != nil {
		r.res.ModelEvidenceError = fmt.Sprintf("trj: per-model evidence: %v", err)
		return err
	}
	r.res.ModelEvidence = e
	return nil
}

// perModelNote is the table's line on which estimate to read.
const perModelNote = "per-model: p(k)Zₖ/Σ from each model's own log evidence (its transport as bridge); its error is relative: read it for rare models and Bayes factors (ModelEvidence.LogBayesFactor); chains and bridge check it"

// readNote is the table's line on its "read" column.
const readNote = "read (Result.Read): the estimate of least SE among the chains and the evidences that agree with them"

// perModelCell formats a probability ± SE with three significant digits,
// so that a probability of 10⁻¹² and its error show.
func perModelCell(p, se float64) string {
	if p >= 1e-3 || p == 0 {
		return fmt.Sprintf("%.4f ± %.4f", p, se)
	}
	return fmt.Sprintf("%.3g ± %.2g", p, se)
}
