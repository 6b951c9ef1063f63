package ad

import (
	"errors"
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// errNoOutput is returned by LogDensity and LogDensityGrad of a program
// compiled by CompileOutputs, which has no scalar output.
var errNoOutput = errors.New("ad: program compiled by CompileOutputs has no log-density; use Outputs")

// CompileOutputs compiles a forward-only program: it lowers the nodes that
// outputs depend on (WithOutputs options add more), with inputs the values of the nodes in, flattened
// row-major and concatenated in order, and no gradient. Program.Outputs
// evaluates it; Dim is the total size of in. Other input nodes are data, as
// for Compile, and Bind replaces them. Evaluating a flow for a sampler, say,
// needs the map and its log-determinant but no derivatives; this compiles
// neither the gradient graph nor its buffers.
func CompileOutputs(g *gorgonia.ExprGraph, in, outputs []*gorgonia.Node, opts ...Option) (*Program, error) {
	if g == nil {
		return nil, errors.New("ad: CompileOutputs needs a graph")
	}
	if len(outputs) == 0 {
		return nil, errors.New("ad: CompileOutputs needs at least one output node")
	}
	cfg := config{outputs: outputs}
	for _, o := range opts {
		o(&cfg)
	}
	return compile(g, nil, in, cfg)
}

// WithSharedData makes Compile and CompileOutputs read the values of the
// given data nodes in place, from the float64 arrays backing their gorgonia
// values, in the program and in all its clones: nothing is copied, and a
// change the caller makes to those arrays is seen by the next evaluation
// (never make one during an evaluation). Large read-only data such as a
// fitted flow's parameters is then held once however many clones evaluate
// it. Bind refuses shared nodes.
func WithSharedData(nodes ...*gorgonia.Node) Option {
	return func(c *config) {
		if c.shared == nil {
			c.shared = make(map[*gorgonia.Node]bool)
		}
		for _, n := range nodes {
			c.shared[n] = true
		}
	}
}

// lowerShared gives a WithSharedData node a slot on the caller's array.
func (b *builder) lowerShared(nd *gorgonia.Node, n int) error {
	v := nd.Value()
	if v == nil {
		return fmt.Errorf("ad: shared data node %q has no value", nd.Name())
	}
	t, ok := v.(*tensor.Dense)
	if !ok || nd.Dtype() != tensor.Float64 || t.RequiresIterator() {
		return fmt.Errorf("ad: shared data node %q must hold a dense float64 tensor", nd.Name())
	}
	d, ok := t.Data().([]float64)
	if !ok || len(d) != n {
		return fmt.Errorf("ad: shared data node %q holds %T of the wrong size", nd.Name(), t.Data())
	}
	s := len(b.c.slotOff)
	b.c.slotOff = append(b.c.slotOff, b.arenaLen) // no room in the arena
	b.c.slotLen = append(b.c.slotLen, n)
	b.slot[nd] = s
	if b.c.shared == nil {
		b.c.shared = make(map[int][]float64)
	}
	b.c.shared[s] = d
	b.c.data[nd] = s
	return nil
}
