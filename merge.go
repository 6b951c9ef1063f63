package trj

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
)

// Merge combines the results of shards of one run (Settings.Chains.Shard)
// into the result the whole run gives: the chains' estimates are computed
// again from every shard's chains; the stages before the chains, which
// every shard repeats identically, are taken from the first part. Parts
// from different runs (other models, data, seed or settings) or with
// overlapping chains are refused. Shards never extend their chains
// (ChainSettings.MaxSteps), so the merge equals the whole run when that run
// did not extend them either; set MaxSteps to Steps to make sure. A
// partial part (a shard interrupted during its chains) merges like a whole
// one, every finished step of its chains counted, and makes the merged
// result partial: Stopped names the parts that stopped and why (the
// interrupt rule of both workflows).
func Merge(parts ...*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("trj: nothing to merge")
	}
	rp := make([]runs.Part, len(parts))
	for i, p := range parts {
		rp[i].Name = fmt.Sprintf("part %d", i+1)
		switch {
		case p == nil:
			return nil, fmt.Errorf("trj: merge: part %d is nil", i+1)
		case p.Chains == nil && !p.Complete:
			return nil, fmt.Errorf("trj: merge: part %d stopped before its chains (%s): run that shard again", i+1, cmp.Or(p.Stopped, "stopped early"))
		case p.Chains == nil:
			return nil, fmt.Errorf("trj: merge: part %d has no chains", i+1)
		}
		if err := checkChains(p.Chains, len(parts[0].Labels)); err != nil {
			return nil, fmt.Errorf("trj: merge: part %d: %w", i+1, err)
		}
		rp[i].Fingerprint, rp[i].Settings = p.Fingerprint, p.Settings
		for _, c := range p.Chains.Chains {
			rp[i].Chains = append(rp[i].Chains, c.Chain)
		}
	}
	first := parts[0]
	if err := runs.CheckParts(rp, first.NumChains); err != nil {
		return nil, fmt.Errorf("trj: merge: %w", err)
	}
	all := &kernels.RJSampleResult{NumModels: first.Chains.NumModels}
	for _, p := range parts {
		all.Chains = append(all.Chains, p.Chains.Chains...)
	}
	slices.SortFunc(all.Chains, func(a, b kernels.RJChainResult) int { return a.Chain - b.Chain })
	out := *first
	out.Timings = slices.Clone(first.Timings)
	out.Jumps = nil
	out.setChains(all)
	st := make([]runs.Status, len(parts))
	for i, p := range parts {
		st[i] = runs.Status{Name: rp[i].Name, Complete: p.Complete, Stopped: p.Stopped}
	}
	out.Complete, out.Stopped = runs.MergeStatus(st)
	return &out, nil
}

// checkChains checks chains read back from a file: K models, jump counts
// K×K, models visited in range, chain numbers non-negative.
func checkChains(rj *kernels.RJSampleResult, K int) error {
	if rj.NumModels != K {
		return fmt.Errorf("its chains have %d models, the run %d", rj.NumModels, K)
	}
	for _, c := range rj.Chains {
		if c.Chain < 0 {
			return fmt.Errorf("chain number %d", c.Chain)
		}
		if len(c.Proposed) != K || len(c.Accepted) != K {
			return fmt.Errorf("chain %d has jump counts for %d and %d models, want %d", c.Chain+1, len(c.Proposed), len(c.Accepted), K)
		}
		for k := range K {
			if len(c.Proposed[k]) != K || len(c.Accepted[k]) != K {
				return fmt.Errorf("chain %d: jump counts from model %d have %d and %d entries, want %d", c.Chain+1, k, len(c.Proposed[k]), len(c.Accepted[k]), K)
			}
		}
		for i, m := range c.Models {
			if m < 0 || m >= K {
				return fmt.Errorf("chain %d: step %d is in model %d, outside 0..%d", c.Chain+1, i, m, K-1)
			}
		}
	}
	return nil
}
