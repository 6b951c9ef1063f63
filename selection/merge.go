package selection

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/pipeline"
)

// Merge combines the results of the shards of one run (Settings.Shard)
// into the whole run's. The parts must share the run's fingerprint (on a
// mismatch the error names the setting that differs, or the data) and
// hold each of its chains exactly once; nil and malformed parts are
// refused with an error naming them. A partial part (an interrupted
// shard) is merged like a whole one, and makes the merged result partial
// (the interrupt rule): Stopped then names the parts that stopped and why.
//
// Each estimate is the step-weighted mean of the parts' and its MCSE the
// larger of the root of the weighted squared MCSEs (the chains are
// independent) and the spread of the parts' means (their standard
// deviation over √parts), as EstimateMean counts the spread of the
// chains' means in a whole run; R̂ is the largest of the parts' (the
// chains of different shards are not compared), or +Inf when the parts'
// chains sit at different constant values, as in a whole run. Top models
// merge the parts' top lists, so a model outside every part's list is
// missing.
func Merge(parts ...*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("selection: Merge: no results")
	}
	rp := make([]runs.Part, len(parts))
	for i, r := range parts {
		rp[i].Name = fmt.Sprintf("part %d", i+1)
		if err := checkPart(r, parts[0]); err != nil {
			return nil, fmt.Errorf("selection: Merge: %s %w", rp[i].Name, err)
		}
		rp[i].Fingerprint, rp[i].Settings, rp[i].Chains = r.Fingerprint, r.Settings, r.Chains
	}
	first := parts[0]
	if err := runs.CheckParts(rp, first.NumChains); err != nil {
		return nil, fmt.Errorf("selection: Merge: %w", err)
	}
	out := &Result{Names: first.Names, StepsPerChain: first.StepsPerChain, Warmup: first.Warmup, Seed: first.Seed,
		Proposal: first.Proposal, Informed: first.Informed, PIP: make([]pipeline.Estimate, len(first.Names)), PIPEstimator: first.PIPEstimator,
		NumChains: first.NumChains, Fingerprint: first.Fingerprint, Settings: first.Settings}
	for _, r := range parts {
		out.Steps += r.Steps
		out.Built += r.Built
		out.Flagged += r.Flagged
		out.Seconds = max(out.Seconds, r.Seconds)
		out.Within.Move = "within"
		out.Within.Proposed += r.Within.Proposed
		out.Within.Accepted += r.Within.Accepted
	}
	out.Chains, out.ChainSteps = mergedChains(parts)
	st := make([]runs.Status, len(parts))
	for i, r := range parts {
		st[i] = runs.Status{Name: fmt.Sprintf("part %d", i+1), Complete: r.Complete, Stopped: r.Stopped}
	}
	out.Complete, out.Stopped = runs.MergeStatus(st)
	N := float64(out.Steps)
	if N == 0 {
		return out, nil
	}
	merge := func(get func(*Result) *pipeline.Estimate) pipeline.Estimate {
		e := pipeline.Estimate{Steps: out.Steps}
		var v float64
		means := make([]float64, len(parts))
		constant := true
		for i, r := range parts {
			x := get(r)
			w := float64(r.Steps) / N
			e.P += w * x.P
			v += w * w * x.MCSE * x.MCSE
			e.Rhat = max(e.Rhat, x.Rhat)
			e.ESS += x.ESS
			means[i] = x.P
			constant = constant && !x.Mixed
			if x.Mixed || x.P != means[0] {
				e.Mixed = true
			}
		}
		e.MCSE = math.Sqrt(v)
		if len(parts) > 1 {
			e.MCSE = max(e.MCSE, stat.StdDev(means, nil)/math.Sqrt(float64(len(parts))))
		}
		if constant && e.Mixed {
			e.Rhat = math.Inf(1) // the parts sit at different constant values
		}
		return e
	}
	for j := range out.PIP {
		out.PIP[j] = merge(func(r *Result) *pipeline.Estimate { return &r.PIP[j] })
	}
	if len(first.PIPVisits) > 0 {
		out.PIPVisits = make([]pipeline.Estimate, len(first.Names))
		for j := range out.PIPVisits {
			out.PIPVisits[j] = merge(func(r *Result) *pipeline.Estimate { return &r.PIPVisits[j] })
		}
	}
	out.Size = merge(func(r *Result) *pipeline.Estimate { return &r.Size })
	mergeAnswer(out, parts)
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
		a.m.Estimate.Steps = out.Steps
		out.Top = append(out.Top, a.m)
	}
	out.Visited = len(models)
	out.setFlagged(out.Flagged)
	return out, nil
}

// mergedChains returns the parts' chains in order with each one's kept
// steps (a part read from a file without them kept Steps over its chains
// in equal shares).
func mergedChains(parts []*Result) ([]int, []int) {
	type chain struct{ c, steps int }
	var all []chain
	for _, r := range parts {
		for i, c := range r.Chains {
			n := r.Steps / len(r.Chains)
			if len(r.ChainSteps) == len(r.Chains) {
				n = r.ChainSteps[i]
			}
			all = append(all, chain{c, n})
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].c < all[b].c })
	chains, steps := make([]int, len(all)), make([]int, len(all))
	for i, c := range all {
		chains[i], steps[i] = c.c, c.steps
	}
	return chains, steps
}

// checkPart checks part r of a merge whose first part is first: not nil,
// with a PIP per term and top models over its terms.
func checkPart(r, first *Result) error {
	switch {
	case r == nil:
		return errors.New("is nil")
	case len(r.PIP) != len(r.Names):
		return fmt.Errorf("has %d PIPs for %d terms: not a result of Run", len(r.PIP), len(r.Names))
	case len(r.Names) != len(first.Names):
		return fmt.Errorf("has %d terms, part 1 %d: a different run", len(r.Names), len(first.Names))
	case r.PIPEstimator != first.PIPEstimator:
		// A result written before PIPEstimator has visit frequencies in
		// PIP where a newer one of the same run has Rao-Blackwellised
		// ones: averaging them would mix two estimators.
		return fmt.Errorf("has %s PIPs, part 1 %s: written by different versions of trj; rerun the older part", estimatorName(r.PIPEstimator), estimatorName(first.PIPEstimator))
	case len(r.PIPVisits) != len(first.PIPVisits):
		return fmt.Errorf("has %d visit-frequency PIPs, part 1 %d: not a result of Run", len(r.PIPVisits), len(first.PIPVisits))
	}
	for i, n := range r.Names {
		if n != first.Names[i] {
			return fmt.Errorf("names term %d %q, part 1 %q: a different run", i+1, n, first.Names[i])
		}
	}
	for i, m := range r.Top {
		for _, j := range m.Indices {
			if j < 0 || j >= len(r.Names) {
				return fmt.Errorf("top model %d has term index %d, outside 0..%d: not a result of Run", i+1, j, len(r.Names)-1)
			}
		}
	}
	return nil
}

// estimatorName names a PIPEstimator in an error; results written before
// the field have none.
func estimatorName(e string) string {
	if e == "" {
		return "unlabelled (older)"
	}
	return e
}
