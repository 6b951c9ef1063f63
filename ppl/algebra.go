package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
)

// Arithmetic on operands that folds constants in Go and builds graph nodes
// only where a parameter is involved, so that normalising constants such as
// lgamma of a fixed shape cost nothing at run time.

func cst(v float64) operand { return operand{val: []float64{v}} }

func onNode(n *gorgonia.Node) operand {
	if n == nil {
		return operand{}
	}
	return operand{node: n, shape: nodeShape(n)}
}

// isConstEq reports whether o is a constant with every element equal to v.
func (o operand) isConstEq(v float64) bool {
	if !o.isConst() || len(o.val) == 0 {
		return false
	}
	for _, x := range o.val {
		if x != v {
			return false
		}
	}
	return true
}

func (e *expr) o2(a, b operand, f func(x, y float64) float64, g binFn) operand {
	if e.err != nil {
		return operand{}
	}
	if a.isConst() && b.isConst() {
		if len(a.val) == 0 || len(b.val) == 0 {
			e.fail(fmt.Errorf("ppl: internal: empty operand"))
			return operand{}
		}
		if len(a.val) > 1 && len(b.val) > 1 && len(a.val) != len(b.val) {
			e.fail(fmt.Errorf("ppl: shape mismatch %v vs %v", a.shape, b.shape))
			return operand{}
		}
		shape := a.shape
		if len(b.val) > len(a.val) {
			shape = b.shape
		}
		v := make([]float64, max(len(a.val), len(b.val)))
		for i := range v {
			v[i] = f(boundAt(a.val, i), boundAt(b.val, i))
		}
		return operand{val: v, shape: shape}
	}
	return onNode(e.bin(g, e.node(a), e.node(b)))
}

func (e *expr) o1(a operand, f func(x float64) float64, g unFn) operand {
	if e.err != nil {
		return operand{}
	}
	if a.isConst() {
		return mapConst(a, f)
	}
	return onNode(e.un(g, a.node))
}

// unit returns the other operand when a or b is the constant id, the
// identity of a commutative operation on them.
func unit(a, b operand, id float64) (operand, bool) {
	switch {
	case b.isConstEq(id):
		return a, true
	case a.isConstEq(id):
		return b, true
	}
	return operand{}, false
}

func (e *expr) Add(a, b operand) operand {
	if o, ok := unit(a, b, 0); ok {
		return o
	}
	return e.o2(a, b, func(x, y float64) float64 { return x + y }, gorgonia.Add)
}

func (e *expr) Sub(a, b operand) operand {
	if b.isConstEq(0) {
		return a
	}
	return e.o2(a, b, func(x, y float64) float64 { return x - y }, gorgonia.Sub)
}

func (e *expr) Mul(a, b operand) operand {
	if o, ok := unit(a, b, 1); ok {
		return o
	}
	return e.o2(a, b, func(x, y float64) float64 { return x * y }, gorgonia.HadamardProd)
}

func (e *expr) Div(a, b operand) operand {
	if b.isConstEq(1) {
		return a
	}
	if b.isConst() {
		// Multiplying by a reciprocal is cheaper than dividing.
		return e.Mul(a, mapConst(b, func(x float64) float64 { return 1 / x }))
	}
	return e.o2(a, b, func(x, y float64) float64 { return x / y }, gorgonia.HadamardDiv)
}

func (e *expr) Log(a operand) operand   { return e.o1(a, math.Log, gorgonia.Log) }
func (e *expr) Log1p(a operand) operand { return e.o1(a, math.Log1p, gorgonia.Log1p) }
func (e *expr) Exp(a operand) operand   { return e.o1(a, math.Exp, gorgonia.Exp) }
func (e *expr) Neg(a operand) operand {
	return e.o1(a, func(x float64) float64 { return -x }, gorgonia.Neg)
}
func (e *expr) Square(a operand) operand {
	return e.o1(a, func(x float64) float64 { return x * x }, gorgonia.Square)
}
func (e *expr) Lgamma(a operand) operand {
	return e.o1(a, func(x float64) float64 { l, _ := math.Lgamma(x); return l }, func(n *gorgonia.Node) (*gorgonia.Node, error) {
		return e.lgamma(n), e.err
	})
}
func (e *expr) Softplus(a operand) operand {
	return e.o1(a, func(x float64) float64 {
		if x > 0 {
			return x + math.Log1p(math.Exp(-x))
		}
		return math.Log1p(math.Exp(x))
	}, func(n *gorgonia.Node) (*gorgonia.Node, error) { return e.softplus(n), e.err })
}

// Scale multiplies a by the constant c.
func (e *expr) Scale(c float64, a operand) operand { return e.Mul(cst(c), a) }

// result returns o as a node. When nothing in it depends on a parameter
// it is a graph-less constant node, which Builder adds as a constant.
func (e *expr) result(o operand) (*gorgonia.Node, error) {
	if e.err != nil {
		return nil, e.err
	}
	if o.node == nil {
		return constNode(o.val, o.shape), nil
	}
	return o.node, nil
}

// sumOperand sums o's elements.
func (e *expr) sumOperand(o operand) operand {
	if e.err != nil {
		return operand{}
	}
	if o.isConst() {
		t := 0.0
		for _, v := range o.val {
			t += v
		}
		return cst(t)
	}
	return onNode(e.sum(o.node))
}

// LogAddExp is log(exp a + exp b) = a + softplus(b − a).
func (e *expr) LogAddExp(a, b operand) operand { return e.Add(a, e.Softplus(e.Sub(b, a))) }
