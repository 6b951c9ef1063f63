package ad

import (
	"errors"
	"sync"
	"testing"

	G "gorgonia.org/gorgonia"
)

// sharedProgram compiles Σ xᵢ² over 200 coordinates, long enough for two
// goroutines' calls to overlap, and returns its value at x0 from one call.
func sharedProgram(t *testing.T) (*Program, []float64, float64) {
	t.Helper()
	p := compileSum(t, 200, G.Square)
	x0 := make([]float64, 200)
	for i := range x0 {
		x0[i] = float64(i) / 7
	}
	want, err := p.LogDensity(x0)
	if err != nil {
		t.Fatal(err)
	}
	return p, x0, want
}

// TestProgramConcurrentMisuse calls one Program from a goroutine while it
// is busy, deterministically, then from two goroutines at once: every
// call returns either the right value or ErrConcurrentUse, never a wrong
// value.
func TestProgramConcurrentMisuse(t *testing.T) {
	p, x0, want := sharedProgram(t)
	grad := make([]float64, len(x0))
	p.busy.Store(true) // as if another goroutine were evaluating
	if _, err := p.LogDensity(x0); !errors.Is(err, ErrConcurrentUse) {
		t.Errorf("LogDensity on a busy Program: %v", err)
	}
	if _, err := p.LogDensityGrad(x0, grad); !errors.Is(err, ErrConcurrentUse) {
		t.Errorf("LogDensityGrad on a busy Program: %v", err)
	}
	p.busy.Store(false)
	if v, err := p.LogDensityGrad(x0, grad); err != nil || v != want {
		t.Fatalf("after release: %v, %v; want %v", v, err, want)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	wrong := 0
	for range 2 {
		wg.Go(func() {
			xs := append([]float64(nil), x0...)
			g := make([]float64, len(x0))
			for range 2000 {
				v, err := p.LogDensityGrad(xs, g)
				if errors.Is(err, ErrConcurrentUse) {
					continue
				}
				if err != nil || v != want {
					mu.Lock()
					wrong++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if wrong > 0 {
		t.Errorf("%d calls from two goroutines returned a wrong value without an error", wrong)
	}
	// Clones are independent: no error.
	c := p.Clone()
	wg.Go(func() {
		if _, err := c.LogDensity(x0); err != nil {
			t.Error(err)
		}
	})
	if _, err := p.LogDensity(x0); err != nil {
		t.Error(err)
	}
	wg.Wait()
}
