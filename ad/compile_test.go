package ad

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func vec(g *G.ExprGraph, name string, n int) *G.Node {
	return G.NewVector(g, tensor.Float64, G.WithShape(n), G.WithName(name))
}

func mat(g *G.ExprGraph, name string, r, c int) *G.Node {
	return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name))
}

func scalar(g *G.ExprGraph, name string) *G.Node {
	return G.NewScalar(g, tensor.Float64, G.WithName(name))
}

// sumAll adds up the totals of several nodes into one scalar.
func sumAll(ns ...*G.Node) *G.Node {
	var tot *G.Node
	for _, n := range ns {
		if !n.IsScalar() {
			n = G.Must(G.Sum(n))
		}
		if tot == nil {
			tot = n
		} else {
			tot = G.Must(G.Add(tot, n))
		}
	}
	return tot
}

// weighted returns Σ w⊙n for fixed pseudo-random weights w, so that every
// element of n gets a distinct gradient.
func weighted(g *G.ExprGraph, n *G.Node, seed uint64) *G.Node {
	w := constMatrix(g, "w", seed, n.Shape()...)
	return G.Must(G.Sum(G.Must(G.HadamardProd(n, w))))
}

var graphCases = []struct {
	name  string
	build graphFunc
	gen   func(*rand.Rand, int) []float64
	bug   knownBug
}{
	{"unary-chain", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 5)
		terms := []*G.Node{
			G.Must(G.Exp(x)), G.Must(G.Log1p(G.Must(G.Square(x)))), G.Must(G.Tanh(x)),
			G.Must(G.Sigmoid(x)), G.Must(G.Softplus(x)), G.Must(G.Sin(x)), G.Must(G.Cos(x)),
			G.Must(G.Neg(x)), G.Must(G.Cube(x)), G.Must(G.Expm1(x)),
			G.Must(G.Sqrt(G.Must(G.Add(G.Must(G.Square(x)), G.NewConstant(1.0))))),
			G.Must(G.Inverse(G.Must(G.Add(G.Must(G.Square(x)), G.NewConstant(2.0))))),
			G.Must(G.Log(G.Must(G.Add(G.Must(G.Abs(x)), G.NewConstant(1.0))))),
			// InverseSqrt and Log2 are in unary-gorgonia-bugs.
		}
		var ws []*G.Node
		for i, t := range terms {
			ws = append(ws, weighted(g, t, uint64(i+10)))
		}
		return sumAll(ws...), []*G.Node{x}
	}, normals, noBug},

	{"unary-gorgonia-bugs", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 3)
		return sumAll(weighted(g, G.Must(G.InverseSqrt(x)), 1), weighted(g, G.Must(G.Log2(x)), 2)), []*G.Node{x}
	}, positives, symbolicBug},

	{"scalar-ops", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		a, b := scalar(g, "a"), scalar(g, "b")
		t1 := G.Must(G.Mul(a, b))
		t2 := G.Must(G.Div(a, b))
		t3 := G.Must(G.Sub(a, G.Must(G.Pow(b, G.NewConstant(3.0)))))
		t4 := G.Must(G.Pow(a, b))
		t5 := G.Must(G.Mul(G.NewConstant(2.5), G.Must(G.Exp(G.Must(G.Neg(a))))))
		return sumAll(t1, t2, t3, t4, t5), []*G.Node{a, b}
	}, positives, noBug},

	{"scalar-tensor", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x, s := vec(g, "x", 4), scalar(g, "s")
		t1 := weighted(g, G.Must(G.Mul(s, x)), 1)
		t2 := weighted(g, G.Must(G.Sub(x, s)), 2)
		t3 := weighted(g, G.Must(G.Div(x, s)), 3)
		t4 := weighted(g, G.Must(G.Div(s, G.Must(G.Add(G.Must(G.Square(x)), G.NewConstant(1.0))))), 4)
		t5 := weighted(g, G.Must(G.Sub(s, x)), 5)
		t6 := weighted(g, G.Must(G.Add(s, x)), 6)
		return sumAll(t1, t2, t3, t4, t5, t6), []*G.Node{x, s}
	}, positives, noBug},

	{"pow-tensor", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 4)
		return weighted(g, G.Must(G.Pow(x, G.NewConstant(2.5))), 1), []*G.Node{x}
	}, positives, noBug},

	{"broadcast", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m, r, c := mat(g, "m", 3, 4), vec(g, "r", 4), vec(g, "c", 3)
		rr := G.Must(G.Reshape(r, tensor.Shape{1, 4}))
		cc := G.Must(G.Reshape(c, tensor.Shape{3, 1}))
		t1 := weighted(g, G.Must(G.BroadcastAdd(m, rr, nil, []byte{0})), 1)
		t2 := weighted(g, G.Must(G.BroadcastHadamardProd(m, cc, nil, []byte{1})), 2)
		t3 := weighted(g, G.Must(G.BroadcastSub(rr, m, []byte{0}, nil)), 3)
		t4 := weighted(g, G.Must(G.BroadcastHadamardDiv(m, G.Must(G.Add(G.Must(G.Square(cc)), G.NewConstant(1.0))), nil, []byte{1})), 4)
		return sumAll(t1, t2, t3, t4), []*G.Node{m, r, c}
	}, normals, noBug},

	{"matvec-matmul", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		a, b, v := mat(g, "a", 3, 4), mat(g, "b", 4, 2), vec(g, "v", 4)
		d := constMatrix(g, "d", 9, 3, 4)
		t1 := weighted(g, G.Must(G.Mul(a, b)), 1)                                          // matmul
		t2 := weighted(g, G.Must(G.Mul(a, v)), 2)                                          // matvec
		t3 := weighted(g, G.Must(G.Mul(G.Must(G.Transpose(a)), G.Must(G.Mul(a, b)))), 3)   // Aᵀ(AB)
		t4 := weighted(g, G.Must(G.Mul(d, v)), 4)                                          // data matrix
		t5 := G.Must(G.Mul(v, G.Must(G.Mul(G.Must(G.Transpose(d)), G.Must(G.Mul(a, v)))))) // vec·vec
		return sumAll(t1, t2, t3, t4, t5), []*G.Node{a, b, v}
	}, normals, noBug},

	// Separate from the case above: gorgonia v0.9.18's Grad fails to add up
	// gradient terms when an outer product shares operands with a matmul, and
	// it swaps the two gradients of an outer product (wrong shapes unless
	// both vectors have the same length, which Compile reports as an error).
	{"outer", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		u, v := vec(g, "u", 3), vec(g, "v", 3)
		return weighted(g, G.Must(G.OuterProd(u, v)), 6), []*G.Node{u, v}
	}, normals, symbolicBug},
	{"outer-as-matmul", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		u, v := vec(g, "u", 4), vec(g, "v", 3)
		o := G.Must(G.Mul(G.Must(G.Reshape(u, tensor.Shape{4, 1})), G.Must(G.Reshape(v, tensor.Shape{1, 3}))))
		return weighted(g, o, 6), []*G.Node{u, v}
	}, normals, noBug},
	{"dot", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		u, v := vec(g, "u", 4), vec(g, "v", 4)
		return G.Must(G.Mul(G.Must(G.Exp(u)), v)), []*G.Node{u, v}
	}, normals, noBug},

	// Large enough that gonum's Dgemm would go parallel (see also
	// TestGemmMatchesBLAS); one scalar parameter keeps finite differences cheap.
	{"matmul-large", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		sc := scalar(g, "s")
		a := G.Must(G.Mul(sc, constMatrix(g, "a", 1, 130, 3)))
		b := constMatrix(g, "b", 3, 3, 140)
		ab := G.Must(G.Mul(a, b)) // (130, 140)
		return weighted(g, G.Must(G.Tanh(ab)), 1), []*G.Node{sc}
	}, normals, noBug},

	{"batched-matmul", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		a := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 3, 4), G.WithName("a"))
		b := constMatrix(g, "b", 3, 2, 4, 2)
		return weighted(g, G.Must(G.BatchedMatMul(a, b)), 1), []*G.Node{a}
	}, normals, noBug},

	{"sums-along-axes", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m := mat(g, "m", 3, 4)
		t3 := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 3, 2), G.WithName("t3"))
		s0 := weighted(g, G.Must(G.Square(G.Must(G.Sum(m, 0)))), 1)
		s1 := weighted(g, G.Must(G.Square(G.Must(G.Sum(m, 1)))), 2)
		mean := G.Must(G.Square(G.Must(G.Mean(m))))
		mean1 := weighted(g, G.Must(G.Square(G.Must(G.Mean(m, 1)))), 3)
		s02 := weighted(g, G.Must(G.Square(G.Must(G.Sum(t3, 0, 2)))), 4)
		s2 := weighted(g, G.Must(G.Square(G.Must(G.Sum(t3, 2)))), 5)
		return sumAll(s0, s1, mean, mean1, s02, s2), []*G.Node{m, t3}
	}, normals, noBug},

	{"slice-concat-transpose-reshape", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m, v := mat(g, "m", 4, 3), vec(g, "v", 6)
		rows := G.Must(G.Slice(m, G.S(1, 3)))    // rows 1..2
		col := G.Must(G.Slice(m, nil, G.S(2)))   // column 2
		el := G.Must(G.Slice(m, G.S(3), G.S(0))) // element (3,0)
		step := G.Must(G.Slice(v, G.S(0, 6, 2))) // every other element
		cat0 := G.Must(G.Concat(0, rows, G.Must(G.Reshape(v, tensor.Shape{2, 3}))))
		tr := G.Must(G.Transpose(m))
		rs := G.Must(G.Reshape(tr, tensor.Shape{2, 6}))
		return sumAll(
			weighted(g, G.Must(G.Square(rows)), 1),
			weighted(g, G.Must(G.Exp(col)), 2),
			G.Must(G.Square(el)),
			weighted(g, G.Must(G.Cube(step)), 4),
			weighted(g, G.Must(G.Square(cat0)), 5),
			weighted(g, G.Must(G.Square(tr)), 6),
			weighted(g, G.Must(G.Tanh(rs)), 7),
		), []*G.Node{m, v}
	}, normals, noBug},

	{"concat-axis1", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m, c := mat(g, "m", 4, 3), mat(g, "c", 4, 2)
		cat := G.Must(G.Concat(1, m, c, m))
		return weighted(g, G.Must(G.Square(cat)), 1), []*G.Node{m, c}
	}, normals, noBug},

	{"logistic", logisticGraph(40, 5), normals, noBug},

	{"by-indices", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m, v := mat(g, "m", 3, 4), vec(g, "v", 5)
		rows := indexNode(g, "rows", 2, 0, 2, 2)
		r := G.Must(G.ByIndices(m, rows, 0)) // (4, 4), rows repeat
		e := G.Must(G.ByIndices(v, rows, 0)) // (4)
		return sumAll(weighted(g, G.Must(G.Square(r)), 1), weighted(g, G.Must(G.Cube(e)), 3)), []*G.Node{m, v}
	}, normals, noBug},

	{"by-indices-axis1", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m := mat(g, "m", 3, 4)
		c := G.Must(G.ByIndices(m, indexNode(g, "cols", 3, 3, 1), 1)) // (3, 3)
		return weighted(g, G.Must(G.Exp(c)), 2), []*G.Node{m}
	}, normals, tapeBug},

	{"softmax", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		v, m := vec(g, "v", 4), mat(g, "m", 3, 4)
		return sumAll(
			weighted(g, G.Must(G.SoftMax(v)), 1),
			weighted(g, G.Must(G.LogSoftMax(v)), 2),
			weighted(g, G.Must(G.SoftMax(m)), 3),
			weighted(g, G.Must(G.LogSoftMax(m, 0)), 4),
			weighted(g, G.Must(G.SoftMax(m, 0)), 5),
		), []*G.Node{v, m}
	}, normals, noBug},

	{"max", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m := mat(g, "m", 3, 4)
		return sumAll(G.Must(G.Max(m)), weighted(g, G.Must(G.Square(m)), 1)), []*G.Node{m}
	}, normals, noBug},
}

