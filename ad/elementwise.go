package ad

import "math"

// unaryFunc applies one elementwise op to a whole buffer. Choosing the
// function once at compile time keeps the per-element loop free of
// dispatch: the only indirect call is per instruction.
type unaryFunc func(out, in []float64)

// unaryFuncs maps gorgonia's unary op names (elemUnaryOp.String) to kernels.
// The formulas follow gorgonia's float64 scalar definitions so that compiled
// and interpreted graphs agree to rounding.
var unaryFuncs = map[string]unaryFunc{
	"abs": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Abs(v)
		}
	},
	"sign": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			if math.Signbit(v) {
				out[i] = -1
			} else {
				out[i] = 1
			}
		}
	},
	"ceil": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Ceil(v)
		}
	},
	"floor": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Floor(v)
		}
	},
	"sin": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Sin(v)
		}
	},
	"cos": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Cos(v)
		}
	},
	"exp": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Exp(v)
		}
	},
	"ln": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Log(v)
		}
	},
	"log2": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Log2(v)
		}
	},
	"neg": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = -v
		}
	},
	"square": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = v * v
		}
	},
	"sqrt": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Sqrt(v)
		}
	},
	"inv": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = 1 / v
		}
	},
	"invSqrt": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = 1 / math.Sqrt(v)
		}
	},
	"cube": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = v * v * v
		}
	},
	"tanh": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Tanh(v)
		}
	},
	"sigmoid": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = sigmoid(v)
		}
	},
	"log1p": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Log1p(v)
		}
	},
	"expm1": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = math.Expm1(v)
		}
	},
	"softplus": func(out, in []float64) {
		for i, v := range in[:len(out)] {
			out[i] = softplus(v)
		}
	},
}

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
// when as, b when bs. The arithmetic ops have loops of their own, chosen
// once per call; the others pay an indirect call per element, acceptable
// for the rare ops (pow, comparisons) that are generic.
func binaryLoop(op binaryOp, out, a, b []float64, as, bs bool) {
	switch {
	case as && bs:
		v := scalarOp(op, a[0], b[0])
		for i := range out {
			out[i] = v
		}
	case as:
		x, b := a[0], b[:len(out)]
		switch op.code {
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
		case fDiv:
			for i, v := range b {
				out[i] = x / v
			}
		default:
			f := op.f
			for i, v := range b {
				out[i] = f(x, v)
			}
		}
	case bs:
		a, y := a[:len(out)], b[0]
		switch op.code {
		case fAdd:
			for i, v := range a {
				out[i] = v + y
			}
		case fSub:
			for i, v := range a {
				out[i] = v - y
			}
		case fMul:
			for i, v := range a {
				out[i] = v * y
			}
		case fDiv:
			for i, v := range a {
				out[i] = v / y
			}
		default:
			f := op.f
			for i, v := range a {
				out[i] = f(v, y)
			}
		}
	default:
		a, b = a[:len(out)], b[:len(out)] // lets the compiler drop bounds checks
		switch op.code {
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
		case fDiv:
			for i := range out {
				out[i] = a[i] / b[i]
			}
		default:
			f := op.f
			for i := range out {
				out[i] = f(a[i], b[i])
			}
		}
	}
}
