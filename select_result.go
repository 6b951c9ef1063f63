package trj

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/figures"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/diag"
)

// SelectEstimate is a posterior mean estimated from the chains, with its
// Monte Carlo standard error, R̂ across chains and effective sample size.
type SelectEstimate struct {
	P    float64
	MCSE float64
	// Rhat is the rank-normalised split-R̂ (0 when it cannot be computed,
	// as for a Constant series).
	Rhat float64 `json:",omitempty"`
	ESS  float64 `json:",omitempty"`
	// Constant reports that the series never changed in any chain (a term
	// never or always included, a model never left or never visited): P is
	// then 0 or 1 and MCSE, which the chains cannot estimate, is 0.
	Constant bool `json:",omitempty"`
}

// SelectModel is one visited model.
type SelectModel struct {
	Terms ppl.Terms `json:"-"`
	// Indices are the model's terms, Label their names joined by commas.
	Indices []int
	Label   string
	// P ± MCSE is the fraction of kept steps in the model.
	SelectEstimate
	// Visits is the number of kept steps in the model.
	Visits int
	// LogEvidence is the Laplace approximation of log p(y | γ) (NaN, and
	// omitted, when the fit was flagged), and Renormalised the model's
	// probability from these evidences and the model prior, renormalised
	// over the reported top models to their total chain probability: a
	// check of the chains where the Laplace approximation is good.
	LogEvidence  float64 `json:",omitempty"`
	Renormalised float64 `json:",omitempty"`
}

// SelectMoveStat counts one kind of jump.
type SelectMoveStat struct {
	Move               string
	Proposed, Accepted int
}

// SelectResult is the result of Select.
type SelectResult struct {
	// Names are the term names and PIP[j] term j's posterior inclusion
	// probability.
	Names []string
	PIP   []SelectEstimate
	// Size is the posterior expected model size (number of terms).
	Size SelectEstimate
	// Top lists the most visited models, most visited first.
	Top []SelectModel
	// Visited is the number of distinct models visited in the kept steps
	// (summed over chains' distinct sets, counted once).
	Visited int
	// Built is the number of models built (the chains share the models
	// they build; a model is built again only after eviction from the
	// cache); Flagged counts the Laplace fits that did not converge or had to be
	// regularised (their transports are still valid, only poorer).
	Built, Flagged int
	// Moves counts the jumps proposed and accepted by kind; Within the
	// within-model steps.
	Moves  []SelectMoveStat
	Within SelectMoveStat
	// Chains lists the chains run, Steps the kept steps over all of them.
	Chains         []int
	Steps          int
	StepsPerChain  int
	Warmup         int
	Seed           uint64
	Proposal       string
	Informed       bool `json:",omitempty"`
	Seconds        float64
	LaplaceWarning string `json:",omitempty"`

	runs []*selChain
}

func newSelectResult(sp *ppl.SelectionSpace, s *SelectSettings, chains []int, runs []*selChain) *SelectResult {
	r := &SelectResult{Names: append([]string(nil), sp.Names()...), Chains: chains, StepsPerChain: s.Steps, Warmup: s.Warmup,
		Seed: s.Seed, Proposal: s.Proposal.String(), Informed: s.Informed}
	var done []*selChain
	for _, c := range runs {
		if c != nil && len(c.ids) > 0 {
			done = append(done, c)
		}
	}
	r.runs = done
	// Chains stopped early are cut to the shortest, so that the series
	// have one length.
	n := math.MaxInt
	for _, c := range done {
		n = min(n, len(c.ids))
	}
	mv := [4]string{"none", "add", "drop", "swap"}
	for m := 1; m < 4; m++ {
		st := SelectMoveStat{Move: mv[m]}
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
	for _, c := range done {
		c.ids = c.ids[:n]
	}
	r.Steps = n * len(done)
	P := sp.P()
	x := make([][]float64, len(done))
	for i := range x {
		x[i] = make([]float64, n)
	}
	// PIPs, one term at a time (memory: one series per chain).
	r.PIP = make([]SelectEstimate, P)
	for j := range P {
		for ci, c := range done {
			for t, id := range c.ids {
				x[ci][t] = b2f(c.models[id].Has(j))
			}
		}
		r.PIP[j] = seriesEstimate(x)
	}
	for ci, c := range done {
		for t, id := range c.ids {
			x[ci][t] = float64(c.models[id].Count())
		}
	}
	r.Size = seriesEstimate(x)
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
		for ci, c := range done {
			for t, id := range c.ids {
				x[ci][t] = b2f(c.models[id].Key() == k)
			}
		}
		m := SelectModel{Terms: a.terms, Indices: a.terms.Indices(), Visits: a.visits, SelectEstimate: seriesEstimate(x)}
		names := make([]string, len(m.Indices))
		for q, j := range m.Indices {
			names[q] = r.Names[j]
		}
		m.Label = strings.Join(names, ",")
		if !math.IsNaN(a.logZ) {
			m.LogEvidence = a.logZ
			lp, _ := sp.LogPrior(a.terms)
			lz[i] = lp + a.logZ
			maxL = max(maxL, lz[i])
		} else {
			allEv = false
		}
		sumP += m.P
		r.Top = append(r.Top, m)
	}
	if allEv && len(top) > 0 {
		for i := range lz {
			sumL += math.Exp(lz[i] - maxL)
		}
		for i := range r.Top {
			r.Top[i].Renormalised = sumP * math.Exp(lz[i]-maxL) / sumL
		}
	}
	return r
}

