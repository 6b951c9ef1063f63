package selection

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/trjgo/trj/ppl"
)

// FuzzSettings fuzzes Settings' counts, shard, seed and start on a tiny
// selection space (3 terms). Validate and Run's validation must never
// panic and must agree; a run is made only when it is small (at most 600
// steps in all, so that an input costs milliseconds), and it must never
// panic and either fail or return every step asked for: Steps from each
// chain run.
func FuzzSettings(f *testing.F) {
	f.Add(uint64(1), 2, 10, 50, 5, int8(-1), 0, 0, uint8(0))
	f.Add(uint64(2), 0, 0, 0, 0, int8(-1), 0, 0, uint8(5))
	f.Add(uint64(3), 3, 0, 40, 1, int8(2), 2, 0, uint8(3))
	f.Add(uint64(4), 2, 5, 30, 100, int8(1), 1, 0, uint8(7))
	f.Add(uint64(5), math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt, int8(2), 1, 1, uint8(8))
	f.Add(uint64(6), 4, math.MaxInt, 1, 1, int8(0), 0, 0, uint8(0))
	f.Add(uint64(7), 1, 0, int(1e9), 1, int8(-1), 0, 0, uint8(0))
	f.Add(uint64(8), 1<<16+1, 0, 1, 1, int8(1), -1, 0, uint8(0))
	f.Add(uint64(9), -1, -1, -1, -1, int8(2), 5, -5, uint8(0))
	sp := tinySpace(f, 3, nil)
	f.Fuzz(func(t *testing.T, seed uint64, chains, warmup, steps, top int, shardLen int8, shard0, shard1 int, start uint8) {
		s := &Settings{Seed: seed, Chains: chains, Warmup: warmup, Steps: steps, Top: top}
		switch shardLen {
		case -1:
		case 0:
			s.Shard = []int{}
		case 1:
			s.Shard = []int{shard0}
		default:
			s.Shard = []int{shard0, shard1}
		}
		// start's bits 0-2 are the start model's terms; bit 3 gives it 4
		// candidates, one too many for the space.
		if start != 0 {
			var idx []int
			for i := range 3 {
				if start&(1<<i) != 0 {
					idx = append(idx, i)
				}
			}
			tm, _ := ppl.NewTerms(3+int(start>>3&1), idx...)
			s.Start = &tm
		}
		verr := s.Validate()
		d := s.withDefaults()
		rerr := d.validate(sp)
		if verr != nil && rerr == nil {
			t.Fatalf("Validate refuses %+v (%v), Run's validation accepts it", s, verr)
		}
		if rerr != nil {
			return // Run refuses it the same way, before any work
		}
		// Only small runs go on.
		run := d.Chains
		if d.Shard != nil {
			run = len(d.Shard)
		}
		if d.Warmup+d.Steps > 600/run {
			return
		}
		res, err := Run(context.Background(), sp, s)
		switch {
		case err != nil && res != nil:
			t.Fatalf("%+v: error %v with a result", s, err)
		case err != nil:
			return
		case res.Steps != run*d.Steps || res.StepsPerChain != d.Steps || len(res.PIP) != 3:
			t.Fatalf("%+v: a result of %d steps (%d per chain, %d PIPs), want %d chains × %d", s, res.Steps, res.StepsPerChain, len(res.PIP), run, d.Steps)
		case d.Shard != nil && !slices.Equal(res.Chains, d.Shard):
			t.Fatalf("%+v: chains %v run, want %v", s, res.Chains, d.Shard)
		case len(res.Top) > d.Top:
			t.Fatalf("%+v: %d top models, want at most %d", s, len(res.Top), d.Top)
		}
	})
}
