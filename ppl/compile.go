package ppl

import (
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad"
)

// compile lowers the log-density graph with ad.Compile.
func compile(g *gorgonia.ExprGraph, out *gorgonia.Node, wrt, outputs []*gorgonia.Node) (evaluator, error) {
	p, err := ad.Compile(g, out, wrt, ad.WithOutputs(outputs...))
	if err != nil {
		return nil, err
	}
	return program{p}, nil
}

// program adapts *ad.Program to evaluator.
type program struct{ *ad.Program }

func (p program) clone() evaluator { return program{p.Program.Clone()} }
