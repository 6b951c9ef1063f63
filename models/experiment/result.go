package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/trjgo/trj/pipeline"
)

// Proposal names used as keys of Result.Proposals.
const (
	ProposalExact     = "exact"
	ProposalAffine    = "affine"
	ProposalRQMA      = "rqma"
	ProposalCRQMA     = "crqma"
	ProposalLopesWest = "lopes-west"
	ProposalIndepAux  = "indep-aux"
)

// Float is a float64 written to JSON as a number, or as the string "NaN",
// "+Inf" or "-Inf" when it is not finite (encoding/json refuses those as
// numbers): trj's one convention (pipeline.Float). It reads null, which
// files written before held for such values, as NaN.
type Float = pipeline.Float

// Result is the outcome of one experiment, as `trj run -json` writes it.
type Result struct {
	// Experiment names the experiment ("sas", "factor", "robustvs").
	Experiment string `json:"experiment"`
	// Seed is the seed every random stream was derived from.
	Seed uint64 `json:"seed"`
	// Models lists the model labels in model order.
	Models []string `json:"models"`
	// Truth holds the exact model probabilities by label, when known.
	Truth map[string]Float `json:"truth,omitempty"`
	// Settings records the sizes and options the run used.
	Settings map[string]any `json:"settings,omitempty"`
	// Seconds holds the wall times of the stages shared by every proposal
	// type (drawing pilot samples, for instance).
	Seconds map[string]Float `json:"seconds,omitempty"`
	// Proposals maps a proposal type to its estimates.
	Proposals map[string]*ProposalResult `json:"proposals"`
	// Order lists the proposal types in the order they were run, for
	// printing; it is not serialised (JSON objects are unordered).
	Order []string `json:"-"`
}

// ProposalResult is the estimate of one proposal type.
type ProposalResult struct {
	// ModelProbabilities maps a model label to its estimated posterior
	// probability.
	ModelProbabilities map[string]Float `json:"model_probabilities"`
	// Stderr maps a model label to the standard error of its estimate
	// across replicates; NaN ("NaN" in JSON, "n/a" in the table) where it
	// cannot be computed, with StderrNote saying why.
	Stderr map[string]Float `json:"stderr"`
	// StderrNote says why a standard error in Stderr is missing; "" when
	// every one was computed.
	StderrNote string `json:"stderr_note,omitempty"`
	// AcceptanceRate is the fraction of proposed between-model jumps that
	// were accepted (mean acceptance probability for bridge-only runs).
	AcceptanceRate Float `json:"acceptance_rate"`
	// Seconds maps a stage ("train", "chains", "bridge") to its wall time.
	Seconds map[string]Float `json:"seconds"`
	// Estimator says where ModelProbabilities comes from: "chains" (visit
	// frequencies averaged over replicate chains) or "bridge".
	Estimator string `json:"estimator,omitempty"`
	// Chains summarises each replicate chain.
	Chains []ChainSummary `json:"chains,omitempty"`
	// Bridge holds the repeated Bartolucci bridge estimates.
	Bridge *BridgeSummary `json:"bridge,omitempty"`
}

// NewResult returns an empty Result for the named experiment.
func NewResult(name string, seed uint64, models []string) *Result {
	return &Result{
		Experiment: name,
		Seed:       seed,
		Models:     append([]string(nil), models...),
		Settings:   map[string]any{},
		Seconds:    map[string]Float{},
		Proposals:  map[string]*ProposalResult{},
	}
}

// Add records p under proposal name, keeping the order of addition.
func (r *Result) Add(name string, p *ProposalResult) {
	if _, ok := r.Proposals[name]; !ok {
		r.Order = append(r.Order, name)
	}
	r.Proposals[name] = p
}

