package selection

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// Defaults of Settings.
const (
	DefaultChains = 4
	DefaultWarmup = 1000
	DefaultSteps  = 40000
	DefaultTop    = 20
)

// Settings configures Run. The zero value (or nil) gives the
// defaults.
type Settings struct {
	// Seed seeds every random stream (one per chain).
	Seed uint64
	// Chains is the number of chains (default 4, at most 65536), Warmup
	// the steps each discards first (default 1000; negative: none, the
	// rule of trj.ChainSettings.Warmup) and Steps the kept
	// steps of each (default 40000); Run refuses a run whose kept steps
	// cannot fit in memory (see Validate).
	Chains, Warmup, Steps int
	// Shard, when non-nil, runs only the chains listed (indices in
	// [0, Chains)), for a run split over processes.
	Shard []int
	// Proposal is the family of the jumps' transports and of the
	// within-model proposals (nil: ModelPosterior on a space that gives
	// its models' posteriors, such as a fixed-g g-prior regression's; else
	// FullConditional, or Laplace when Informed on a space without exact
	// evidences, whose weights need every model's evidence).
	Proposal Proposal
	// Informed chooses the term to add or drop by locally balanced weights
	// from the models' Laplace evidences (see kernels.SelectionSettings).
	Informed bool
	// Kernel tunes the moves (nil: kernels' defaults); its Informed is
	// overridden by Informed.
	Kernel *kernels.SelectionSettings
	// Start is the model the chains start in (default: no terms).
	Start *ppl.Terms
	// Top is the number of most visited models reported (default 20, at
	// most 65536).
	Top int
	// DrawsDir, when set, receives one CmdStan CSV file per chain
	// (select-<chain>.csv) with the kept steps: lp__, accept_stat__,
	// size__, chain_model__ (the chain's own number for the step's model, defined by
	// a comment line "# model N: terms" before its first row), then the
	// always-in and shared unconstrained coordinates. A row's size does
	// not grow with the number of terms; the coefficients are summarised
	// in Result.Coefficients.
	DrawsDir string
	// CredibleLevel is the coverage of the credible sets (default 0.95)
	// and Purity the smallest absolute correlation of a set's terms with
	// its lead (default 0.5); see CredibleSet.
	CredibleLevel, Purity float64
	// Progress, when set, is called about every 1% of a chain's steps
	// (from the chains' goroutines, one call at a time).
	Progress func(pipeline.Progress)

	// record, when set, receives every kept step's model and point (from
	// the chain's goroutine): a first pass's training draws.
	record func(chain int, active []int, theta []float64)
}

func (s *Settings) withDefaults() Settings {
	var o Settings
	if s != nil {
		o = *s
	}
	runs.OrDefault(&o.Chains, DefaultChains)
	runs.OrDefault(&o.Warmup, DefaultWarmup)
	o.Warmup = max(o.Warmup, 0)
	runs.OrDefault(&o.Steps, DefaultSteps)
	runs.OrDefault(&o.Top, DefaultTop)
	if o.CredibleLevel == 0 {
		o.CredibleLevel = DefaultCredibleLevel
	}
	if o.Purity == 0 {
		o.Purity = DefaultPurity
	}
	if o.Proposal == nil {
		o.Proposal = FullConditional{}
		if o.Informed {
			o.Proposal = Laplace{}
		}
	}
	return o
}

// names names Settings' fields in errors.
var names = runs.Names{Pkg: "selection", Path: "Settings."}

// maxTop bounds Settings.Top: the top models are each fitted (for
// proposals without a fit per model) and printed, and their list is
// allocated at Top's size.
const maxTop = 1 << 16

// Validate checks settings (nil: the defaults) as Run does before it
// reads its space: the chains' counts and shard, Top, and whether the
// chains' kept steps fit in memory (counting the models of a space of one
// term: Run counts again with its space's). Its errors name the setting
// (a command may rename the settings by its flags).
func (s *Settings) Validate() error {
	d := s.withDefaults()
	return d.checkCounts(0)
}

