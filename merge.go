package trj

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// fingerprint hashes what makes two runs the same computation: the models
// (labels, dimensions, prior and their log-densities at fixed points, which
// tell different data apart), and every setting except the shard and the
// output.
func fingerprint(space *ppl.Space, s *Settings) string {
	h := sha256.New()
	w := func(v ...any) { fmt.Fprintln(h, v...) }
	w("trj run v1", s.Seed, s.Pilot.Method, s.Pilot.Chains, s.Pilot.Warmup, s.Pilot.Draws, s.Pilot.Runs, s.Pilot.Given != nil)
	if s.Pilot.SMC != nil {
		smc := *s.Pilot.SMC
		if smc.Move == nil { // hashed as when moves were numbers
			smc.Move = kernels.SMCEigenRWM{}
		}
		w(smc)
	}
	w(fmt.Sprintf("%T", s.Proposals), s.Proposals.Name(), s.Bridge.Groups, s.Bridge.Proposals)
	w(s.Chains.Chains, s.Chains.Steps, s.Chains.Warmup, s.Chains.JumpFloor, s.Chains.Start != nil, s.Chains.Jump, s.Chains.Within, s.Chains.RWScale, s.Chains.FlowMoves, s.Chains.MaxSteps)
	rng := stream(0, "fingerprint", 0)
	for k := range space.NumModels() {
		lp, _ := space.LogPrior(k)
		w(space.ModelLabel(k), space.ModelDim(k), strconv.FormatFloat(lp, 'g', 12, 64))
		m, err := space.Model(k)
		if err != nil {
			continue
		}
		m = m.Clone()
		x := make([]float64, m.Dim())
		for range 3 {
			for i := range x {
				x[i] = 0.5 * rng.NormFloat64()
			}
			v, err := m.LogDensity(x)
			w(strconv.FormatFloat(v, 'g', 12, 64), err != nil)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Merge combines the results of shards of one run (Settings.Chains.Shard)
// into the result the whole run gives: the chains' estimates are computed
// again from every shard's chains; the stages before the chains, which
// every shard repeats identically, are taken from the first part. Parts
// from different runs (other models, data, seed or settings) or with
// overlapping chains are refused. Shards never extend their chains
// (ChainSettings.MaxSteps), so the merge equals the whole run when that run
// did not extend them either; set MaxSteps to Steps to make sure.
func Merge(parts ...*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("trj: nothing to merge")
	}
	first := parts[0]
	if first == nil || first.Chains == nil {
		return nil, errors.New("trj: merge: part 1 has no chains")
	}
	seen := map[int]int{}
	all := &kernels.RJSampleResult{NumModels: first.Chains.NumModels}
	for i, p := range parts {
		switch {
		case p == nil || p.Chains == nil:
			return nil, fmt.Errorf("trj: merge: part %d has no chains", i+1)
		case p.Fingerprint != first.Fingerprint:
			return nil, fmt.Errorf("trj: merge: part %d is from a different run (fingerprint %s, part 1 has %s): models, data, seed or settings differ", i+1, p.Fingerprint, first.Fingerprint)
		case !p.Complete:
			return nil, fmt.Errorf("trj: merge: part %d is incomplete", i+1)
		}
		for _, c := range p.Chains.Chains {
			if j, dup := seen[c.Chain]; dup {
				return nil, fmt.Errorf("trj: merge: chain %d is in parts %d and %d", c.Chain+1, j+1, i+1)
			}
			seen[c.Chain] = i
			all.Chains = append(all.Chains, c)
		}
	}
	if n := first.NumChains; n > 0 && len(all.Chains) != n {
		var missing []int
		for c := range n {
			if _, ok := seen[c]; !ok {
				missing = append(missing, c+1)
			}
		}
		return nil, fmt.Errorf("trj: merge: the run has %d chains, the parts hold %d; missing chains %v", n, len(all.Chains), missing)
	}
	slices.SortFunc(all.Chains, func(a, b kernels.RJChainResult) int { return a.Chain - b.Chain })
	out := *first
	out.Timings = slices.Clone(first.Timings)
	out.Jumps = nil
	out.setChains(all)
	return &out, nil
}
