package ppl

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad/ops"
)

// Operand is a distribution parameter or an observation: a float64 (or int)
// constant, a []float64 constant vector, a mat.Matrix constant, or a
// *gorgonia.Node built from the model's parameters and data.
//
// Operand is an alias of any so that priors read like Stan
// (ppl.Normal{Mu: 0, Sigma: 5}) while likelihoods take graph nodes
// (ppl.Normal{Mu: theta, Sigma: sigma}); any other type is reported as an
// error when the log-density graph is built.
type Operand = any

// operand is an Operand resolved to either a graph node or a constant.
type operand struct {
	node  *gorgonia.Node // nil for constants
	val   []float64      // constant values, row-major; nil for nodes
	shape tensor.Shape   // () for scalars
}

func (o operand) isConst() bool  { return o.node == nil }
func (o operand) isScalar() bool { return o.shape.IsScalar() || len(o.shape) == 0 }
func (o operand) size() int {
	if o.isScalar() {
		return 1
	}
	return o.shape.TotalSize()
}

// resolve converts an Operand into an operand; what names it in errors.
func resolve(what string, v Operand) (operand, error) {
	switch x := v.(type) {
	case nil:
		return operand{}, fmt.Errorf("ppl: %s is missing", what)
	case *gorgonia.Node:
		if x == nil {
			return operand{}, fmt.Errorf("ppl: %s is a nil node", what)
		}
		if x.Dtype() != tensor.Float64 {
			return operand{}, fmt.Errorf("ppl: %s has dtype %v, want float64", what, x.Dtype())
		}
		if isData(x) || isConstantOp(x) {
			// Data are constants of the log-density: fold them in Go so
			// that, e.g., log σ of a data vector is computed once.
			o := operand{shape: nodeShape(x)}
			switch d := x.Value().Data().(type) {
			case float64:
				o.val = []float64{d}
			case []float64:
				o.val = append([]float64(nil), d...)
			default:
				return operand{}, fmt.Errorf("ppl: %s holds %T, want float64 data", what, d)
			}
			return o, nil
		}
		return operand{node: x, shape: nodeShape(x)}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return operand{}, fmt.Errorf("ppl: %s is %v", what, x)
		}
		return operand{val: []float64{x}, shape: tensor.ScalarShape()}, nil
	case int:
		return operand{val: []float64{float64(x)}, shape: tensor.ScalarShape()}, nil
	case []float64:
		if len(x) == 0 {
			return operand{}, fmt.Errorf("ppl: %s is an empty vector", what)
		}
		for i, xi := range x {
			if math.IsNaN(xi) || math.IsInf(xi, 0) {
				return operand{}, fmt.Errorf("ppl: %s[%d] is %v", what, i, xi)
			}
		}
		return operand{val: append([]float64(nil), x...), shape: tensor.Shape{len(x)}}, nil
	case mat.Matrix:
		r, c := x.Dims()
		val := make([]float64, 0, r*c)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				xij := x.At(i, j)
				if math.IsNaN(xij) || math.IsInf(xij, 0) {
					return operand{}, fmt.Errorf("ppl: %s[%d, %d] is %v", what, i, j, xij)
				}
				val = append(val, xij)
			}
		}
		return operand{val: val, shape: tensor.Shape{r, c}}, nil
	default:
		return operand{}, fmt.Errorf("ppl: %s has unsupported type %T (want float64, []float64, mat.Matrix or *gorgonia.Node)", what, v)
	}
}

// nodeShape returns the shape of n, with scalars as the empty shape.
func nodeShape(n *gorgonia.Node) tensor.Shape {
	if n.IsScalar() {
		return tensor.ScalarShape()
	}
	return n.Shape()
}

// broadcastShape returns the common shape of operands that are either scalar
// or share one shape, the only broadcasting the distributions support.
func broadcastShape(what string, ops ...operand) (tensor.Shape, error) {
	out := tensor.ScalarShape()
	for _, o := range ops {
		if o.isScalar() {
			continue
		}
		if out.IsScalar() || len(out) == 0 {
			out = o.shape
			continue
		}
		if !out.Eq(o.shape) {
			return nil, fmt.Errorf("ppl: %s: shape mismatch %v vs %v", what, out, o.shape)
		}
	}
	return out, nil
}

// expr builds graph expressions with a sticky error, so that formulas read
// as formulas: once an operation fails, every later one returns nil and the
// first error is kept.
type expr struct {
	err error
}

func (e *expr) fail(err error) *gorgonia.Node {
	if e.err == nil {
		e.err = err
	}
	return nil
}

// node returns o as a graph node, creating a constant when needed.
func (e *expr) node(o operand) *gorgonia.Node {
	if e.err != nil {
		return nil
	}
	if o.node != nil {
		return o.node
	}
	return constNode(o.val, o.shape)
}

