package ad

import "math"

// unaryFunc applies one elementwise op to a whole buffer. Choosing the
// function once at compile time keeps the per-element loop free of
// dispatch: the only indirect call is per instruction.
type unaryFunc func(out, in []float64)

// unaryFuncs is the one statement of gorgonia's elementwise unary ops that
// ad lowers, by gorgonia's name (elemUnaryOp.String): each is its scalar
// function mapped over a buffer. The scalar functions follow gorgonia's
// float64 definitions so that compiled and interpreted graphs agree to
// rounding. Lone instructions and fused loops (fUnary) run these; the
// fused codes fNeg and fSquare map the same neg and square.
var unaryFuncs = map[string]unaryFunc{
	"abs":      func(out, in []float64) { mapUnary(out, in, math.Abs) },
	"sign":     func(out, in []float64) { mapUnary(out, in, sign) },
	"ceil":     func(out, in []float64) { mapUnary(out, in, math.Ceil) },
	"floor":    func(out, in []float64) { mapUnary(out, in, math.Floor) },
	"sin":      func(out, in []float64) { mapUnary(out, in, math.Sin) },
	"cos":      func(out, in []float64) { mapUnary(out, in, math.Cos) },
	"exp":      func(out, in []float64) { mapUnary(out, in, math.Exp) },
	"ln":       func(out, in []float64) { mapUnary(out, in, math.Log) },
	"log2":     func(out, in []float64) { mapUnary(out, in, math.Log2) },
	"neg":      func(out, in []float64) { mapUnary(out, in, neg) },
	"square":   func(out, in []float64) { mapUnary(out, in, square) },
	"sqrt":     func(out, in []float64) { mapUnary(out, in, math.Sqrt) },
	"inv":      func(out, in []float64) { mapUnary(out, in, inv) },
	"invSqrt":  func(out, in []float64) { mapUnary(out, in, invSqrt) },
	"cube":     func(out, in []float64) { mapUnary(out, in, cube) },
	"tanh":     func(out, in []float64) { mapUnary(out, in, math.Tanh) },
	"sigmoid":  func(out, in []float64) { mapUnary(out, in, sigmoid) },
	"log1p":    func(out, in []float64) { mapUnary(out, in, math.Log1p) },
	"expm1":    func(out, in []float64) { mapUnary(out, in, math.Expm1) },
	"softplus": func(out, in []float64) { mapUnary(out, in, softplus) },
}

// mapUnary sets out[i] = f(in[i]). It is inlined into each entry of
// unaryFuncs, where f is a known function, so that the loop calls f
// directly (and inlines the small ones) rather than through a pointer.
func mapUnary(out, in []float64, f func(float64) float64) {
	for i, v := range in[:len(out)] {
		out[i] = f(v)
	}
}

// sign is gorgonia's: −1 when the sign bit is set (−0 included), else 1.
func sign(x float64) float64 {
	if math.Signbit(x) {
		return -1
	}
	return 1
}

func neg(x float64) float64     { return -x }
func square(x float64) float64  { return x * x }
func inv(x float64) float64     { return 1 / x }
func invSqrt(x float64) float64 { return 1 / math.Sqrt(x) }
func cube(x float64) float64    { return x * x * x }

// sigmoid matches gorgonia's cut-offs, which avoid overflow in exp(−x).
func sigmoid(x float64) float64 {
	if x < -709 {
		return 0
	}
	if x > 19 {
		return 1
	}
	return 1 / (1 + math.Exp(-x))
}

