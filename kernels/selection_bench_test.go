package kernels

import (
	"math/rand/v2"
	"testing"
)

// cachedToy serves the toy target's models from a table, so that the
// benchmark counts only the kernel's own allocations.
type cachedToy struct {
	*toyTarget
	models map[int]SelectionModel
}

func (c *cachedToy) Model(active []int) (SelectionModel, error) {
	key := 0
	for _, a := range active {
		key |= 1 << a
	}
	if m, ok := c.models[key]; ok {
		return m, nil
	}
	m, err := c.toyTarget.Model(active)
	c.models[key] = m
	return m, err
}

// BenchmarkSelectionStep is one jump and within-model move of the
// selection kernel; with -benchmem it shows the step allocates nothing
// once every model has been seen.
func BenchmarkSelectionStep(b *testing.B) {
	tg := &cachedToy{&toyTarget{p: 5, mu: []float64{2, -1, 0.5, 3, -2}, logW: []float64{1.5, -0.5, 0, -2, 0.7}}, map[int]SelectionModel{}}
	k, err := NewSelectionKernel(tg, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := k.Init([]int{1, 3}, nil)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 { // visit every model first
		if _, err := k.Step(rng, st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Step(rng, st); err != nil {
			b.Fatal(err)
		}
	}
}
