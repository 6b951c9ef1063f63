package trj

import (
	"context"
	"math/rand/v2"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl/diag"
)

// Thresholds of ChainSettings.MaxSteps's extension (Vehtari et al. 2021):
// every model indicator's rank-normalised split-R̂ at most mixedRhat and
// its bulk ESS at least mixedESSPerChain per chain.
const (
	mixedRhat        = 1.01
	mixedESSPerChain = 100
)

// runChains runs the transdimensional chains: Steps kept steps per chain
// after the warm-up, then, while some model indicator has not mixed (see
// mixed) and MaxSteps allows, Steps more from where each chain stopped.
func runChains(ctx context.Context, s *Settings, w *drawWriter, start func(int, *rand.Rand) (int, []float64, error), factory func(int) (kernels.RJKernel, error)) (*kernels.RJSampleResult, error) {
	c := &s.Chains
	var all *kernels.RJSampleResult
	done := 0 // kept steps per chain so far
	warmup := c.Warmup
	for round := 0; ; round++ {
		lastK := make([]int, c.Chains)
		lastTheta := make([][]float64, c.Chains)
		offset := done
		set := &kernels.RJSampleSettings{
			Chains: c.Chains, Shard: c.Shard, Steps: c.Steps, Warmup: warmup,
			Seed: runs.SubSeed(s.Seed, "chains", round),
			Output: func(chain int) (kernels.RJChainOutput, error) {
				return kernels.RJDrawFunc(func(step, k int, theta []float64, info kernels.RJInfo) error {
					if step == c.Steps-1 { // the state a further round starts from
						lastK[chain] = k
						lastTheta[chain] = append([]float64(nil), theta...)
					}
					if w != nil {
						return w.write(chain, offset+step, k, theta, info)
					}
					return nil
				}), nil
			},
		}
		if s.Progress != nil {
			set.Progress = func(p kernels.Progress) {
				if p.Done%100 == 0 || p.Done == p.Total {
					s.Progress(pipeline.Progress{Stage: "chains", Model: -1, Chain: p.Chain, Done: offset + p.Done, Total: offset + p.Total})
				}
			}
		}
		rj, err := kernels.SampleRJ(ctx, factory, start, set)
		all = appendChains(all, rj)
		if err != nil {
			return all, err
		}
		done += c.Steps
		if c.Shard != nil || done+c.Steps > c.MaxSteps || mixed(all) {
			return all, nil
		}
		warmup = -1
		start = func(chain int, _ *rand.Rand) (int, []float64, error) {
			return lastK[chain], lastTheta[chain], nil
		}
	}
}

// appendChains appends b's steps to a's chains (b runs on from a).
func appendChains(a, b *kernels.RJSampleResult) *kernels.RJSampleResult {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	for i := range a.Chains {
		if i >= len(b.Chains) {
			break
		}
		ca, cb := &a.Chains[i], &b.Chains[i]
		ca.Models = append(ca.Models, cb.Models...)
		for k := range ca.Proposed {
			for j := range ca.Proposed[k] {
				ca.Proposed[k][j] += cb.Proposed[k][j]
				ca.Accepted[k][j] += cb.Accepted[k][j]
			}
		}
		ca.Elapsed += cb.Elapsed
	}
	return a
}

// indicators returns model k's indicator series, one per chain, with
// every kept step of every chain: the chains of an interrupted run keep
// every finished step (the interrupt rule, runs.Series), where
// rj.Indicators cuts them to the shortest.
func indicators(rj *kernels.RJSampleResult, k int) [][]float64 {
	lens := make([]int, len(rj.Chains))
	for c, ch := range rj.Chains {
		lens[c] = len(ch.Models)
	}
	return runs.Series(nil, lens, func(c, t int) float64 {
		if rj.Chains[c].Models[t] == k {
			return 1
		}
		return 0
	})
}

// mixed reports whether every model indicator of the chains has mixed:
// R̂ ≤ mixedRhat and bulk ESS ≥ mixedESSPerChain per chain. A model never
// visited, or visited by every step, has nothing to mix.
func mixed(rj *kernels.RJSampleResult) bool {
	for k := range rj.NumModels {
		x := rj.Indicators(k)
		rhat, err1 := diag.Rhat(x)
		ess, err2 := diag.ESSBulk(x)
		if err1 != nil || err2 != nil {
			if constantSeries(x) {
				continue
			}
			return false
		}
		if rhat > mixedRhat || ess < mixedESSPerChain*float64(len(x)) {
			return false
		}
	}
	return true
}

// constantSeries reports whether every value of every chain is the same.
func constantSeries(x [][]float64) bool {
	for _, c := range x {
		for _, v := range c {
			if v != x[0][0] {
				return false
			}
		}
	}
	return true
}
