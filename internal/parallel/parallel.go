// Package parallel runs independent indexed tasks on a bounded number of
// goroutines, stopping at the first failure; trj's stages and the
// experiments share it.
package parallel

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// For calls f(ctx, i) for i = 0, …, n−1 on at most GOMAXPROCS
// goroutines and returns the error of the lowest failing index (nil when all
// succeed). Once a call fails or ctx is cancelled, indices not yet started
// are skipped and the context passed to running calls is cancelled. f must
// not share mutable state between indices.
func For(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	if n <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	workers := min(n, runtime.GOMAXPROCS(0))
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				if err := f(ctx, i); err != nil {
					errs[i] = err
					cancel()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	// Prefer a real failure over the cancellations it caused.
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	return ctx.Err()
}
