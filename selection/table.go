package selection

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/trjgo/trj/ppl"
)

// String returns the table WriteTable writes.
func (r *Result) String() string {
	var b strings.Builder
	r.WriteTable(&b)
	return b.String()
}

// maxTableTerms bounds the terms the table lists (largest PIPs first),
// so that it stays readable at thousands of terms.
const maxTableTerms = 50

// writeCredibleSets writes the credible sets, if any.
func (r *Result) writeCredibleSets(b *strings.Builder) {
	if len(r.CredibleSets) == 0 {
		return
	}
	fmt.Fprintf(b, "\nCredible sets (the fewest near-copies of a lead that the model holds one of with the stated probability):\n%4s  %-10s  %8s  %7s  %6s  %7s  %s\n", "set", "lead", "coverage", "MCSE", "purity", "effects", "terms")
	for i, c := range r.CredibleSets {
		terms := strings.Join(c.Terms, ",")
		if len(c.Terms) > 12 {
			terms = strings.Join(c.Terms[:12], ",") + fmt.Sprintf(",… (%d terms)", len(c.Terms))
		}
		fmt.Fprintf(b, "%4d  %-10s  %8.4f  %7.4f  %6.2f  %7.3f  %s\n", i+1, c.Lead, c.Coverage.P, c.Coverage.MCSE, c.Purity, c.Effects, terms)
	}
}

// WriteTable writes the result as text: the run, the inclusion
// probabilities sorted from the largest, the credible sets, the
// coefficients and quantities, the expected model size and the top
// models.
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	kernel := r.Proposal + " transports" + map[bool]string{true: ", informed", false: ""}[r.Informed]
	if r.Proposal == (Exact{}).String() {
		// The collapsed kernel moves on the models alone: no transport is
		// built.
		kernel = "exact kernel (chains on the models; parameters drawn from each model's closed-form posterior)"
	}
	fmt.Fprintf(&b, "Variable selection over %d terms: %d chain(s) × %d kept steps (%d warm-up), %s, %.1f s\n",
		len(r.Names), len(r.Chains), r.StepsPerChain, r.Warmup, kernel, r.Seconds)
	if !r.Complete {
		b.WriteString(r.partialLine())
	}
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
	visits := len(r.PIPVisits) == len(r.Names)
	head := "PIP"
	if visits {
		head = "PIP (RB)"
	}
	fmt.Fprintf(&b, "\nPosterior inclusion probabilities (largest first):\n%-*s  %8s  %7s  %6s  %7s", width, "term", head, "MCSE", "R̂", "ESS")
	if visits {
		// PIP is Rao-Blackwellised (the conditional inclusion
		// probabilities averaged over the steps, from the exact
		// evidences); the visit frequencies are its check.
		fmt.Fprintf(&b, "  %7s", "visits")
	}
	b.WriteByte('\n')
	rest := 0
	if len(order) > maxTableTerms {
		rest, order = len(order)-maxTableTerms, order[:maxTableTerms]
	}
	for _, j := range order {
		e := r.PIP[j]
		tail := ""
		if visits {
			tail = fmt.Sprintf("  %7.4f", r.PIPVisits[j].P)
		}
		if !e.Mixed {
			what := "never included"
			if e.P == 1 {
				what = "never dropped"
			}
			fmt.Fprintf(&b, "%-*s  %8.4f  (%s in %d kept steps: MCSE not estimable)%s\n", width, r.Names[j], e.P, what, r.Steps, tail)
			continue
		}
		fmt.Fprintf(&b, "%-*s  %8.4f  %7.4f  %6s  %7.0f%s\n", width, r.Names[j], e.P, e.MCSE, rhatString(e.Rhat), e.ESS, tail)
	}
	if rest > 0 {
		fmt.Fprintf(&b, "… and %d more terms of PIP ≤ %.4f (every term is in the JSON)\n", rest, r.PIP[order[len(order)-1]].P)
	}
	r.writeCredibleSets(&b)
	r.writeCoefficients(&b, order, width)
	r.writeQuantities(&b)
	fmt.Fprintf(&b, "\nExpected model size: %.3f ± %.3f (MCSE)\n", r.Size.P, r.Size.MCSE)
	// The renormalised column: from exact evidences where the space has
	// them (then the PIPs are Rao-Blackwellised too), else Laplace ones.
	byEvidence := "Laplace"
	if r.PIPEstimator == pipRaoBlackwellised {
		byEvidence = "exact"
	}
	fmt.Fprintf(&b, "\nTop %d of %d visited models (by visits):\n%4s  %7s  %7s  %9s  %4s  %s\n", len(r.Top), r.Visited, "rank", "P", "MCSE", byEvidence, "size", "terms")
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
	r.writeWarnings(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// partialLine says that r is partial, why, and what each chain kept.
func (r *Result) partialLine() string {
	why := r.Stopped
	if why == "" {
		why = "reason not recorded"
	}
	kept := make([]string, len(r.ChainSteps))
	for i, n := range r.ChainSteps {
		kept[i] = strconv.Itoa(n)
	}
	of := ""
	if len(kept) > 0 {
		of = fmt.Sprintf("; the chains kept %s of %d steps each, every finished step counted", strings.Join(kept, ", "), r.StepsPerChain)
	}
	return fmt.Sprintf("PARTIAL RESULT: the run was interrupted (%s)%s\n", why, of)
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

// ReadResult reads a result written by WriteJSON (without the
// chains: WriteRunningFigure needs the run itself). A partial result
// reads as it was written; a result written before results carried
// "complete" is complete when every chain kept StepsPerChain steps.
func ReadResult(rd io.Reader) (*Result, error) {
	var r Result
	var mark struct {
		Complete *bool `json:"complete"`
	}
	b, err := io.ReadAll(rd)
	if err == nil {
		if err = json.Unmarshal(b, &r); err == nil {
			err = json.Unmarshal(b, &mark)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("selection: reading a selection result: %w", err)
	}
	if mark.Complete == nil {
		r.Complete = r.Steps == len(r.Chains)*r.StepsPerChain
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
