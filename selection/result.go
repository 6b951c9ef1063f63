package selection

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// Model is one visited model.
type Model struct {
	Terms ppl.Terms `json:"-"`
	// Indices are the model's terms, Label their names joined by commas.
	Indices []int  `json:"indices"`
	Label   string `json:"label"`
	// Estimate is the model's probability: the fraction of kept steps in
	// it, ± MCSE.
	Estimate pipeline.Estimate `json:"estimate"`
	// Visits is the number of kept steps in the model.
	Visits int `json:"visits"`
	// LogEvidence is log p(y | γ): exact where the space has closed forms
	// (ppl.WithModelEvidence), else its Laplace approximation (NaN when
	// there is no fit, or the fit was flagged); Renormalised is the
	// model's probability from these evidences and the model prior,
	// renormalised over the reported top models to their total chain
	// probability (0 without evidences): a check of the chains, exact
	// with exact evidences.
	LogEvidence  pipeline.Float `json:"log_evidence"`
	Renormalised pipeline.Float `json:"renormalised"`
}

// MoveStat counts one kind of jump.
type MoveStat struct {
	Move     string `json:"move"`
	Proposed int    `json:"proposed"`
	Accepted int    `json:"accepted"`
}

// Result is the result of Run.
type Result struct {
	// Names are the term names and PIP[j] term j's posterior inclusion
	// probability.
	//
	// On spaces with exact evidences (ppl.WithModelEvidence) PIP is
	// Rao-Blackwellised: term j's conditional probability given the other
	// terms, P(γ_j = 1 | γ_−j, y), averaged over the kept steps. It
	// estimates the same PIP as the visit frequencies with an MCSE often
	// far smaller, and, unlike them, one that holds for a term the chains
	// hardly ever include (bench/README.md). Elsewhere PIP is the
	// frequency of the kept steps that include the term. PIPEstimator
	// says which ("rao-blackwellised" or "visits"). A Rao-Blackwellised
	// PIP's ESS is P(1 − P)/MCSE²: the independent posterior draws whose
	// visit frequency would be as precise.
	Names        []string            `json:"names"`
	PIP          []pipeline.Estimate `json:"pip"`
	PIPEstimator string              `json:"pip_estimator"`
	// PIPVisits, when PIP is Rao-Blackwellised, are the visit
	// frequencies, a check of it (nil otherwise: they are PIP; see
	// VisitFrequencies).
	PIPVisits []pipeline.Estimate `json:"pip_visits,omitempty"`
	// Size is the posterior expected model size (number of terms).
	Size pipeline.Estimate `json:"size"`
	// Coefficients are the terms' model-averaged coefficients, in term
	// order, and Quantities the model-averaged posteriors of the space's
	// quantities (ppl.WithQuantities; none without them).
	Coefficients []Coefficient `json:"coefficients"`
	Quantities   []Quantity    `json:"quantities,omitempty"`
	// Warnings say what the reader must know before trusting the numbers:
	// terms whose PIP or coefficient has R̂ > 1.05 or ESS < 100 (run
	// longer). A run with warnings still succeeds.
	Warnings []string `json:"warnings,omitempty"`
	// CredibleSets are the effects' credible sets (see CredibleSet), leads
	// in decreasing PIP, on spaces that give term correlations
	// (ppl.WithTermCorrelation, as glmselect's do). Their coverage needs
	// the chains' steps: a merged result (Merge) has none.
	CredibleSets []CredibleSet `json:"credible_sets,omitempty"`
	// Top lists the most visited models, most visited first.
	Top []Model `json:"top"`
	// Visited is the number of distinct models visited in the kept steps
	// (summed over chains' distinct sets, counted once).
	Visited int `json:"visited"`
	// Built is the number of models built (the chains share the models
	// they build; a model is built again only after eviction from the
	// cache); Flagged counts the Laplace fits that did not converge or had
	// to be regularised (their transports are still valid, only poorer).
	Built   int `json:"built"`
	Flagged int `json:"flagged"`
	// Moves counts the jumps proposed and accepted by kind; Within the
	// within-model steps.
	Moves  []MoveStat `json:"moves"`
	Within MoveStat   `json:"within"`
	// Chains lists the chains run, Steps the kept steps over all of them
	// and ChainSteps each chain's (in the order of Chains; StepsPerChain
	// each unless the run was interrupted).
	Chains         []int   `json:"chains"`
	Steps          int     `json:"steps"`
	ChainSteps     []int   `json:"chain_steps"`
	StepsPerChain  int     `json:"steps_per_chain"`
	Warmup         int     `json:"warmup"`
	Seed           uint64  `json:"seed"`
	Proposal       string  `json:"proposal"`
	Informed       bool    `json:"informed,omitempty"`
	Seconds        float64 `json:"seconds"`
	LaplaceWarning string  `json:"laplace_warning,omitempty"`
	// NumChains is the number of chains of the whole run (a shard runs
	// some of them, Chains).
	NumChains int `json:"num_chains"`
	// Fingerprint identifies the space (its models and so the data) and
	// the settings of the run, but not its shard: shards of one run share
	// it, and Merge refuses parts that do not. Settings lists the settings
	// by path (Kernel.SwapProb), for Merge to name the one in which two
	// runs differ.
	Fingerprint string            `json:"fingerprint"`
	Settings    map[string]string `json:"settings"`
	// Complete is false for a partial result: the run was interrupted, and
	// the estimates count every step its chains finished (the interrupt
	// rule: chains of different lengths, none cut). Stopped says why. A
	// partial result reads, merges and prints like a whole one.
	Complete bool   `json:"complete"`
	Stopped  string `json:"stopped,omitempty"`

	runs []*selChain
}

