package ppl

import (
	"fmt"
	"math"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tapeEvaluator runs the graph and its symbolic gradient on gorgonia's
// TapeMachine. The machine is not reentrant, so clones share it under a
// mutex: correct for concurrent chains, but serialised.
type tapeEvaluator struct {
	mu      *sync.Mutex
	vm      gorgonia.VM
	out     *gorgonia.Node
	wrt     []*gorgonia.Node
	grads   gorgonia.Nodes
	outputs []*gorgonia.Node
	dim     int
	nOut    int
}

func newTapeEvaluator(g *gorgonia.ExprGraph, out *gorgonia.Node, wrt, outputs []*gorgonia.Node) (ev evaluator, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ppl: building the gradient graph: %v", r)
		}
	}()
	grads, err := gorgonia.Grad(out, wrt...)
	if err != nil {
		return nil, fmt.Errorf("ppl: building the gradient graph: %w", err)
	}
	t := &tapeEvaluator{mu: new(sync.Mutex), out: out, wrt: wrt, grads: grads, outputs: outputs}
	for _, w := range wrt {
		t.dim += nodeSize(w)
	}
	for _, o := range outputs {
		t.nOut += nodeSize(o)
	}
	t.vm = gorgonia.NewTapeMachine(g)
	return t, nil
}

func (t *tapeEvaluator) Dim() int { return t.dim }

func (t *tapeEvaluator) clone() evaluator { return t }

// run sets the inputs and runs the machine; the caller holds t.mu.
func (t *tapeEvaluator) run(x []float64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ppl: tape machine: %v", r)
		}
	}()
	if len(x) != t.dim {
		return fmt.Errorf("ppl: point has length %d, want %d", len(x), t.dim)
	}
	off := 0
	for _, w := range t.wrt {
		n := nodeSize(w)
		var v gorgonia.Value
		if w.IsScalar() {
			v = gorgonia.NewF64(x[off])
		} else {
			v = tensor.New(tensor.WithShape(w.Shape()...), tensor.WithBacking(append([]float64(nil), x[off:off+n]...)))
		}
		if err := gorgonia.Let(w, v); err != nil {
			return err
		}
		off += n
	}
	t.vm.Reset()
	return t.vm.RunAll()
}

func valueInto(dst []float64, v gorgonia.Value) int {
	switch d := v.Data().(type) {
	case float64:
		dst[0] = d
		return 1
	case []float64:
		return copy(dst, d)
	}
	return 0
}

func (t *tapeEvaluator) LogDensity(x []float64) (float64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.run(x); err != nil {
		return math.Inf(-1), err
	}
	lp := t.out.Value().Data().(float64)
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return lp, fmt.Errorf("ppl: log-density is %v", lp)
	}
	return lp, nil
}

func (t *tapeEvaluator) LogDensityGrad(x, grad []float64) (float64, error) {
	if len(grad) != t.dim {
		return math.Inf(-1), fmt.Errorf("ppl: gradient has length %d, want %d", len(grad), t.dim)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.run(x); err != nil {
		return math.Inf(-1), err
	}
	off := 0
	for _, gn := range t.grads {
		off += valueInto(grad[off:], gn.Value())
	}
	lp := t.out.Value().Data().(float64)
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return lp, fmt.Errorf("ppl: log-density is %v", lp)
	}
	for _, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return lp, fmt.Errorf("ppl: gradient is not finite")
		}
	}
	return lp, nil
}

func (t *tapeEvaluator) Outputs(x, dst []float64) error {
	if len(dst) != t.nOut {
		return fmt.Errorf("ppl: outputs buffer has length %d, want %d", len(dst), t.nOut)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.run(x); err != nil {
		return err
	}
	off := 0
	for _, o := range t.outputs {
		off += valueInto(dst[off:], o.Value())
	}
	return nil
}