// order returns the proposal names to print: Order, then any others sorted.
func (r *Result) order() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range r.Order {
		if _, ok := r.Proposals[n]; ok && !seen[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	var rest []string
	for n := range r.Proposals {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// WriteJSON writes r, indented, to w.
func (r *Result) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("experiment: encoding result: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// WriteJSONFile writes r to the named file.
func (r *Result) WriteJSONFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = r.WriteJSON(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteTable prints the model probabilities by proposal type with their
// standard errors, the acceptance rates and the stage wall times, with a
// first row for the exact truth when it is known.
func (r *Result) WriteTable(w io.Writer) error {
	if names := r.order(); len(names) > 0 {
		if c := r.Proposals[names[0]].Chains; len(c) > 0 {
			if _, err := fmt.Fprintf(w, "model probabilities: mean ± standard error over %d chains of %d steps\n", len(c), c[0].Steps); err != nil {
				return err
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"proposal"}
	for _, m := range r.Models {
		head = append(head, "π("+m+")")
	}
	stages := r.stageNames()
	head = append(head, "accept")
	for _, s := range stages {
		head = append(head, s+" s")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	if len(r.Truth) > 0 {
		row := []string{"truth"}
		for _, m := range r.Models {
			row = append(row, formatFloat(r.Truth[m], "%.4f"))
		}
		for range len(stages) + 1 {
			row = append(row, "")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	for _, name := range r.order() {
		p := r.Proposals[name]
		row := []string{name}
		for _, m := range r.Models {
			v, ok := p.ModelProbabilities[m]
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, formatFloat(v, "%.4f")+" ± "+formatSE(p.Stderr[m]))
		}
		row = append(row, formatFloat(p.AcceptanceRate, "%.3f"))
		for _, s := range stages {
			if v, ok := p.Seconds[s]; ok {
				row = append(row, formatFloat(v, "%.2f"))
			} else {
				row = append(row, "-")
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writeStderrNotes(w); err != nil {
		return err
	}
	if err := r.writeBridgeTable(w); err != nil {
		return err
	}
	if len(r.Seconds) > 0 {
		var keys []string
		for k := range r.Seconds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.2f s", k, float64(r.Seconds[k])))
		}
		if _, err := fmt.Fprintf(w, "shared stages: %s\n", strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// writeBridgeTable prints the bridge estimates of the proposal types that
// have them: the mean normalised estimate ± the standard deviation across
// replicates, the number of failed replicates and the mean acceptance
// probability of the evaluation proposals.
func (r *Result) writeBridgeTable(w io.Writer) error {
	var names []string
	for _, name := range r.order() {
		if r.Proposals[name].Bridge != nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	b0 := r.Proposals[names[0]].Bridge
	if _, err := fmt.Fprintf(w, "\nbridge estimates: mean ± sd over %d replicates of %d evaluation draws per model\n", b0.Replicates, b0.EvalDraws); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"proposal"}
	for _, m := range r.Models {
		head = append(head, "π("+m+")")
	}
	head = append(head, "failed", "mean α")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, name := range names {
		b := r.Proposals[name].Bridge
		row := []string{name}
		for _, m := range r.Models {
			row = append(row, formatFloat(b.Normalized[m], "%.4f")+" ± "+formatFloat(b.SD[m], "%.4f"))
		}
		row = append(row, fmt.Sprint(b.Failed), formatFloat(b.MeanAcceptance, "%.3f"))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// stageNames lists the per-proposal stages in a stable order: the usual
// ones first, then any others sorted.
func (r *Result) stageNames() []string {
	all := map[string]bool{}
	for _, p := range r.Proposals {
		for s := range p.Seconds {
			all[s] = true
		}
	}
	var out []string
	for _, s := range []string{StageTrain, StageChains, StageBridge} {
		if all[s] {
			out = append(out, s)
			delete(all, s)
		}
	}
	var rest []string
	for s := range all {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Stage names used in ProposalResult.Seconds.
const (
	StageTrain  = "train"
	StageChains = "chains"
	StageBridge = "bridge"
)

// formatSE formats a standard error: "n/a" where none could be computed
// (NaN), never "NaN".
func formatSE(v Float) string {
	if x := float64(v); math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", float64(v))
}

// writeStderrNotes says, under the table, why each "n/a" standard error
// is missing.
func (r *Result) writeStderrNotes(w io.Writer) error {
	for _, name := range r.order() {
		p := r.Proposals[name]
		missing := false
		for _, m := range r.Models {
			if _, ok := p.ModelProbabilities[m]; ok && formatSE(p.Stderr[m]) == "n/a" {
				missing = true
			}
		}
		if !missing {
			continue
		}
		note := p.StderrNote
		if note == "" {
			note = "no standard error could be computed from these replicates"
		}
		if _, err := fmt.Fprintf(w, "  n/a (%s): %s\n", name, note); err != nil {
			return err
		}
	}
	return nil
}

// SetStageSeconds records the seconds of one of trj.Run's stages in
// p.Seconds: "transport" as StageTrain, "bridge" as StageBridge, "chains"
// as StageChains. It reports false, recording nothing, for other stages.
func (p *ProposalResult) SetStageSeconds(stage string, seconds float64) bool {
	key, ok := map[string]string{"transport": StageTrain, "bridge": StageBridge, "chains": StageChains}[stage]
	if ok {
		p.Seconds[key] = Float(seconds)
	}
	return ok
}

func formatFloat(v Float, f string) string {
	x := float64(v)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "NaN"
	}
	return fmt.Sprintf(f, x)
}
