package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/trjgo/trj/internal/runs"
)

// What Sample and SampleRJ share: the checks before a run starts, which
// chains it (or a shard of it) runs, whether its stored draws fit in
// memory.

// planRun refuses, before any chain starts, a run whose warm-up plus kept
// iterations (what: "draws", "steps") overflow an int, whose stored draws
// do not fit in memory (checkMemory, given no dimension yet) or whose shard
// is not a set of chains in [0, chains). It returns the iterations per
// chain and the numbers of the chains to run: shard's, or 0 … chains−1
// when shard is nil.
func planRun(warmup, kept int, what string, checkMemory func(dim int) error, shard []int, chains int) (total int, run []int, err error) {
	switch {
	case kept < 0:
		return 0, nil, fmt.Errorf("kernels: %d %s", kept, what)
	case warmup > math.MaxInt-kept:
		return 0, nil, fmt.Errorf("kernels: %d warm-up and %d kept %s overflow an int", warmup, kept, what)
	case chains < 0:
		return 0, nil, fmt.Errorf("kernels: %d chains", chains)
	}
	if err := checkMemory(0); err != nil {
		return 0, nil, err
	}
	if shard == nil {
		run = make([]int, chains)
		for c := range run {
			run[c] = c
		}
		return warmup + kept, run, nil
	}
	seen := make(map[int]bool, len(shard))
	for _, c := range shard {
		if c < 0 || c >= chains || seen[c] {
			return 0, nil, fmt.Errorf("kernels: shard chain %d is out of range [0, %d) or repeated", c, chains)
		}
		seen[c] = true
	}
	return warmup + kept, shard, nil
}

// ErrTooLarge is returned (wrapped) for runs whose draws cannot fit in
// memory; the message says how much they would need.
var ErrTooLarge = runs.ErrTooLarge

// checkMemory refuses chains chains that each store kept draws of perDraw
// bytes when they need more bytes than an int holds, or than the machine's
// memory (or the Go memory limit) when it is known: the rule of every run
// (runs.CheckMemory). what describes a draw for the message ("stored
// draws of dimension 3").
func checkMemory(chains int, kept, perDraw uint64, what string) error {
	if err := runs.CheckMemory(chains, runs.Kept{N: kept, Bytes: perDraw, What: what}); err != nil {
		return fmt.Errorf("kernels: %w", err)
	}
	return nil
}

// isContextErr reports whether err is a cancellation or a deadline.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// cancelled returns ctx's error every every-th iteration it and nil
// between: checking the context costs a lock.
func cancelled(ctx context.Context, it, every int) error {
	if it%every == 0 {
		return ctx.Err()
	}
	return nil
}

// settingsOf is *p, or the zero value when p is nil: nil settings are all
// defaults.
func settingsOf[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// setDefault sets *p to v when it is zero: a settings field left at zero
// takes its default.
func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}
