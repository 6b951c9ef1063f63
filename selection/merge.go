package selection

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/trjgo/trj/pipeline"
)

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
