package trj

import (
	"context"
	"math"
	"testing"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
)

// FuzzSettings runs trj.Run on a tiny two-model space with fuzzed counts,
// floats (NaN and ±Inf included) and shards. The settings are always
// validated (defaults included: a zero count is its default), which must
// never panic; a run is then made only when it is small (at most a few
// thousand pilot iterations and chain steps, so that an input costs
// milliseconds), and it must never panic nor return Complete, or no
// error, without kept steps.
func FuzzSettings(f *testing.F) {
	f.Add(uint64(1), int8(0), 2, 40, 80, 0, 2, 0, 2, 20, 0, 0, int8(-1), 0, 0, 0.0, 0.0, int8(0), 0, 0)
	f.Add(uint64(2), int8(2), 0, 0, 0, 0, 0, 1, 3, 8, -1, 8, int8(2), 0, 2, 0.2, 1.5, int8(1), -1, 0)
	f.Add(uint64(3), int8(1), 0, 0, 0, 4, 2, 0, 2, 10, 2, 0, int8(1), 1, 0, 0.0, 0.0, int8(1), 1, -1)
	f.Add(uint64(4), int8(0), 2, 20, 40, 0, 0, 0, 4, 10, math.MaxInt, 0, int8(0), 0, 0, math.NaN(), math.Inf(1), int8(0), 0, 0)
	f.Add(uint64(5), int8(2), 0, 0, 0, 0, 0, 0, int(1e9), int(1e9), 0, int(1e12), int8(2), -1, 7, math.Inf(-1), -1.0, int8(5), 3, 2)
	f.Add(uint64(6), int8(2), 0, 0, 0, 0, -2, -3, -4, 4, 0, -1, int8(2), 1, 1, 0.5, 0.0, int8(1), 0, 0)
	space := gaussSpace(f, 0.5, 0, 1)
	K := space.NumModels()
	// Given draws: 4 groups of 6 draws per model.
	given := make([][][][]float64, K)
	for k := range K {
		rng := runs.Stream(9, "fuzz given", k)
		for range 4 {
			var g [][]float64
			for range 6 {
				x := make([]float64, space.ModelDim(k))
				for i := range x {
					x[i] = 0.25 + 0.7*rng.NormFloat64()
				}
				g = append(g, x)
			}
			given[k] = append(given[k], g)
		}
	}
	f.Fuzz(func(t *testing.T, seed uint64, method int8, pChains, pWarmup, pDraws, pRuns, groups, proposals,
		chains, steps, warmup, maxSteps int, shardLen int8, shard0, shard1 int, floor, rwScale float64, within int8, flowMoves, refresh int) {
		nuts := NUTSPilots{Chains: pChains, Warmup: pWarmup, Draws: pDraws}
		// tooLong reports whether the pilot would take more than a moment.
		tooLong := func() bool { p := nuts.defaults(); return p.Chains*(p.Warmup+p.Draws) > 600 }
		s := &Settings{
			Seed:      seed,
			Pilot:     PilotSettings{Method: nuts},
			Proposals: &AffineTransports{},
			Bridge:    BridgeSettings{Groups: groups, Proposals: proposals},
			Chains: ChainSettings{Chains: chains, Steps: steps, Warmup: warmup, MaxSteps: maxSteps,
				JumpFloor: floor, FlowMoves: flowMoves},
		}
		if within != 0 {
			s.Chains.Within = RandomWalkMove{Scale: rwScale}
		}
		switch method {
		case 1:
			smc := SMCPilots{Runs: pRuns, Refresh: refresh, SMC: &kernels.SMCSettings{Particles: 40}}
			s.Pilot.Method = smc
			tooLong = func() bool { p := smc.defaults(); return p.Runs > 6 || p.Refresh > 5 }
		case 2:
			s.Pilot.Method = GivenPilots{Draws: given}
			tooLong = func() bool { return false }
		}
		switch shardLen {
		case -1:
		case 0:
			s.Chains.Shard = []int{}
		case 1:
			s.Chains.Shard = []int{shard0}
		default:
			s.Chains.Shard = []int{shard0, shard1}
		}
		d := s.withDefaults(K)
		if d.validate(space) != nil || d.validateRun(space) != nil {
			return // refused: Run refuses it the same way, before any work
		}
		// Only small runs go on.
		c := &d.Chains
		run := c.Chains
		if c.Shard != nil {
			run = len(c.Shard)
		}
		switch {
		case tooLong(),
			run*(c.Warmup+c.MaxSteps) > 2000, c.FlowMoves > 3,
			d.Bridge.Proposals > 4:
			return
		}
		res, err := Run(context.Background(), space, s)
		if res != nil && res.Complete && res.Steps == 0 {
			t.Fatalf("Complete with no kept steps (err %v): %+v", err, s)
		}
		if err == nil {
			switch {
			case res == nil || !res.Complete:
				t.Fatalf("no error, but no complete result: %+v", res)
			case res.Steps != run*len(res.Chains.Chains[0].Models):
				t.Fatalf("%d kept steps, want %d chains × %d", res.Steps, run, len(res.Chains.Chains[0].Models))
			case len(res.Chains.Chains) != run:
				t.Fatalf("%d chains, want %d", len(res.Chains.Chains), run)
			}
			_ = res.String()
		}
	})
}