func (r *SelectResult) setFlagged(n int) {
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

// seriesEstimate is the mean of x (one series per chain) with its MCSE:
// the larger of the ESS-based standard error and the spread of the chain
// means, so that chains that disagree widen it.
func seriesEstimate(x [][]float64) SelectEstimate {
	var sum float64
	n := 0
	first := x[0][0]
	constant := true
	for _, c := range x {
		for _, v := range c {
			sum += v
			if v != first {
				constant = false
			}
		}
		n += len(c)
	}
	e := SelectEstimate{P: sum / float64(n)}
	if constant {
		e.Constant = true
		return e
	}
	mcse, err := diag.MCSEMean(x)
	if err != nil || math.IsNaN(mcse) {
		mcse = batchMeansSE(x)
	}
	spread := betweenSE(x)
	if math.IsNaN(mcse) {
		mcse = spread
	}
	e.MCSE = max(mcse, spread)
	if rh, err := diag.Rhat(x); err == nil && !math.IsNaN(rh) {
		e.Rhat = rh
	}
	if ess, err := diag.ESS(x); err == nil && !math.IsNaN(ess) && !math.IsInf(ess, 0) {
		e.ESS = ess
	}
	return e
}

// batchMeansSE is the standard error from 20 batch means per chain, the
// fallback when the ESS cannot be computed.
func batchMeansSE(x [][]float64) float64 {
	var means []float64
	for _, c := range x {
		b := max(1, len(c)/20)
		for i := 0; i+b <= len(c); i += b {
			means = append(means, stat.Mean(c[i:i+b], nil))
		}
	}
	if len(means) < 2 {
		return math.NaN()
	}
	return stat.StdDev(means, nil) / math.Sqrt(float64(len(means)))
}

// String returns the table WriteTable writes.
func (r *SelectResult) String() string {
	var b strings.Builder
	r.WriteTable(&b)
	return b.String()
}

// WriteTable writes the result as text: the run, the inclusion
// probabilities sorted from the largest, the expected model size and the
// top models.
func (r *SelectResult) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Variable selection over %d terms: %d chain(s) × %d kept steps (%d warm-up), %s transports%s, %.1f s\n",
		len(r.Names), len(r.Chains), r.StepsPerChain, r.Warmup, r.Proposal, map[bool]string{true: ", informed", false: ""}[r.Informed], r.Seconds)
	fmt.Fprintf(&b, "Visited %d distinct models; built %d", r.Visited, r.Built)
	if r.Flagged > 0 {
		fmt.Fprintf(&b, " (%d Laplace fits flagged)", r.Flagged)
	}
	b.WriteString("\nJumps accepted:")
	for _, m := range r.Moves {
		fmt.Fprintf(&b, " %s %s", m.Move, pct(m.Accepted, m.Proposed))
	}
	fmt.Fprintf(&b, "; within-model %s\n", pct(r.Within.Accepted, r.Within.Proposed))
	if r.Steps == 0 {
		b.WriteString("No kept steps.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	order := make([]int, len(r.PIP))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, c int) bool { return r.PIP[order[a]].P > r.PIP[order[c]].P })
	width := 4
	for _, n := range r.Names {
		width = max(width, len(n))
	}
	fmt.Fprintf(&b, "\nPosterior inclusion probabilities (largest first):\n%-*s  %7s  %7s  %6s  %7s\n", width, "term", "PIP", "MCSE", "R̂", "ESS")
	for _, j := range order {
		e := r.PIP[j]
		if e.Constant {
			what := "never included"
			if e.P == 1 {
				what = "never dropped"
			}
			fmt.Fprintf(&b, "%-*s  %7.4f  (%s in %d kept steps: MCSE not estimable)\n", width, r.Names[j], e.P, what, r.Steps)
			continue
		}
		fmt.Fprintf(&b, "%-*s  %7.4f  %7.4f  %6s  %7.0f\n", width, r.Names[j], e.P, e.MCSE, rhatString(e.Rhat), e.ESS)
	}
	fmt.Fprintf(&b, "\nExpected model size: %.3f ± %.3f (MCSE)\n", r.Size.P, r.Size.MCSE)
	fmt.Fprintf(&b, "\nTop %d of %d visited models (by visits):\n%4s  %7s  %7s  %9s  %4s  %s\n", len(r.Top), r.Visited, "rank", "P", "MCSE", "Laplace", "size", "terms")
	for i, m := range r.Top {
		lap := "—"
		if m.Renormalised > 0 {
			lap = fmt.Sprintf("%.4f", m.Renormalised)
		}
		label := m.Label
		if label == "" {
			label = "(none)"
		}
		mcse := fmt.Sprintf("%7.4f", m.MCSE)
		if m.Constant {
			mcse = "      —"
		}
		fmt.Fprintf(&b, "%4d  %7.4f  %s  %9s  %4d  %s\n", i+1, m.P, mcse, lap, len(m.Indices), label)
	}
	if r.LaplaceWarning != "" {
		b.WriteString("\nNote: " + r.LaplaceWarning + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(a, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(n))
}

func rhatString(v float64) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f", v)
}

// WriteJSON writes the result as indented JSON; its size grows with the
// number of terms and reported models, not with the space.
func (r *SelectResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// RunningPIP returns term j's inclusion probability after each kept step
// of every chain pooled step by step (the mean over chains of the running
// means), for a running-estimate figure.
func (r *SelectResult) RunningPIP(j int) []float64 {
	if j < 0 || j >= len(r.Names) || len(r.runs) == 0 {
		return nil
	}
	n := len(r.runs[0].ids)
	out := make([]float64, n)
	var sum float64
	for t := range n {
		for _, c := range r.runs {
			sum += b2f(c.models[c.ids[t]].Has(j))
		}
		out[t] = sum / float64((t+1)*len(r.runs))
	}
	return out
}

// WriteRunningFigure draws each chain's running inclusion probability of
// the given terms (default: the six whose PIP is nearest ½, the hardest to
// estimate), one panel per term, to path (".png" or ".svg"). It needs the
// chains of this run (a result read back from JSON has none).
func (r *SelectResult) WriteRunningFigure(path string, terms ...int) error {
	if len(r.runs) == 0 {
		return errors.New("trj: no chains to draw")
	}
	if len(terms) == 0 {
		order := make([]int, len(r.PIP))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			return math.Abs(r.PIP[order[a]].P-0.5) < math.Abs(r.PIP[order[b]].P-0.5)
		})
		terms = order[:min(6, len(order))]
	}
	series := map[string][][]float64{}
	var names []string
	for _, j := range terms {
		if j < 0 || j >= len(r.Names) {
			return fmt.Errorf("trj: term %d out of range [0, %d)", j, len(r.Names))
		}
		name := fmt.Sprintf("%s (PIP %.3f ± %.3f)", r.Names[j], r.PIP[j].P, r.PIP[j].MCSE)
		names = append(names, name)
		for _, c := range r.runs {
			run := make([]float64, len(c.ids))
			var n float64
			for i, id := range c.ids {
				n += b2f(c.models[id].Has(j))
				run[i] = n / float64(i+1)
			}
			series[name] = append(series[name], run)
		}
	}
	_, err := figures.RunningEstimates(path, "Running inclusion probabilities", series, math.NaN(),
		figures.WithOrder(names...), figures.WithYLabel("running PIP"), figures.WithXLabel("kept step"))
	return err
}

// ReadSelectResult reads a result written by WriteJSON (without the
// chains: WriteRunningFigure needs the run itself).
func ReadSelectResult(rd io.Reader) (*SelectResult, error) {
	var r SelectResult
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("trj: reading a selection result: %w", err)
	}
	for i := range r.Top {
		t, err := ppl.NewTerms(len(r.Names), r.Top[i].Indices...)
		if err != nil {
			return nil, fmt.Errorf("trj: reading a selection result: top model %d: %w", i, err)
		}
		r.Top[i].Terms = t
	}
	return &r, nil
}

