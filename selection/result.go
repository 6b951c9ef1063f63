package selection

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/trjgo/trj/internal/figures"
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
	// LogEvidence is the Laplace approximation of log p(y | γ) (NaN when
	// there is no fit, or the fit was flagged), and Renormalised the
	// model's probability from these evidences and the model prior,
	// renormalised over the reported top models to their total chain
	// probability (0 without evidences): a check of the chains where the
	// Laplace approximation is good.
	LogEvidence  pipeline.Float `json:"log_evidence"`
	Renormalised float64        `json:"renormalised"`
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
	Names []string            `json:"names"`
	PIP   []pipeline.Estimate `json:"pip"`
	// Size is the posterior expected model size (number of terms).
	Size pipeline.Estimate `json:"size"`
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
	// Chains lists the chains run, Steps the kept steps over all of them.
	Chains         []int   `json:"chains"`
	Steps          int     `json:"steps"`
	StepsPerChain  int     `json:"steps_per_chain"`
	Warmup         int     `json:"warmup"`
	Seed           uint64  `json:"seed"`
	Proposal       string  `json:"proposal"`
	Informed       bool    `json:"informed,omitempty"`
	Seconds        float64 `json:"seconds"`
	LaplaceWarning string  `json:"laplace_warning,omitempty"`

	runs []*selChain
}

func newSelectResult(sp *ppl.SelectionSpace, s *Settings, chains []int, runs []*selChain) *Result {
	r := &Result{Names: append([]string(nil), sp.Names()...), Chains: chains, StepsPerChain: s.Steps, Warmup: s.Warmup,
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
	r.PIP = make([]pipeline.Estimate, P)
	for j := range P {
		for ci, c := range done {
			for t, id := range c.ids {
				x[ci][t] = b2f(c.models[id].Has(j))
			}
		}
		r.PIP[j] = pipeline.EstimateMean(x)
	}
	for ci, c := range done {
		for t, id := range c.ids {
			x[ci][t] = float64(c.models[id].Count())
		}
	}
	r.Size = pipeline.EstimateMean(x)
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
		m := Model{Terms: a.terms, Indices: a.terms.Indices(), Visits: a.visits, Estimate: pipeline.EstimateMean(x), LogEvidence: pipeline.Float(math.NaN())}
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

// String returns the table WriteTable writes.
func (r *Result) String() string {
	var b strings.Builder
	r.WriteTable(&b)
	return b.String()
}

// WriteTable writes the result as text: the run, the inclusion
// probabilities sorted from the largest, the expected model size and the
// top models.
func (r *Result) WriteTable(w io.Writer) error {
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
		if !e.Mixed {
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
		mcse := fmt.Sprintf("%7.4f", m.Estimate.MCSE)
		if !m.Estimate.Mixed {
			mcse = "      —"
		}
		fmt.Fprintf(&b, "%4d  %7.4f  %s  %9s  %4d  %s\n", i+1, m.Estimate.P, mcse, lap, len(m.Indices), label)
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
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.3f", v)
}

// WriteJSON writes the result as indented JSON; its size grows with the
// number of terms and reported models, not with the space.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// RunningPIP returns term j's inclusion probability after each kept step
// of every chain pooled step by step (the mean over chains of the running
// means), for a running-estimate figure.
func (r *Result) RunningPIP(j int) []float64 {
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
func (r *Result) WriteRunningFigure(path string, terms ...int) error {
	if len(r.runs) == 0 {
		return errors.New("selection: no chains to draw")
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
			return fmt.Errorf("selection: term %d out of range [0, %d)", j, len(r.Names))
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

// ReadResult reads a result written by WriteJSON (without the
// chains: WriteRunningFigure needs the run itself).
func ReadResult(rd io.Reader) (*Result, error) {
	var r Result
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("selection: reading a selection result: %w", err)
	}
	for i := range r.Top {
		t, err := ppl.NewTerms(len(r.Names), r.Top[i].Indices...)
		if err != nil {
			return nil, fmt.Errorf("selection: reading a selection result: top model %d: %w", i, err)
		}
		r.Top[i].Terms = t
	}
	return &r, nil
}

// Merge combines the results of shards of one run (the same space
// and settings, disjoint chains): each estimate is the step-weighted mean
// of the parts' and its MCSE the root of the weighted squared MCSEs (the
// chains are independent); R̂ is the largest of the parts' (the chains of
// different shards are not compared). Top models merge the parts' top
// lists, so a model outside every part's list is missing.
func Merge(parts ...*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("selection: Merge: no results")
	}
	first := parts[0]
	out := &Result{Names: first.Names, StepsPerChain: first.StepsPerChain, Warmup: first.Warmup, Seed: first.Seed,
		Proposal: first.Proposal, Informed: first.Informed, PIP: make([]pipeline.Estimate, len(first.Names))}
	seen := map[int]bool{}
	for i, r := range parts {
		if r == nil || len(r.Names) != len(first.Names) || r.Seed != first.Seed || r.Proposal != first.Proposal || r.StepsPerChain != first.StepsPerChain {
			return nil, fmt.Errorf("selection: Merge: part %d is not a shard of the same run as part 0", i)
		}
		for _, c := range r.Chains {
			if seen[c] {
				return nil, fmt.Errorf("selection: Merge: chain %d is in two parts", c)
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
	merge := func(get func(*Result) *pipeline.Estimate) pipeline.Estimate {
		var e pipeline.Estimate
		var v float64
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
			if x.Mixed || x.P != firstP {
				e.Mixed = true
			}
		}
		e.MCSE = math.Sqrt(v)
		return e
	}
	for j := range out.PIP {
		out.PIP[j] = merge(func(r *Result) *pipeline.Estimate { return &r.PIP[j] })
	}
	out.Size = merge(func(r *Result) *pipeline.Estimate { return &r.Size })
	for m := range first.Moves {
		st := MoveStat{Move: first.Moves[m].Move}
		for _, r := range parts {
			if m < len(r.Moves) {
				st.Proposed += r.Moves[m].Proposed
				st.Accepted += r.Moves[m].Accepted
			}
		}
		out.Moves = append(out.Moves, st)
	}
	type agg struct {
		m      Model
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
				a.m.Estimate.P, a.m.Estimate.MCSE, a.m.Visits = 0, 0, 0
				models[k] = a
				keys = append(keys, k)
			}
			a.visits += m.Visits
			a.m.Estimate.P += w * m.Estimate.P
			a.v += w * w * m.Estimate.MCSE * m.Estimate.MCSE
		}
	}
	sort.SliceStable(keys, func(a, b int) bool { return models[keys[a]].visits > models[keys[b]].visits })
	for _, k := range keys[:min(len(keys), max(len(first.Top), 1))] {
		a := models[k]
		a.m.Visits, a.m.Estimate.MCSE, a.m.Renormalised = a.visits, math.Sqrt(a.v), 0
		out.Top = append(out.Top, a.m)
	}
	out.Visited = len(models)
	out.setFlagged(out.Flagged)
	return out, nil
}
