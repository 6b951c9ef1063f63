package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/models/factor"
)

// score runs trj.Run with default settings but the seed on the factor
// space (factor.NewSpace, or the folded sign-free models of folded.go if
// fold), once per seed, and prints π(2) from the chains (the run's
// headline estimate), the cross-model bridge and the per-model evidences
// against factor.ReferencePi2, with the process CPU seconds of each run.
func score(seeds []uint64, fold bool) error {
	y, err := factor.DefaultData()
	if err != nil {
		return err
	}
	newSpace := factor.NewSpace
	if fold {
		newSpace = newFoldedSpace
	}
	space, err := newSpace(y)
	if err != nil {
		return err
	}
	ref, refSE := factor.ReferencePi2, factor.ReferencePi2SE
	fmt.Printf("reference π(2) = %.4f ± %.4f\n\n", ref, refSE)
	fmt.Println("| seed | chains π(2) | MCSE | err | z | bridge π(2) | SE | evidence π(2) | SE | log Z (2) | log Z (3) | jump acc. | CPU s | wall s |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, s := range seeds {
		c0, t0 := cpuSeconds(), time.Now()
		r, err := trj.Run(context.Background(), space, &trj.Settings{Seed: s})
		cpu, wall := cpuSeconds()-c0, time.Since(t0).Seconds()
		if err != nil {
			return fmt.Errorf("seed %d: %w", s, err)
		}
		c := r.Chain[0]
		e := c.P - ref
		z := e / math.Hypot(c.MCSE, refSE)
		bp, bse := math.NaN(), math.NaN()
		if r.Bridge != nil {
			bp, bse = r.Bridge.Normalized[0], r.Bridge.NormalizedSE[0]
		}
		ep, ese, lz2, lz3 := math.NaN(), math.NaN(), "—", "—"
		if me := r.ModelEvidence; me != nil {
			ep, ese = me.P[0], me.SE[0]
			lz2 = fmt.Sprintf("%.3f ± %.3f", me.LogZ[0], me.LogZSE[0])
			lz3 = fmt.Sprintf("%.3f ± %.3f", me.LogZ[1], me.LogZSE[1])
		}
		prop, acc := 0, 0
		for _, j := range r.Jumps {
			prop += j.Proposed
			acc += j.Accepted
		}
		fmt.Printf("| %d | %.4f | %.4f | %+.4f | %+.2f | %.4f | %.4f | %.4f | %.4f | %s | %s | %.3f | %.1f | %.1f |\n",
			s, c.P, c.MCSE, e, z, bp, bse, ep, ese, lz2, lz3, float64(acc)/float64(max(prop, 1)), cpu, wall)
	}
	return nil
}
