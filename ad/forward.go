package ad

import (
	"errors"

	"gorgonia.org/gorgonia"
)

// errNoOutput is returned by LogDensity and LogDensityGrad of a program
// compiled by CompileOutputs, which has no scalar output.
var errNoOutput = errors.New("ad: program compiled by CompileOutputs has no log-density; use Outputs")

// CompileOutputs compiles a forward-only program: it lowers the nodes that
// outputs depend on, with inputs the values of the nodes in, flattened
// row-major and concatenated in order, and no gradient. Program.Outputs
// evaluates it; Dim is the total size of in. Other input nodes are data, as
// for Compile, and Bind replaces them. Evaluating a flow for a sampler, say,
// needs the map and its log-determinant but no derivatives; this compiles
// neither the gradient graph nor its buffers.
func CompileOutputs(g *gorgonia.ExprGraph, in []*gorgonia.Node, outputs ...*gorgonia.Node) (*Program, error) {
	if g == nil {
		return nil, errors.New("ad: CompileOutputs needs a graph")
	}
	if len(outputs) == 0 {
		return nil, errors.New("ad: CompileOutputs needs at least one output node")
	}
	return compile(g, nil, in, config{outputs: outputs})
}
