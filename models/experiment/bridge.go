package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/kernels"
)

// RecordsFunc returns the jump records of bridge replicate rep: typically
// one proposal from each draw of a fresh evaluation set
// (kernels.EvaluationJumps), all randomness taken from rng.
type RecordsFunc func(ctx context.Context, rep int, rng *rand.Rand) ([]kernels.JumpRecord, error)

// BridgeReplicates computes reps Bartolucci bridge estimates in parallel,
// replicate rep drawing from Stream(seed, stage, rep). jump is the
// model-jump matrix the proposals used and prior the prior model
// probabilities inside the target (nil: uniform). A replicate whose records
// leave the estimate undefined (kernels.ErrNoJumps) keeps its NaN entries
// rather than failing the run; any other error is returned.
func BridgeReplicates(ctx context.Context, seed uint64, stage string, reps int, jump [][]float64, prior []float64, records RecordsFunc) ([]kernels.BridgeEstimate, error) {
	if reps < 1 {
		return nil, fmt.Errorf("experiment: %d bridge replicates, need at least 1", reps)
	}
	all := make([]int, reps)
	for i := range all {
		all[i] = i
	}
	return BridgeReplicatesOf(ctx, seed, stage, all, jump, prior, records)
}

// BridgeReplicatesOf is BridgeReplicates for the replicates numbered reps
// (0-based) only, each computed exactly as in a run of all of them: the
// part of a run split over processes. Estimate i of the result is
// replicate reps[i].
func BridgeReplicatesOf(ctx context.Context, seed uint64, stage string, reps []int, jump [][]float64, prior []float64, records RecordsFunc) ([]kernels.BridgeEstimate, error) {
	if len(reps) < 1 {
		return nil, errors.New("experiment: no bridge replicates to run")
	}
	if records == nil {
		return nil, errors.New("experiment: nil records function")
	}
	for _, rep := range reps {
		if rep < 0 {
			return nil, fmt.Errorf("experiment: bridge replicate %d", rep)
		}
	}
	out := make([]kernels.BridgeEstimate, len(reps))
	err := Parallel(ctx, len(reps), func(ctx context.Context, i int) error {
		rep := reps[i]
		recs, err := records(ctx, rep, Stream(seed, stage, rep))
		if err != nil {
			return fmt.Errorf("bridge replicate %d: %w", rep, err)
		}
		est, err := kernels.BartolucciBridge(recs, jump, prior)
		if err != nil && !errors.Is(err, kernels.ErrNoJumps) {
			return fmt.Errorf("bridge replicate %d: %w", rep, err)
		}
		out[i] = est
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BridgeSummary is a set of repeated bridge estimates in a Result: Raw is
// the paper's π̂ (not renormalised, as in the published code), Normalized
// the same divided by its sum.
type BridgeSummary struct {
	// Replicates is the number of estimates; Failed counts those left
	// undefined for want of jumps in some direction.
	Replicates int `json:"replicates"`
	Failed     int `json:"failed"`
	// EvalDraws is the evaluation-set size per model and replicate.
	EvalDraws int `json:"eval_draws,omitempty"`
	// Mean, standard error of the mean and standard deviation across
	// replicates, by model label.
	Raw               map[string]Float   `json:"raw"`
	Normalized        map[string]Float   `json:"normalized"`
	Stderr            map[string]Float   `json:"stderr"`
	SD                map[string]Float   `json:"sd"`
	MeanAcceptance    Float              `json:"mean_acceptance"`
	RawReplicates     []map[string]Float `json:"raw_replicates"`
	NormReplicates    []map[string]Float `json:"normalized_replicates"`
	normalizedByModel [][]float64
}

// SucceededGroups returns the estimates perGroup[g] of the evaluation
// groups with ok[g] (trj.Bridge's PerGroup and PerGroupOK).
func SucceededGroups(perGroup []kernels.BridgeEstimate, ok []bool) []kernels.BridgeEstimate {
	var out []kernels.BridgeEstimate
	for g, succeeded := range ok {
		if succeeded {
			out = append(out, perGroup[g])
		}
	}
	return out
}

// SummarizeBridge summarises repeated estimates; labels[k] names model k.
// The standard errors and standard deviations are those of Normalized.
func SummarizeBridge(ests []kernels.BridgeEstimate, labels []string) *BridgeSummary {
	nm := len(labels)
	s := &BridgeSummary{
		Replicates: len(ests),
		Raw:        map[string]Float{}, Normalized: map[string]Float{},
		Stderr: map[string]Float{}, SD: map[string]Float{},
		normalizedByModel: make([][]float64, nm),
	}
	raw := make([][]float64, nm)
	accSum, accN := 0.0, 0
	for _, e := range ests {
		rr, nr := map[string]Float{}, map[string]Float{}
		failed := len(e.Raw) != nm
		for k, l := range labels {
			r, n := math.NaN(), math.NaN()
			if !failed {
				r, n = e.Raw[k], e.Normalized[k]
			}
			if math.IsNaN(r) {
				failed = true
			}
			rr[l], nr[l] = Float(r), Float(n)
			raw[k] = append(raw[k], r)
			s.normalizedByModel[k] = append(s.normalizedByModel[k], n)
		}
		if failed {
			s.Failed++
		}
		s.RawReplicates = append(s.RawReplicates, rr)
		s.NormReplicates = append(s.NormReplicates, nr)
		for a := range e.Count {
			for b, c := range e.Count[a] {
				if a != b && c > 0 {
					accSum += e.MeanAccept[a][b] * float64(c)
					accN += c
				}
			}
		}
	}
	for k, l := range labels {
		m, _ := MeanStderr(raw[k])
		s.Raw[l] = Float(m)
		m, se := MeanStderr(s.normalizedByModel[k])
		s.Normalized[l], s.Stderr[l] = Float(m), Float(se)
		s.SD[l] = Float(finiteSD(s.normalizedByModel[k]))
	}
	s.MeanAcceptance = Float(math.NaN())
	if accN > 0 {
		s.MeanAcceptance = Float(accSum / float64(accN))
	}
	return s
}

// Values returns the normalised estimates of model k's probability, one per
// replicate (NaN for failed ones), e.g. for a violin plot.
func (s *BridgeSummary) Values(k int) []float64 {
	if k < 0 || k >= len(s.normalizedByModel) {
		return nil
	}
	return append([]float64(nil), s.normalizedByModel[k]...)
}

// finiteSD is the sample standard deviation of the finite entries of x (NaN
// with fewer than two).
func finiteSD(x []float64) float64 {
	var v []float64
	for _, a := range x {
		if !math.IsNaN(a) && !math.IsInf(a, 0) {
			v = append(v, a)
		}
	}
	if len(v) < 2 {
		return math.NaN()
	}
	return stat.StdDev(v, nil)
}