func newSelectResult(sp *ppl.SelectionSpace, s *Settings, chains []int, ran []*selChain) *Result {
	r := &Result{Names: append([]string(nil), sp.Names()...), Chains: chains, StepsPerChain: s.Steps, Warmup: s.Warmup,
		Seed: s.Seed, Proposal: s.Proposal.String(), Informed: s.Informed}
	var done []*selChain
	for _, c := range ran {
		if c != nil && len(c.ids) > 0 {
			done = append(done, c)
		}
	}
	r.runs = done
	// The interrupt rule: chains stopped early keep every finished step,
	// so the series may have different lengths.
	lens := make([]int, len(done))
	for i, c := range done {
		lens[i] = len(c.ids)
		r.Steps += lens[i]
	}
	r.ChainSteps = make([]int, len(chains))
	for i, c := range ran {
		if c != nil {
			r.ChainSteps[i] = len(c.ids)
		}
	}
	mv := [4]string{"none", "add", "drop", "swap"}
	for m := 1; m < 4; m++ {
		st := MoveStat{Move: mv[m]}
		for _, c := range done {
			st.Proposed += c.moves[m].proposed
			st.Accepted += c.moves[m].accepted
		}
		r.Moves = append(r.Moves, st)
	}
	r.Within.Move = "within"
	for _, c := range done {
		r.Within.Proposed += c.within.proposed
		r.Within.Accepted += c.within.accepted
	}
	if len(done) == 0 {
		return r
	}
	P := sp.P()
	var x [][]float64
	// PIPs, one term at a time (memory: one series per chain).
	r.PIP = make([]pipeline.Estimate, P)
	ever := make([]bool, P)
	for _, c := range done {
		for _, tm := range c.models {
			for _, j := range tm.Indices() {
				ever[j] = true
			}
		}
	}
	var never *pipeline.Estimate // of a term no chain included: one series of zeros
	B := pipBatch(P, r.Steps)
	var counts [][]float64 // by chain: batch × term inclusion counts (B > 1)
	if B > 1 {
		counts = batchCounts(done, lens, B, P)
	}
	for j := range P {
		if !ever[j] && never != nil {
			r.PIP[j] = *never
			continue
		}
		if B > 1 {
			r.PIP[j] = batchedPIP(&x, counts, lens, B, P, j)
		} else {
			r.PIP[j] = pipEstimate(&x, done, lens, B, func(c int, id int32) bool { return done[c].models[id].Has(j) })
		}
		if !ever[j] {
			never = &r.PIP[j]
		}
	}
	x = runs.Series(x, lens, func(c, t int) float64 { return float64(done[c].models[done[c].ids[t]].Count()) })
	r.Size = pipeline.EstimateMean(x)
	accs := make([]*answerAcc, len(done))
	for i, c := range done {
		accs[i] = c.answer
	}
	r.Coefficients, r.Quantities = answer(r.Names, accs)
	r.PIPEstimator = pipVisits
	if rb := raoBlackwell(accs); rb != nil {
		r.PIPVisits, r.PIP, r.PIPEstimator = r.PIP, rb, pipRaoBlackwellised
	}
	r.CredibleSets = credibleSets(sp, r, done, lens, s.CredibleLevel, s.Purity)
	// Models: global visit counts.
	type agg struct {
		terms  ppl.Terms
		visits int
		logZ   float64
	}
	all := map[string]*agg{}
	var order []string
	for _, c := range done {
		counts := make([]int, len(c.models))
		for _, id := range c.ids {
			counts[id]++
		}
		for id, tm := range c.models {
			if counts[id] == 0 {
				continue
			}
			k := tm.Key()
			a, ok := all[k]
			if !ok {
				a = &agg{terms: tm, logZ: c.evidence[id]}
				all[k] = a
				order = append(order, k)
			}
			a.visits += counts[id]
		}
	}
	r.Visited = len(all)
	sort.SliceStable(order, func(a, b int) bool { return all[order[a]].visits > all[order[b]].visits })
	top := order[:min(s.Top, len(order))]
	var sumP, sumL float64
	maxL := math.Inf(-1)
	lz := make([]float64, len(top))
	allEv := true
	for i, k := range top {
		a := all[k]
		// The model's number in each chain (−1: never visited there).
		idk := make([]int32, len(done))
		for c := range done {
			idk[c] = -1
			for id, tm := range done[c].models {
				if tm.Equal(a.terms) {
					idk[c] = int32(id)
					break
				}
			}
		}
		est := pipEstimate(&x, done, lens, pipBatch(len(top), r.Steps), func(c int, id int32) bool { return id == idk[c] })
		m := Model{Terms: a.terms, Indices: a.terms.Indices(), Visits: a.visits, Estimate: est, LogEvidence: pipeline.Float(math.NaN())}
		names := make([]string, len(m.Indices))
		for q, j := range m.Indices {
			names[q] = r.Names[j]
		}
		m.Label = strings.Join(names, ",")
		if !math.IsNaN(a.logZ) {
			m.LogEvidence = pipeline.Float(a.logZ)
			lp, _ := sp.LogPrior(a.terms)
			lz[i] = lp + a.logZ
			maxL = max(maxL, lz[i])
		} else {
			allEv = false
		}
		sumP += m.Estimate.P
		r.Top = append(r.Top, m)
	}
	r.setWarnings()
	if allEv && len(top) > 0 {
		for i := range lz {
			sumL += math.Exp(lz[i] - maxL)
		}
		for i := range r.Top {
			r.Top[i].Renormalised = pipeline.Float(sumP * math.Exp(lz[i]-maxL) / sumL)
		}
	}
	return r
}

