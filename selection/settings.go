package selection

import (
	"errors"
	"fmt"

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
	// Chains is the number of chains (default 4), Warmup the steps each
	// discards first (default 1000) and Steps the kept steps of each
	// (default 40000).
	Chains, Warmup, Steps int
	// Shard, when non-nil, runs only the chains listed (indices in
	// [0, Chains)), for a run split over processes.
	Shard []int
	// Proposal is the family of the jumps' transports and of the
	// within-model proposals (nil: FullConditional, or Laplace
	// when Informed, whose weights need every model's evidence).
	Proposal Proposal
	// Informed chooses the term to add or drop by locally balanced weights
	// from the models' Laplace evidences (see kernels.SelectionSettings).
	Informed bool
	// Kernel tunes the moves (nil: kernels' defaults); its Informed is
	// overridden by Informed.
	Kernel *kernels.SelectionSettings
	// Start is the model the chains start in (default: no terms).
	Start *ppl.Terms
	// Top is the number of most visited models reported (default 20).
	Top int
	// DrawsDir, when set, receives one CmdStan CSV file per chain
	// (select-<chain>.csv) with the kept steps: lp__, accept_stat__,
	// size__, then an indicator column per term (gamma.<name>) and the
	// unconstrained parameters in the saturated layout (0 for an inactive
	// term).
	DrawsDir string
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
	runs.OrDefault(&o.Steps, DefaultSteps)
	runs.OrDefault(&o.Top, DefaultTop)
	if o.Proposal == nil {
		o.Proposal = FullConditional{}
		if o.Informed {
			o.Proposal = Laplace{}
		}
	}
	return o
}

func (s *Settings) validate(sp *ppl.SelectionSpace) error {
	if s.Chains < 1 || s.Steps < 1 || s.Warmup < 0 || s.Top < 1 {
		return fmt.Errorf("selection: Run needs Chains ≥ 1, Steps ≥ 1, Warmup ≥ 0, Top ≥ 1; got %d, %d, %d, %d", s.Chains, s.Steps, s.Warmup, s.Top)
	}
	seen := map[int]bool{}
	for _, c := range s.Shard {
		if c < 0 || c >= s.Chains || seen[c] {
			return fmt.Errorf("selection: shard lists chain %d of %d (or twice)", c, s.Chains)
		}
		seen[c] = true
	}
	if s.Shard != nil && len(s.Shard) == 0 {
		return errors.New("selection: empty shard")
	}
	if s.Start != nil {
		if err := sp.Check(*s.Start); err != nil {
			return fmt.Errorf("selection: start model: %w", err)
		}
	}
	return nil
}
