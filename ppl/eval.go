package ppl

import "gorgonia.org/gorgonia"

// evaluator is what a GraphModel needs from a compiled graph: *ad.Program
// provides it (and, in the tests, gorgonia's TapeMachine as an independent
// reference).
type evaluator interface {
	Dim() int
	LogDensity(x []float64) (float64, error)
	LogDensityGrad(x, grad []float64) (float64, error)
	Outputs(x, dst []float64) error
	clone() evaluator
}

// nodeSize is the number of elements of n.
func nodeSize(n *gorgonia.Node) int {
	if n.IsScalar() {
		return 1
	}
	return n.Shape().TotalSize()
}