// constNode returns a graph-less constant node holding v with shape s.
func constNode(v []float64, s tensor.Shape) *gorgonia.Node {
	if s.IsScalar() || len(s) == 0 {
		return gorgonia.NewConstant(v[0])
	}
	back := append([]float64(nil), v...)
	return gorgonia.NewConstant(tensor.New(tensor.WithShape(s...), tensor.WithBacking(back)))
}

func (e *expr) c(v float64) *gorgonia.Node { return gorgonia.NewConstant(v) }

type binFn func(a, b *gorgonia.Node) (*gorgonia.Node, error)
type unFn func(a *gorgonia.Node) (*gorgonia.Node, error)

func (e *expr) bin(f binFn, a, b *gorgonia.Node) *gorgonia.Node {
	if e.err != nil {
		return nil
	}
	if a == nil || b == nil {
		return e.fail(fmt.Errorf("ppl: internal: nil operand"))
	}
	n, err := safeBin(f, a, b)
	if err != nil {
		return e.fail(err)
	}
	return n
}

func (e *expr) un(f unFn, a *gorgonia.Node) *gorgonia.Node {
	if e.err != nil {
		return nil
	}
	if a == nil {
		return e.fail(fmt.Errorf("ppl: internal: nil operand"))
	}
	n, err := safeUn(f, a)
	if err != nil {
		return e.fail(err)
	}
	return n
}

// safeBin and safeUn turn gorgonia panics (it panics on some shape errors)
// into errors.
func safeBin(f binFn, a, b *gorgonia.Node) (n *gorgonia.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ppl: graph construction failed: %v", r)
		}
	}()
	n, err = f(a, b)
	if err != nil {
		err = fmt.Errorf("ppl: %w", err)
	}
	return n, err
}

func safeUn(f unFn, a *gorgonia.Node) (n *gorgonia.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ppl: graph construction failed: %v", r)
		}
	}()
	n, err = f(a)
	if err != nil {
		err = fmt.Errorf("ppl: %w", err)
	}
	return n, err
}

func (e *expr) add(a, b *gorgonia.Node) *gorgonia.Node { return e.bin(gorgonia.Add, a, b) }
func (e *expr) sub(a, b *gorgonia.Node) *gorgonia.Node { return e.bin(gorgonia.Sub, a, b) }
func (e *expr) mul(a, b *gorgonia.Node) *gorgonia.Node { return e.bin(gorgonia.HadamardProd, a, b) }
func (e *expr) matmul(a, b *gorgonia.Node) *gorgonia.Node {
	return e.bin(gorgonia.Mul, a, b)
}
func (e *expr) exp(a *gorgonia.Node) *gorgonia.Node    { return e.un(gorgonia.Exp, a) }
func (e *expr) log(a *gorgonia.Node) *gorgonia.Node    { return e.un(gorgonia.Log, a) }
func (e *expr) neg(a *gorgonia.Node) *gorgonia.Node    { return e.un(gorgonia.Neg, a) }
func (e *expr) square(a *gorgonia.Node) *gorgonia.Node { return e.un(gorgonia.Square, a) }
func (e *expr) sum(a *gorgonia.Node) *gorgonia.Node {
	if e.err != nil {
		return nil
	}
	if a.IsScalar() {
		return a
	}
	return e.un(func(n *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(n) }, a)
}

// sumAlong sums a matrix along one axis.
func (e *expr) sumAlong(a *gorgonia.Node, axis int) *gorgonia.Node {
	return e.un(func(n *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(n, axis) }, a)
}

func (e *expr) reshape(a *gorgonia.Node, s tensor.Shape) *gorgonia.Node {
	return e.un(func(n *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Reshape(n, s) }, a)
}

// scale multiplies a by the constant c, skipping the node when c is one.
func (e *expr) scale(a *gorgonia.Node, c float64) *gorgonia.Node {
	if c == 1 {
		return a
	}
	return e.mul(e.c(c), a)
}

// softplus is the overflow-free log(1 + exp(a)) of ad/ops (gorgonia's own
// Softplus truncates to a for a > 16, an absolute error of 1e-7 that would
// show in normalised densities).
func (e *expr) softplus(a *gorgonia.Node) *gorgonia.Node { return e.un(ops.Softplus, a) }

// logSumExp reduces a vector to log Σ exp(a).
func (e *expr) logSumExp(a *gorgonia.Node) *gorgonia.Node {
	return e.un(func(n *gorgonia.Node) (*gorgonia.Node, error) { return ops.LogSumExp(n, 0) }, a)
}

// lgamma is log Γ(a) elementwise.
func (e *expr) lgamma(a *gorgonia.Node) *gorgonia.Node { return e.un(ops.Lgamma, a) }

// mapConst applies f to a constant operand elementwise.
func mapConst(o operand, f func(float64) float64) operand {
	v := make([]float64, len(o.val))
	for i, x := range o.val {
		v[i] = f(x)
	}
	return operand{val: v, shape: o.shape}
}
