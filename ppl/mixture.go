package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad/ops"
)

// Mixture is a finite mixture: each observation has density
// Σ_k Weights_k · p_k(x), evaluated as a log-sum-exp of the components'
// pointwise log-densities so that it stays finite far in the tails.
// Weights is a constant []float64 summing to one or a simplex node (see
// Builder.Simplex) with one entry per component.
type Mixture struct {
	Weights    Operand
	Components []Distribution
}

// LogProb returns the summed log-density of x.
func (d Mixture) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return total(d.LogProbs(x)) }

// LogProbs returns the log-density of each observation.
func (d Mixture) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	k := len(d.Components)
	if k < 2 {
		return nil, fmt.Errorf("ppl: Mixture needs at least two components, got %d", k)
	}
	w, err := resolve("Mixture.Weights", d.Weights)
	if err != nil {
		return nil, err
	}
	if !w.shape.Eq(tensor.Shape{k}) {
		return nil, fmt.Errorf("ppl: Mixture: Weights has shape %v, want (%d) for %d components", w.shape, k, k)
	}
	if w.isConst() {
		sum := 0.0
		for i, wi := range w.val {
			if !(wi > 0) {
				return nil, fmt.Errorf("ppl: Mixture: weight %d is %v, want > 0", i, wi)
			}
			sum += wi
		}
		if math.Abs(sum-1) > 1e-8*float64(k) {
			return nil, fmt.Errorf("ppl: Mixture: weights sum to %v, not 1", sum)
		}
	}
	e := &expr{}
	var acc operand
	for i, c := range d.Components {
		if c == nil {
			return nil, fmt.Errorf("ppl: Mixture: component %d is nil", i)
		}
		lp, err := c.LogProbs(x)
		if err != nil {
			return nil, fmt.Errorf("ppl: Mixture component %d: %w", i, err)
		}
		var lw operand
		if w.isConst() {
			lw = cst(math.Log(w.val[i]))
		} else {
			lw = e.Log(onNode(e.un(func(a *gorgonia.Node) (*gorgonia.Node, error) {
				return ops.Slice(a, gorgonia.S(i))
			}, w.node)))
		}
		term := e.Add(asOperand(lp), lw)
		if i == 0 {
			acc = term
		} else {
			acc = e.LogAddExp(acc, term)
		}
		if e.err != nil {
			return nil, e.err
		}
	}
	return e.result(acc)
}