// pipWork bounds the values the PIPs' diagnostics read, terms × series
// length: at P = 1,000 and four chains of 40,000 steps, R̂ and ESS of
// every term's step series would cost more than the chains.
const pipWork = 1 << 21

// pipBatch is the number of consecutive steps whose mean is one value of
// a PIP's series for R̂, ESS and MCSE: 1 (every step) unless the run's P
// terms × steps exceed pipWork. Batch means keep the estimate's mean and
// MCSE; R̂ then compares chains of batch means.
func pipBatch(p, steps int) int { return max(1, (p*steps+pipWork-1)/pipWork) }

// pipEstimate is the estimate of P(in(γ)) over the chains done (lens
// steps each), from the series of B-step means (*x is the series' reused
// storage); its P is the mean over every step and its ESS counts steps.
func pipEstimate(x *[][]float64, done []*selChain, lens []int, B int, in func(c int, id int32) bool) pipeline.Estimate {
	if B == 1 {
		*x = runs.Series(*x, lens, func(c, t int) float64 { return b2f(in(c, done[c].ids[t])) })
		return pipeline.EstimateMean(*x)
	}
	lb := make([]int, len(lens))
	var hits, steps int
	for i, n := range lens {
		lb[i] = (n + B - 1) / B
	}
	*x = runs.Series(*x, lb, func(c, t int) float64 {
		ids := done[c].ids[t*B : min((t+1)*B, lens[c])]
		h := 0
		for _, id := range ids {
			if in(c, id) {
				h++
			}
		}
		hits += h
		steps += len(ids)
		return float64(h) / float64(len(ids))
	})
	e := pipeline.EstimateMean(*x)
	e.P, e.Steps = float64(hits)/float64(steps), steps
	e.ESS = essOf(math.Sqrt(e.P*(1-e.P)), e)
	return e
}

// batchCounts counts, for every chain and B-step batch, the steps that
// hold each of the P terms: one pass over the steps and their models'
// terms, where a pass per term would read P × steps indicators.
func batchCounts(done []*selChain, lens []int, B, P int) [][]float64 {
	out := make([][]float64, len(done))
	for c, ch := range done {
		idx := make([][]int, len(ch.models))
		for id, tm := range ch.models {
			idx[id] = tm.Indices()
		}
		nb := (lens[c] + B - 1) / B
		cnt := make([]float64, nb*P)
		for t, id := range ch.ids[:lens[c]] {
			row := cnt[(t/B)*P:]
			for _, j := range idx[id] {
				row[j]++
			}
		}
		out[c] = cnt
	}
	return out
}

// batchedPIP is pipEstimate of term j from batchCounts.
func batchedPIP(x *[][]float64, counts [][]float64, lens []int, B, P, j int) pipeline.Estimate {
	lb := make([]int, len(lens))
	var hits float64
	steps := 0
	for c, n := range lens {
		lb[c] = (n + B - 1) / B
		steps += n
	}
	*x = runs.Series(*x, lb, func(c, b int) float64 {
		h := counts[c][b*P+j]
		hits += h
		return h / float64(min(B, lens[c]-b*B))
	})
	e := pipeline.EstimateMean(*x)
	e.P, e.Steps = hits/float64(steps), steps
	e.ESS = essOf(math.Sqrt(e.P*(1-e.P)), e)
	return e
}

func (r *Result) setFlagged(n int) {
	r.Flagged = n
	if n > 0 {
		r.LaplaceWarning = fmt.Sprintf("%d Laplace fits did not converge or had an indefinite Hessian; their jumps are still exact but may mix slowly", n)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// VisitFrequencies returns each term's PIP as the frequency of the kept
// steps that include it, whichever estimator PIP is: the quantity the
// chain files and RunningPIP count.
func (r *Result) VisitFrequencies() []pipeline.Estimate {
	if r.PIPEstimator == pipRaoBlackwellised {
		return r.PIPVisits
	}
	return r.PIP
}