// checkCounts checks the counts and the memory of a run over p candidate
// terms (0: not known).
func (s *Settings) checkCounts(p int) error {
	c := runs.Counts{Chains: s.Chains, Warmup: s.Warmup, Steps: s.Steps, MinSteps: 1, Shard: s.Shard}
	if err := c.Check(names); err != nil {
		return err
	}
	if s.Top < 1 || s.Top > maxTop {
		return names.Error("Top", nil, func(n runs.Names) string {
			return fmt.Sprintf("%s: need 1 to %d most visited models (each is fitted and printed)", n.Is("Top", s.Top), maxTop)
		})
	}
	if !(s.CredibleLevel > 0 && s.CredibleLevel < 1) {
		return names.Error("CredibleLevel", nil, func(n runs.Names) string {
			return fmt.Sprintf("%s: a credible set's coverage is a probability strictly between 0 and 1", n.Is("CredibleLevel", s.CredibleLevel))
		})
	}
	if !(s.Purity >= 0 && s.Purity <= 1) {
		return names.Error("Purity", nil, func(n runs.Names) string {
			return fmt.Sprintf("%s: a credible set's purity is an absolute correlation in [0, 1]", n.Is("Purity", s.Purity))
		})
	}
	return c.CheckMemory(names, keptMemory(s.Steps, p)...)
}

// stepBytes is the memory of a kept step: its model's int32 id, kept by
// the chain, then its value in the series the result's estimates are
// computed from (a float64) and in their estimator's working copies
// (pooled, sorted, rank-normalised, folded and centred: five float64 or
// int at their peak).
const stepBytes = 4 + 8 + 5*8

// keptMemory is what a chain of steps kept steps keeps over p candidate
// terms (0: not known, counted as 1): its steps (stepBytes each) and its
// list of the models it visited, at most one per step and 2^p in all, each
// a term set, its evidence, and its key and id in the chain's index. The
// draws' CSV rows are streamed, not kept.
func keptMemory(steps, p int) []runs.Kept {
	p = max(p, 1)
	words := uint64(p+63) / 64
	models := uint64(steps)
	if p < 62 {
		models = min(models, 1<<p)
	}
	// Term set: slice header, P and words; evidence; index key (string
	// header and bytes), id and a map entry's overhead.
	modelBytes := 24 + 8 + 8*words + 8 + 16 + 8*words + 4 + 32
	return []runs.Kept{
		{N: uint64(steps), Bytes: stepBytes, What: "kept steps"},
		{N: models, Bytes: modelBytes, What: "visited models"},
	}
}

func (s *Settings) validate(sp *ppl.SelectionSpace) error {
	if err := s.checkCounts(sp.P()); err != nil {
		return err
	}
	all := make([]int, sp.P())
	for i := range all {
		all[i] = i
	}
	empty, _ := ppl.NewTerms(sp.P()) // P ≥ 1: the space was checked
	full, _ := ppl.NewTerms(sp.P(), all...)
	check := []ppl.Terms{empty, full}
	if s.Start != nil {
		if err := sp.Check(*s.Start); err != nil {
			return fmt.Errorf("selection: start model: %w", err)
		}
		check = append(check, *s.Start)
	}
	for _, t := range check {
		if t.Count() == sp.P() && sp.P() > fingerprintFullP {
			// Whether the model of every term is in the support is a
			// factorisation of its P × P Gram matrix for a g-prior (at P
			// = 3,000, n = 5,000, more than the chains' CPU); what is
			// checked here is the model prior, which the support only
			// makes −Inf.
			if lp := sp.Prior().LogModelPrior(t); math.IsNaN(lp) || math.IsInf(lp, 1) {
				return fmt.Errorf("selection: the model prior gives model %s log p(γ) = %v: it must be a number ≤ 0 (−Inf excludes the model); fix the space's ModelPrior", modelName(sp, t), lp)
			}
			continue
		}
		if _, err := logModelPrior(sp, t); err != nil {
			return err
		}
	}
	return nil
}

// logModelPrior is log p(γ) of model t under sp's model prior, refused
// when NaN or +∞: a prior normalised over the models has log p(γ) ≤ 0
// (−∞ excludes a model).
func logModelPrior(sp *ppl.SelectionSpace, t ppl.Terms) (float64, error) {
	lp, err := sp.LogPrior(t)
	if err != nil {
		return lp, err
	}
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		return lp, fmt.Errorf("selection: the model prior gives model %s log p(γ) = %v: it must be a number ≤ 0 (−Inf excludes the model); fix the space's ModelPrior", modelName(sp, t), lp)
	}
	return lp, nil
}

// modelName names model t by its terms' names: "{x1, x4}".
func modelName(sp *ppl.SelectionSpace, t ppl.Terms) string {
	names := sp.Names()
	var b strings.Builder
	b.WriteByte('{')
	for j, i := range t.Indices() {
		if j > 0 {
			b.WriteString(", ")
		}
		if i < len(names) {
			b.WriteString(names[i])
		} else {
			b.WriteString(strconv.Itoa(i))
		}
	}
	b.WriteByte('}')
	return b.String()
}