// softplus matches gorgonia's cut-offs: beyond them log1p(exp(x)) is 0 or x
// to double precision.
func softplus(x float64) float64 {
	if x < -708 {
		return 0
	}
	if x > 16 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// binaryOp is one of gorgonia's elementwise binary ops: its code and, for
// the ops without loops of their own (fGeneric), its scalar function.
type binaryOp struct {
	code fcode
	f    func(x, y float64) float64
}

// binaryOps is the one statement of the elementwise binary ops ad lowers,
// by gorgonia's symbol. Every path evaluates them through scalarOp and
// binaryLoop: lone instructions, fused loops and constant folding.
var binaryOps = map[string]binaryOp{
	"+":  {code: fAdd},
	"-":  {code: fSub},
	"⊙":  {code: fMul},
	"÷":  {code: fDiv},
	"^":  {fGeneric, math.Pow},
	"<":  {fGeneric, func(x, y float64) float64 { return b2f(x < y) }},
	">":  {fGeneric, func(x, y float64) float64 { return b2f(x > y) }},
	"<=": {fGeneric, func(x, y float64) float64 { return b2f(x <= y) }},
	">=": {fGeneric, func(x, y float64) float64 { return b2f(x >= y) }},
	"==": {fGeneric, func(x, y float64) float64 { return b2f(x == y) }},
	"!=": {fGeneric, func(x, y float64) float64 { return b2f(x != y) }},
}

// b2f encodes a comparison as gorgonia does for same-type results: 1 or 0.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// arith is x code y for the four arithmetic codes (fDiv for any other).
func arith(code fcode, x, y float64) float64 {
	switch code {
	case fAdd:
		return x + y
	case fSub:
		return x - y
	case fMul:
		return x * y
	}
	return x / y
}

// scalarOp applies a binary op to two numbers.
func scalarOp(op binaryOp, x, y float64) float64 {
	if op.code == fGeneric {
		return op.f(x, y)
	}
	return arith(op.code, x, y)
}

// binaryLoop sets out = a op b elementwise. a is a scalar (one element)
// when as, b when bs. The arithmetic ops run arithVV, arithVS or arithSV,
// whose loops fused instructions call directly (see setDispatch); the
// others pay an indirect call per element, acceptable for the rare ops
// (pow, comparisons) that are generic.
func binaryLoop(op binaryOp, out, a, b []float64, as, bs bool) {
	switch {
	case as && bs:
		v := scalarOp(op, a[0], b[0])
		for i := range out {
			out[i] = v
		}
	case op.code != fGeneric:
		switch {
		case as:
			arithSV(op.code, out, a[0], b)
		case bs:
			arithVS(op.code, out, a, b[0])
		default:
			arithVV(op.code, out, a, b)
		}
	case as:
		x, f := a[0], op.f
		for i, v := range b[:len(out)] {
			out[i] = f(x, v)
		}
	case bs:
		y, f := b[0], op.f
		for i, v := range a[:len(out)] {
			out[i] = f(v, y)
		}
	default:
		a, b, f := a[:len(out)], b[:len(out)], op.f
		for i := range out {
			out[i] = f(a[i], b[i])
		}
	}
}

// arithVV sets out = a code b elementwise for an arithmetic code (fAdd,
// fSub, fMul, fDiv), vectors of len(out).
func arithVV(code fcode, out, a, b []float64) {
	a, b = a[:len(out)], b[:len(out)] // lets the compiler drop bounds checks
	switch code {
	case fAdd:
		for i := range out {
			out[i] = a[i] + b[i]
		}
	case fSub:
		for i := range out {
			out[i] = a[i] - b[i]
		}
	case fMul:
		for i := range out {
			out[i] = a[i] * b[i]
		}
	default:
		for i := range out {
			out[i] = a[i] / b[i]
		}
	}
}

// arithSV sets out = x code b elementwise for an arithmetic code.
func arithSV(code fcode, out []float64, x float64, b []float64) {
	b = b[:len(out)]
	switch code {
	case fAdd:
		for i, v := range b {
			out[i] = x + v
		}
	case fSub:
		for i, v := range b {
			out[i] = x - v
		}
	case fMul:
		for i, v := range b {
			out[i] = x * v
		}
	default:
		for i, v := range b {
			out[i] = x / v
		}
	}
}

// arithVS sets out = a code y elementwise for an arithmetic code.
// Addition and multiplication commute and v − y is −y + v to the bit, so
// only division has a loop of its own.
func arithVS(code fcode, out, a []float64, y float64) {
	switch code {
	case fAdd, fMul:
		arithSV(code, out, y, a)
	case fSub:
		arithSV(fAdd, out, -y, a)
	default:
		a = a[:len(out)]
		for i, v := range a {
			out[i] = v / y
		}
	}
}