// logisticGraph is a Bernoulli-logit regression log-likelihood with a
// standard normal prior on the coefficients and fixed synthetic data.
func logisticGraph(n, d int) graphFunc {
	return func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		rng := rand.New(rand.NewPCG(11, 12))
		xs := make([]float64, n*d)
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		ys := make([]float64, n)
		for i := range ys {
			if rng.Float64() < 0.5 {
				ys[i] = 1
			}
		}
		X := dataNode(g, "X", xs, n, d)
		y := dataNode(g, "y", ys, n)
		beta := vec(g, "beta", d)
		alpha := scalar(g, "alpha")
		eta := G.Must(G.Add(G.Must(G.Mul(X, beta)), alpha))
		ll := G.Must(G.Sum(G.Must(G.Sub(G.Must(G.HadamardProd(y, eta)), G.Must(G.Softplus(eta))))))
		prior := G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(beta))))))
		return G.Must(G.Add(ll, prior)), []*G.Node{beta, alpha}
	}
}

func TestCompileMatchesTapeAndFiniteDifferences(t *testing.T) {
	for _, tc := range graphCases {
		t.Run(tc.name, func(t *testing.T) {
			checkAgainstReferences(t, tc.build, tc.gen, tc.bug)
		})
	}
}

// TestBuiltinsLowerNatively checks that none of the graphs above needs the
// slow path: gorgonia.Grad's output for these ops is covered natively.
func TestBuiltinsLowerNatively(t *testing.T) {
	for _, tc := range graphCases {
		p := compileFunc(t, tc.build)
		if fb := p.Fallbacks(); len(fb) != 0 {
			t.Errorf("%s: fallbacks %v", tc.name, fb)
		}
	}
}

// indexNode is an integer index vector, as gorgonia.ByIndices takes.
func indexNode(g *G.ExprGraph, name string, idx ...int) *G.Node {
	return G.NewVector(g, tensor.Int, G.WithShape(len(idx)), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(len(idx)), tensor.WithBacking(idx))))
}
