package selection

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/trjgo/trj/internal/figures"
)

// maxFigureTerms bounds the terms WriteFigure draws, so that its height
// stays readable at any p.
const maxFigureTerms = 40

// WriteFigure draws the terms' posterior inclusion probabilities with an
// interval of ±2 MCSE (clipped to [0, 1]) on a fixed 0–1 axis, highest PIP
// at the top, to path (".png" or ".svg"): all of them up to 40 terms,
// else the 40 largest and a note of how many more, below which PIP. ref,
// when given, holds reference PIPs in term order (for instance exact ones
// from enumeration) drawn as crosses beside the estimates. A term the
// chains never left (not Mixed) is drawn without an interval: its MCSE
// cannot be estimated. It works on a result read back with ReadResult.
func (r *Result) WriteFigure(path string, ref ...float64) error {
	if len(r.PIP) == 0 {
		return fmt.Errorf("selection: no inclusion probabilities to draw")
	}
	if len(ref) != 0 && len(ref) != len(r.PIP) {
		return fmt.Errorf("selection: %d reference PIPs for %d terms", len(ref), len(r.PIP))
	}
	order := make([]int, len(r.PIP))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return r.PIP[order[a]].P > r.PIP[order[b]].P })
	label := "posterior inclusion probability"
	if len(order) > maxFigureTerms {
		rest := len(order) - maxFigureTerms
		label += fmt.Sprintf(" (%d more terms with PIP < %.3g not shown)", rest, r.PIP[order[maxFigureTerms-1]].P)
		order = order[:maxFigureTerms]
	}
	rows := make([]figures.Interval, len(order))
	for k, j := range order {
		e := r.PIP[j]
		rows[k] = figures.Interval{
			Name:  r.Names[j],
			Value: e.P,
			Low:   math.Max(0, e.P-2*e.MCSE),
			High:  math.Min(1, e.P+2*e.MCSE),
			Ref:   math.NaN(),
		}
		if len(ref) != 0 {
			rows[k].Ref = ref[j]
		}
	}
	title := fmt.Sprintf("Posterior inclusion probabilities ± 2 MCSE (%d kept steps)", r.Steps)
	return figures.Intervals(path, title, rows, figures.WithXLabel(label), figures.WithXRange(0, 1))
}

// RunningPIP returns term j's inclusion probability after each kept step
// of every chain pooled step by step (the mean over chains of the running
// means), for a running-estimate figure. Chains of an interrupted run may
// have different lengths: after step t, the steps of every chain up to t
// (or its end) are pooled, so the last value is VisitFrequencies()[j].P.
func (r *Result) RunningPIP(j int) []float64 {
	if j < 0 || j >= len(r.Names) || len(r.runs) == 0 {
		return nil
	}
	n := 0
	for _, c := range r.runs {
		n = max(n, len(c.ids))
	}
	out := make([]float64, n)
	var sum float64
	steps := 0
	for t := range n {
		for _, c := range r.runs {
			if t < len(c.ids) {
				sum += b2f(c.models[c.ids[t]].Has(j))
				steps++
			}
		}
		out[t] = sum / float64(steps)
	}
	return out
}

// WriteRunningFigure draws each chain's running inclusion probability of
// the given terms (default: the six whose PIP is nearest ½, the hardest to
// estimate), one panel per term on a 0–1 axis, one colour per chain (a
// chain that disagrees with the others shows in every panel), to path
// (".png" or ".svg"). It needs the chains of this run (a result read back
// from JSON has none).
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
		figures.WithOrder(names...), figures.WithYLabel("running PIP"), figures.WithXLabel("kept step"),
		figures.ByChain(), figures.WithYRange(0, 1))
	return err
}

// WriteManhattan draws every term's PIP (the Rao-Blackwellised one where
// the space has exact evidences) at its position in the terms' order, a
// Manhattan-style plot that stays readable at thousands of terms: the
// terms of each credible set in a colour of their own, each set's lead
// named. It writes the figure to path (".png" or ".svg").
func (r *Result) WriteManhattan(path string) error {
	if len(r.PIP) == 0 {
		return fmt.Errorf("selection: no inclusion probabilities to draw")
	}
	pip := make([]float64, len(r.PIP))
	which := "PIP"
	if r.PIPEstimator == pipRaoBlackwellised {
		which = "Rao-Blackwellised PIP"
	}
	for j, e := range r.PIP {
		pip[j] = math.Min(1, math.Max(0, e.P))
	}
	group := make([]int, len(pip))
	for j := range group {
		group[j] = -1
	}
	label := make([]string, len(pip))
	var groups []string
	for g, c := range r.CredibleSets {
		for _, j := range c.Indices {
			group[j] = g
		}
		if len(c.Indices) > 0 {
			label[c.Indices[0]] = c.Lead
		}
		terms := "terms"
		if len(c.Indices) == 1 {
			terms = "term"
		}
		groups = append(groups, fmt.Sprintf("set %d (%d %s, coverage %.2f)", g+1, len(c.Indices), terms, c.Coverage.P))
	}
	title := fmt.Sprintf("%s by position, %d terms (%d kept steps)", which, len(pip), r.Steps)
	return figures.Manhattan(path, title, pip, group, groups, label, figures.WithXLabel("term position"))
}
