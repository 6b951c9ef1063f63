package ad

import "math"

// unaryFunc applies one elementwise op to a whole buffer. Choosing the
// function once at compile time keeps the per-element loop free of
// dispatch: the only indirect call is per instruction.
type unaryFunc func(out, in []float64)

// binaryFunc applies one elementwise binary op. Which of the three variants
// (tensor–tensor, scalar–tensor, tensor–scalar) runs is fixed at compile time.
type binaryFunc func(out, a, b []float64)

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

// binaryFuncs holds, for each gorgonia binary operator symbol, the
// tensor–tensor, scalar–tensor and tensor–scalar variants.
var binaryFuncs = map[string][3]binaryFunc{
	"+": {
		func(out, a, b []float64) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] + b[i]
			}
		},
		func(out, a, b []float64) {
			s, b := a[0], b[:len(out)]
			for i := range out {
				out[i] = s + b[i]
			}
		},
		func(out, a, b []float64) {
			a, s := a[:len(out)], b[0]
			for i := range out {
				out[i] = a[i] + s
			}
		},
	},
	"-": {
		func(out, a, b []float64) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] - b[i]
			}
		},
		func(out, a, b []float64) {
			s, b := a[0], b[:len(out)]
			for i := range out {
				out[i] = s - b[i]
			}
		},
		func(out, a, b []float64) {
			a, s := a[:len(out)], b[0]
			for i := range out {
				out[i] = a[i] - s
			}
		},
	},
	"⊙": {
		func(out, a, b []float64) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] * b[i]
			}
		},
		func(out, a, b []float64) {
			s, b := a[0], b[:len(out)]
			for i := range out {
				out[i] = s * b[i]
			}
		},
		func(out, a, b []float64) {
			a, s := a[:len(out)], b[0]
			for i := range out {
				out[i] = a[i] * s
			}
		},
	},
	"÷": {
		func(out, a, b []float64) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = a[i] / b[i]
			}
		},
		func(out, a, b []float64) {
			s, b := a[0], b[:len(out)]
			for i := range out {
				out[i] = s / b[i]
			}
		},
		func(out, a, b []float64) {
			a, s := a[:len(out)], b[0]
			for i := range out {
				out[i] = a[i] / s
			}
		},
	},
	"^":  genericBinary(scalarBinary["^"]),
	"<":  genericBinary(scalarBinary["<"]),
	">":  genericBinary(scalarBinary[">"]),
	"<=": genericBinary(scalarBinary["<="]),
	">=": genericBinary(scalarBinary[">="]),
	"==": genericBinary(scalarBinary["=="]),
	"!=": genericBinary(scalarBinary["!="]),
}

// scalarBinary holds the scalar functions of the binary ops without a
// dedicated loop, for fused kernels (fuse.go) and genericBinary.
var scalarBinary = map[string]func(x, y float64) float64{
	"^":  math.Pow,
	"<":  func(x, y float64) float64 { return b2f(x < y) },
	">":  func(x, y float64) float64 { return b2f(x > y) },
	"<=": func(x, y float64) float64 { return b2f(x <= y) },
	">=": func(x, y float64) float64 { return b2f(x >= y) },
	"==": func(x, y float64) float64 { return b2f(x == y) },
	"!=": func(x, y float64) float64 { return b2f(x != y) },
}

// b2f encodes a comparison as gorgonia does for same-type results: 1 or 0.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// genericBinary builds the three variants of a binary op from its scalar
// function. It pays an indirect call per element, acceptable for the rare
// ops (pow, comparisons) that use it.
func genericBinary(f func(x, y float64) float64) [3]binaryFunc {
	return [3]binaryFunc{
		func(out, a, b []float64) {
			a, b = a[:len(out)], b[:len(out)]
			for i := range out {
				out[i] = f(a[i], b[i])
			}
		},
		func(out, a, b []float64) {
			s, b := a[0], b[:len(out)]
			for i := range out {
				out[i] = f(s, b[i])
			}
		},
		func(out, a, b []float64) {
			a, s := a[:len(out)], b[0]
			for i := range out {
				out[i] = f(a[i], s)
			}
		},
	}
}
