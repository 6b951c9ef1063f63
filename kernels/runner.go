package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime/debug"
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
var ErrTooLarge = errors.New("kernels: run too large")

// chainOverheadBytes is a lower bound on the memory of a chain besides its
// draws: a goroutine, its kernel's scratch and its target.
const chainOverheadBytes = 16 << 10

// checkMemory refuses chains chains that each store kept draws of perDraw
// bytes when they need more bytes than an int holds, or than the machine's
// memory (or the Go memory limit) when it is known. what describes a draw
// for the message ("stored draws of dimension 3").
func checkMemory(chains int, kept, perDraw uint64, what string) error {
	need, ok := mulAdd(kept, perDraw, chainOverheadBytes)
	if ok {
		need, ok = mulAdd(need, uint64(max(chains, 0)), 0)
	}
	limit := memoryLimit()
	if ok && (limit == 0 || need <= limit) {
		return nil
	}
	what = fmt.Sprintf("%d chains × %d %s", chains, kept, what)
	if !ok {
		return fmt.Errorf("%w: %s need more than 2⁶⁴ bytes", ErrTooLarge, what)
	}
	return fmt.Errorf("%w: %s need %s, more than the %s available", ErrTooLarge, what, formatBytes(need), formatBytes(limit))
}

// mulAdd returns a·b + c and whether it fits in a uint64 (and an int).
func mulAdd(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	sum, carry := bits.Add64(lo, c, 0)
	return sum, hi == 0 && carry == 0 && sum <= math.MaxInt
}

// formatBytes prints n in the largest binary unit that keeps it ≥ 1.
func formatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.3g %s", v, units[u])
}

// memoryLimit is the smaller of the Go memory limit (GOMEMLIMIT) and the
// machine's memory, or 0 when neither is known.
func memoryLimit() uint64 {
	limit := uint64(0)
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		limit = uint64(l)
	}
	if m := physicalMemory(); m > 0 && (limit == 0 || m < limit) {
		limit = m
	}
	return limit
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
