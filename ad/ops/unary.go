package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/mathext"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/scalar"
)

// unaryKind names a scalar function applied elementwise. Each kind knows the
// kind of its derivative, so gradients are again elementwise ops of this
// package and can be differentiated in turn.
type unaryKind uint8

const (
	kindLgamma unaryKind = iota
	kindDigamma
	kindTrigamma
	kindAsinh
	kindAsinhD1
	kindAsinhD2
	kindSinh
	kindCosh
	kindAtanh
	kindAtanhD1
	kindAtanhD2
	kindSoftplus
	kindSigmoid
	kindSigmoidD1
	kindLogSigmoid
	kindSigmoidNeg
	kindSigmoidNegD1
	kindLogBesselI0
	kindBesselRatio
	kindBesselRatioD1
	numKinds
)

// noDeriv marks a kind whose derivative is not provided.
const noDeriv = numKinds

// unaryFunc describes one elementwise function.
type unaryFunc struct {
	name  string
	f     func(float64) float64
	valid func(float64) bool // nil: every real is in the domain
	deriv unaryKind
}

var unaryFuncs = [numKinds]unaryFunc{
	kindLgamma:        {"lgamma", lgamma, notPole, kindDigamma},
	kindDigamma:       {"digamma", mathext.Digamma, notPole, kindTrigamma},
	kindTrigamma:      {"trigamma", trigamma, notPole, noDeriv},
	kindAsinh:         {"asinh", math.Asinh, nil, kindAsinhD1},
	kindAsinhD1:       {"asinh'", asinhD1, nil, kindAsinhD2},
	kindAsinhD2:       {"asinh''", asinhD2, nil, noDeriv},
	kindSinh:          {"sinh", math.Sinh, nil, kindCosh},
	kindCosh:          {"cosh", math.Cosh, nil, kindSinh},
	kindAtanh:         {"atanh", math.Atanh, insideUnit, kindAtanhD1},
	kindAtanhD1:       {"atanh'", atanhD1, insideUnit, kindAtanhD2},
	kindAtanhD2:       {"atanh''", atanhD2, insideUnit, noDeriv},
	kindSoftplus:      {"softplus", scalar.Softplus, nil, kindSigmoid},
	kindSigmoid:       {"sigmoid", scalar.Sigmoid, nil, kindSigmoidD1},
	kindSigmoidD1:     {"sigmoid'", sigmoidD1, nil, noDeriv},
	kindLogSigmoid:    {"logsigmoid", logSigmoid, nil, kindSigmoidNeg},
	kindSigmoidNeg:    {"sigmoid(-x)", sigmoidNeg, nil, kindSigmoidNegD1},
	kindSigmoidNegD1:  {"-sigmoid'", sigmoidNegD1, nil, noDeriv},
	kindLogBesselI0:   {"logI0", scalar.LogBesselI0, nil, kindBesselRatio},
	kindBesselRatio:   {"I1/I0", scalar.BesselI1OverI0, nil, kindBesselRatioD1},
	kindBesselRatioD1: {"(I1/I0)'", scalar.BesselI1OverI0Deriv, nil, noDeriv},
}

func lgamma(x float64) float64 { y, _ := math.Lgamma(x); return y }

// notPole excludes the poles of Γ at 0, −1, −2, ….
func notPole(x float64) bool { return !(x <= 0 && x == math.Floor(x)) }

// insideUnit is the domain of atanh: the open interval (−1, 1).
func insideUnit(x float64) bool { return math.Abs(x) < 1 || math.IsNaN(x) }

func asinhD1(x float64) float64 { return 1 / math.Hypot(1, x) }
func asinhD2(x float64) float64 { d := asinhD1(x); return -x * d * d * d }

// atanh' = 1/(1−x²), factored so that it stays accurate near ±1.
func atanhD1(x float64) float64 { return 1 / ((1 - x) * (1 + x)) }
func atanhD2(x float64) float64 { d := atanhD1(x); return 2 * x * d * d }

func sigmoidD1(x float64) float64    { return scalar.Sigmoid(x) * scalar.Sigmoid(-x) }
func logSigmoid(x float64) float64   { return -scalar.Softplus(-x) }
func sigmoidNeg(x float64) float64   { return scalar.Sigmoid(-x) }
func sigmoidNegD1(x float64) float64 { return -scalar.Sigmoid(x) * scalar.Sigmoid(-x) }

// applyUnary adds y = f_kind(x) to the graph.
func applyUnary(name string, kind unaryKind, x *gorgonia.Node) (*gorgonia.Node, error) {
	if err := checkNodes(name, x); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(unaryOp{kind: kind}, x)
}

// Lgamma returns log|Γ(x)| elementwise. Its gradient is the digamma function,
// whose gradient is the trigamma function. Non-positive integers, the poles of
// Γ, are a domain error.
func Lgamma(x *gorgonia.Node) (*gorgonia.Node, error) { return applyUnary("Lgamma", kindLgamma, x) }

// Digamma returns ψ(x) = d/dx log Γ(x) elementwise; its gradient is the
// trigamma function.
func Digamma(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyUnary("Digamma", kindDigamma, x)
}

// Asinh returns the inverse hyperbolic sine of x elementwise.
func Asinh(x *gorgonia.Node) (*gorgonia.Node, error) { return applyUnary("Asinh", kindAsinh, x) }

// Sinh returns the hyperbolic sine of x elementwise.
func Sinh(x *gorgonia.Node) (*gorgonia.Node, error) { return applyUnary("Sinh", kindSinh, x) }