// MergeSelect combines the results of shards of one run (the same space
// and settings, disjoint chains): each estimate is the step-weighted mean
// of the parts' and its MCSE the root of the weighted squared MCSEs (the
// chains are independent); R̂ is the largest of the parts' (the chains of
// different shards are not compared). Top models merge the parts' top
// lists, so a model outside every part's list is missing.
func MergeSelect(parts ...*SelectResult) (*SelectResult, error) {
	if len(parts) == 0 {
		return nil, errors.New("trj: MergeSelect: no results")
	}
	first := parts[0]
	out := &SelectResult{Names: first.Names, StepsPerChain: first.StepsPerChain, Warmup: first.Warmup, Seed: first.Seed,
		Proposal: first.Proposal, Informed: first.Informed, PIP: make([]SelectEstimate, len(first.Names))}
	seen := map[int]bool{}
	for i, r := range parts {
		if r == nil || len(r.Names) != len(first.Names) || r.Seed != first.Seed || r.Proposal != first.Proposal || r.StepsPerChain != first.StepsPerChain {
			return nil, fmt.Errorf("trj: MergeSelect: part %d is not a shard of the same run as part 0", i)
		}
		for _, c := range r.Chains {
			if seen[c] {
				return nil, fmt.Errorf("trj: MergeSelect: chain %d is in two parts", c)
			}
			seen[c] = true
			out.Chains = append(out.Chains, c)
		}
		out.Steps += r.Steps
		out.Built += r.Built
		out.Flagged += r.Flagged
		out.Seconds = max(out.Seconds, r.Seconds)
		out.Within.Move = "within"
		out.Within.Proposed += r.Within.Proposed
		out.Within.Accepted += r.Within.Accepted
	}
	sort.Ints(out.Chains)
	N := float64(out.Steps)
	if N == 0 {
		return out, nil
	}
	merge := func(get func(*SelectResult) *SelectEstimate) SelectEstimate {
		var e SelectEstimate
		var v float64
		e.Constant = true
		var firstP float64
		for i, r := range parts {
			x := get(r)
			w := float64(r.Steps) / N
			e.P += w * x.P
			v += w * w * x.MCSE * x.MCSE
			e.Rhat = max(e.Rhat, x.Rhat)
			e.ESS += x.ESS
			if i == 0 {
				firstP = x.P
			}
			if !x.Constant || x.P != firstP {
				e.Constant = false
			}
		}
		e.MCSE = math.Sqrt(v)
		return e
	}
	for j := range out.PIP {
		out.PIP[j] = merge(func(r *SelectResult) *SelectEstimate { return &r.PIP[j] })
	}
	out.Size = merge(func(r *SelectResult) *SelectEstimate { return &r.Size })
	for m := range first.Moves {
		st := SelectMoveStat{Move: first.Moves[m].Move}
		for _, r := range parts {
			if m < len(r.Moves) {
				st.Proposed += r.Moves[m].Proposed
				st.Accepted += r.Moves[m].Accepted
			}
		}
		out.Moves = append(out.Moves, st)
	}
	type agg struct {
		m      SelectModel
		visits int
		v      float64
	}
	models := map[string]*agg{}
	var keys []string
	for _, r := range parts {
		w := float64(r.Steps) / N
		for _, m := range r.Top {
			k := fmt.Sprint(m.Indices)
			a, ok := models[k]
			if !ok {
				a = &agg{m: m}
				a.m.P, a.m.MCSE, a.m.Visits = 0, 0, 0
				models[k] = a
				keys = append(keys, k)
			}
			a.visits += m.Visits
			a.m.P += w * m.P
			a.v += w * w * m.MCSE * m.MCSE
		}
	}
	sort.SliceStable(keys, func(a, b int) bool { return models[keys[a]].visits > models[keys[b]].visits })
	for _, k := range keys[:min(len(keys), max(len(first.Top), 1))] {
		a := models[k]
		a.m.Visits, a.m.MCSE, a.m.Renormalised = a.visits, math.Sqrt(a.v), 0
		out.Top = append(out.Top, a.m)
	}
	out.Visited = len(models)
	out.setFlagged(out.Flagged)
	return out, nil
}