// Atanh returns the inverse hyperbolic tangent of x elementwise. Elements
// outside the open interval (−1, 1) are a domain error.
func Atanh(x *gorgonia.Node) (*gorgonia.Node, error) { return applyUnary("Atanh", kindAtanh, x) }

// Softplus returns log(1+eˣ) elementwise, computed without overflow.
func Softplus(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyUnary("Softplus", kindSoftplus, x)
}

// LogSigmoid returns log σ(x) = −softplus(−x) elementwise, computed without
// overflow.
func LogSigmoid(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyUnary("LogSigmoid", kindLogSigmoid, x)
}

// LogBesselI0 returns log I₀(x) elementwise, the logarithm of the modified
// Bessel function of the first kind of order zero (the normaliser of the
// von Mises distribution), finite for every finite x. Its gradient is
// I₁(x)/I₀(x).
func LogBesselI0(x *gorgonia.Node) (*gorgonia.Node, error) {
	return applyUnary("LogBesselI0", kindLogBesselI0, x)
}

// elemMul multiplies two nodes of equal shape elementwise.
func elemMul(a, b *gorgonia.Node) (*gorgonia.Node, error) {
	if a.IsScalar() || b.IsScalar() {
		return gorgonia.Mul(a, b)
	}
	return gorgonia.HadamardProd(a, b)
}

// unaryOp is y = f(x) elementwise.
type unaryOp struct {
	matOp
	kind unaryKind
}

func (op unaryOp) Arity() int    { return 1 }
func (op unaryOp) Type() hm.Type { return hm.NewFnType(typeVar, typeVar) }
func (op unaryOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}
func (op unaryOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op unaryOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op unaryOp) Hashcode() uint32                               { return hashOf(op) }
func (op unaryOp) String() string                                 { return unaryFuncs[op.kind].name }

func (op unaryOp) DiffWRT(int) []bool { return []bool{unaryFuncs[op.kind].deriv != noDeriv} }

func (op unaryOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	d := unaryFuncs[op.kind].deriv
	if d == noDeriv {
		return nil, fmt.Errorf("ops: %v has no derivative", op)
	}
	xbar, err := gorgonia.ApplyOp(scaledOp{kind: d}, in[0], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{xbar}, nil
}

// Lower implements ad.Lowerer.
func (op unaryOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want 1", op, len(in))
	}
	return unaryKernel{fn: unaryFuncs[op.kind], n: in[0].TotalSize()}, nil
}

type unaryKernel struct {
	fn unaryFunc
	n  int
}

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k unaryKernel) WritesFullOutput() bool { return true }

func (k unaryKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 1 || len(in[0]) != k.n || len(out) != k.n {
		return errBufferSize
	}
	x := in[0]
	for i, v := range x {
		if k.fn.valid != nil && !k.fn.valid(v) {
			return ErrDomain
		}
		out[i] = k.fn.f(v)
	}
	return nil
}

// scaledOp is y = g ⊙ f(x), the form every elementwise gradient takes. Fusing
// the product keeps a compiled gradient to one kernel per op.
type scaledOp struct {
	matOp
	kind unaryKind
}

func (op scaledOp) Arity() int    { return 2 }
func (op scaledOp) Type() hm.Type { return hm.NewFnType(typeVar, typeVar, typeVar) }
func (op scaledOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if s[0].TotalSize() != s[1].TotalSize() {
		return nil, fmt.Errorf("ops: %v: shapes %v and %v differ", op, s[0], s[1])
	}
	return s[0].Clone(), nil
}
func (op scaledOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op scaledOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op scaledOp) Hashcode() uint32                               { return hashOf(op) }
func (op scaledOp) String() string                                 { return "g*" + unaryFuncs[op.kind].name }

func (op scaledOp) DiffWRT(int) []bool {
	return []bool{unaryFuncs[op.kind].deriv != noDeriv, true}
}

// SymDiff: for y = g⊙f(x), x̄ = ȳ⊙g⊙f'(x) and ḡ = ȳ⊙f(x).
func (op scaledOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, g := in[0], in[1]
	gbar, err := gorgonia.ApplyOp(scaledOp{kind: op.kind}, x, grad)
	if err != nil {
		return nil, err
	}
	var xbar *gorgonia.Node
	if d := unaryFuncs[op.kind].deriv; d != noDeriv {
		gg, err := elemMul(grad, g)
		if err != nil {
			return nil, err
		}
		if xbar, err = gorgonia.ApplyOp(scaledOp{kind: d}, x, gg); err != nil {
			return nil, err
		}
	}
	return gorgonia.Nodes{xbar, gbar}, nil
}

// Lower implements ad.Lowerer.
func (op scaledOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 || in[0].TotalSize() != in[1].TotalSize() {
		return nil, fmt.Errorf("ops: %v: want two inputs of equal size, got %v", op, in)
	}
	return scaledKernel{fn: unaryFuncs[op.kind], n: in[0].TotalSize()}, nil
}

type scaledKernel struct {
	fn unaryFunc
	n  int
}

func (k scaledKernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 2 || len(in[0]) != k.n || len(in[1]) != k.n || len(out) != k.n {
		return errBufferSize
	}
	x, g := in[0], in[1]
	for i, v := range x {
		if k.fn.valid != nil && !k.fn.valid(v) {
			return ErrDomain
		}
		out[i] = g[i] * k.fn.f(v)
	}
	return nil
}
