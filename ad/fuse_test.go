package ad

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// withoutFusion compiles one instruction per node, the reference that
// fused programs are compared with.
func withoutFusion() Option { return func(c *config) { c.noFuse = true } }

// fuseCases are graphs aimed at the fusion rewrites, checked besides every
// graph of graphCases.
var fuseCases = []struct {
	name  string
	build graphFunc
	gen   func(*rand.Rand, int) []float64
}{
	// Σx²: square and sum in one loop; the gradient's two products with
	// uniform constants, the second merged into the first.
	{"gauss", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 21)
		sq := G.Must(G.Sum(G.Must(G.Square(x))))
		return G.Must(G.Sub(G.Must(G.Mul(G.NewConstant(-0.5), sq)), G.NewConstant(1.5))), []*G.Node{x}
	}, normals},
	// Σx² whose squares are read again, of an odd length (the paired
	// loop's tail), and Σx² scaled by a scalar computed from another
	// input: the gradient's product joins the square's pass, storing the
	// squares in the first graph and reading a computed scale in the second.
	{"gauss-squares-read", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 7)
		sq := G.Must(G.Square(x))
		w := constMatrix(g, "w", 1, 7)
		return G.Must(G.Add(G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(sq)))),
			G.Must(G.Sum(G.Must(G.HadamardProd(sq, G.Must(G.Reshape(w, tensor.Shape{7})))))))), []*G.Node{x}
	}, normals},
	{"gauss-scaled", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x, s := vec(g, "x", 9), scalar(g, "s")
		ss := G.Must(G.Sum(G.Must(G.Square(x))))
		return G.Must(G.Sub(G.Must(G.Mul(G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Exp(s)))), ss)), s)), []*G.Node{x, s}
	}, normals},
	// A normal likelihood with a location and a log-scale: broadcast
	// scalars, a data vector, products and sums along a chain.
	{"normal-loc-scale", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		mu, logSigma := scalar(g, "mu"), scalar(g, "logSigma")
		y := constMatrix(g, "y", 3, 13)
		sigma := G.Must(G.Exp(logSigma))
		z := G.Must(G.Div(G.Must(G.Sub(y, mu)), sigma))
		ll := G.Must(G.Sub(G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(z)))))),
			G.Must(G.Mul(G.NewConstant(13.0), logSigma))))
		return G.Must(G.Add(ll, G.Must(G.Neg(G.Must(G.Square(mu)))))), []*G.Node{mu, logSigma}
	}, normals},
	// Products with uniform and non-uniform constant vectors, a dot
	// product written as a sum of a product, a product with a scalar that
	// is also read elsewhere (no merge), and a mean (broadcast gathers).
	{"constants", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 6)
		u := G.NewConstant(tensor.New(tensor.WithShape(6), tensor.WithBacking([]float64{3, 3, 3, 3, 3, 3})))
		w := constMatrix(g, "w", 5, 6)
		p := G.Must(G.HadamardProd(x, u))
		q := G.Must(G.Mul(p, G.NewConstant(0.25)))
		t := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Tanh(x)), w))))
		m := G.Must(G.Square(G.Must(G.Mean(G.Must(G.HadamardProd(q, x))))))
		return sumAll(G.Must(G.Sum(G.Must(G.Square(q)))), G.Must(G.Sum(p)), t, m), []*G.Node{x}
	}, normals},
	// A constant scalar times a vector computed after a matrix product,
	// the scalar on the left: its one-value slot must not be sliced to
	// the vector's length (Σ ½ log x of a simplex x panicked).
	{"scalar-left-product", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		y := vec(g, "y", 2)
		lse := G.Must(G.Log1p(G.Must(G.Sum(G.Must(G.Exp(y))))))
		embed := G.NewConstant(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{1, 0, 0, 1, 0, 0})))
		head := G.Must(G.Mul(embed, G.Must(G.Exp(G.Must(G.Sub(y, lse))))))
		last := G.NewConstant(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0, 0, 1})))
		x := G.Must(G.Add(head, G.Must(G.HadamardProd(G.Must(G.Exp(G.Must(G.Neg(lse)))), last))))
		return G.Must(G.Sum(G.Must(G.HadamardProd(G.NewConstant(0.5), G.Must(G.Log(x)))))), []*G.Node{y}
	}, normals},
	// Products chained with scalars that are computed between them: the
	// merged product must not read the scalar before it exists.
	{"scale-after-scalar", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x, s := vec(g, "x", 5), scalar(g, "s")
		a := G.Must(G.HadamardProd(x, constMatrix(g, "w", 2, 5)))
		e := G.Must(G.Exp(G.Must(G.Sum(G.Must(G.Square(x))))))
		b := G.Must(G.Mul(a, G.Must(G.Mul(s, G.Must(G.Neg(e))))))
		return G.Must(G.Sum(G.Must(G.Sin(b)))), []*G.Node{x, s}
	}, func(rng *rand.Rand, dim int) []float64 {
		x := normals(rng, dim)
		for i := range x {
			x[i] *= 0.3
		}
		return x
	}},
	// softplus and sigmoid of the same vector across their cut-offs.
	{"softplus-sigmoid", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 7)
		k := G.NewConstant(tensor.New(tensor.WithShape(7), tensor.WithBacking([]float64{1, 30, -30, 800, -800, 16.5, -708.5})))
		e := G.Must(G.HadamardProd(x, k))
		return G.Must(G.Sum(G.Must(G.Sub(G.Must(G.HadamardProd(x, e)), G.Must(G.Softplus(e)))))), []*G.Node{x}
	}, normals},
	// Products with constants 1 and −1 (a sum's gradient seed and its
	// negation), which become a copy of the other operand and a negation;
	// sums of sums and differences.
	{"unit-products", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 5)
		ones := G.NewConstant(tensor.New(tensor.WithShape(5), tensor.WithBacking([]float64{1, 1, 1, 1, 1})))
		a := G.Must(G.HadamardProd(G.Must(G.Sin(x)), ones))
		b := G.Must(G.Mul(G.Must(G.Cos(x)), G.NewConstant(-1.0)))
		return sumAll(G.Must(G.Sum(G.Must(G.Sub(a, b)))), G.Must(G.Sum(G.Must(G.Add(a, G.Must(G.Square(b))))))), []*G.Node{x}
	}, normals},
	// Comparisons and powers run through the generic fused op.
	{"generic", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 4)
		two := G.NewConstant(2.0)
		c := G.Must(G.Gt(x, G.NewConstant(0.0), true))
		return G.Must(G.Sum(G.Must(G.HadamardProd(c, G.Must(G.Pow(G.Must(G.Add(G.Must(G.Square(x)), G.NewConstant(1.0))), two)))))), []*G.Node{x}
	}, normals},
}

// TestFusionMatchesUnfused compares fused programs with unfused ones on
// every test graph: values and gradients agree to rounding (only fused sums
// and the shared softplus/sigmoid change the order of operations), through
// every entry point. The fused-only graphs are also checked against the
// TapeMachine and finite differences.
func TestFusionMatchesUnfused(t *testing.T) {
	type tc struct {
		name  string
		build graphFunc
		gen   func(*rand.Rand, int) []float64
	}
	var cases []tc
	for _, c := range graphCases {
		cases = append(cases, tc{c.name, c.build, c.gen})
	}
	for _, c := range fuseCases {
		cases = append(cases, tc{c.name, c.build, c.gen})
		t.Run("references/"+c.name, func(t *testing.T) { checkAgainstReferences(t, c.build, c.gen, noBug) })
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fused, plain := compileFunc(t, c.build), compileFunc(t, c.build, withoutFusion())
			if nf, np := len(fused.code.full), len(plain.code.full); nf > np {
				t.Errorf("fused program has %d instructions, unfused %d", nf, np)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			dim := fused.Dim()
			g1, g2, g3 := make([]float64, dim), make([]float64, dim), make([]float64, dim)
			for trial := 0; trial < 3; trial++ {
				x := c.gen(rng, dim)
				x0 := append([]float64(nil), x...)
				v1, err1 := fused.LogDensityGrad(x, g1)
				v2, err2 := plain.LogDensityGrad(x, g2)
				if err1 != nil || err2 != nil {
					t.Fatalf("errors: fused %v, unfused %v", err1, err2)
				}
				v3, err3 := fused.LogDensityGradInPlace(x, g3)
				v4, err4 := fused.LogDensity(x)
				if err3 != nil || err4 != nil {
					t.Fatalf("in place: %v; LogDensity: %v", err3, err4)
				}
				if !closeTo(v1, v2, 1e-13, 1e-13) || v3 != v1 || v4 != v1 {
					t.Errorf("x=%v: fused value %v (in place %v, LogDensity %v), unfused %v", x, v1, v3, v4, v2)
				}
				for i := range g1 {
					if !closeTo(g1[i], g2[i], 1e-13, 1e-13) || g3[i] != g1[i] {
						t.Errorf("x=%v: fused grad[%d] %v (in place %v), unfused %v", x, i, g1[i], g3[i], g2[i])
					}
				}
				for i := range x {
					if math.Float64bits(x[i]) != math.Float64bits(x0[i]) {
						t.Fatalf("LogDensityGrad changed x[%d]: %v to %v", i, x0[i], x[i])
					}
				}
			}
		})
	}
}

// TestFusionNonFinite checks that bad inputs give the same errors with and
// without fusion: a NaN or an infinity in any coordinate.
func TestFusionNonFinite(t *testing.T) {
	builds := map[string]graphFunc{}
	for _, c := range fuseCases {
		builds[c.name] = c.build
	}
	builds["logistic"] = logisticGraph(40, 5)
	for _, name := range sortedNames(builds) {
		build := builds[name]
		t.Run(name, func(t *testing.T) {
			fused, plain := compileFunc(t, build), compileFunc(t, build, withoutFusion())
			checkFusedFailsAlike(t, fused, plain, []float64{math.NaN(), math.Inf(1), math.Inf(-1)}, func(x []float64, j int, bad, v1 float64, err1 error) {
				if err1 == nil && (math.IsNaN(v1) || math.IsInf(v1, 0)) {
					t.Fatalf("x[%d]=%v: non-finite value %v without an error", j, bad, v1)
				}
				_, err3 := fused.LogDensity(x)
				_, err4 := plain.LogDensity(x)
				if (err3 == nil) != (err4 == nil) {
					t.Fatalf("x[%d]=%v: LogDensity fused %v, unfused %v", j, bad, err3, err4)
				}
			})
		})
	}
}

// checkFusedFailsAlike evaluates fused and plain at the points that set
// one coordinate to one of bads (the others 0.1·(i+1)): the two must fail
// alike, with ErrNonFinite or another error or not at all. more, if not
// nil, checks more at each point, given fused's value and error.
func checkFusedFailsAlike(t *testing.T, fused, plain *Program, bads []float64, more func(x []float64, j int, bad, v1 float64, err1 error)) {
	t.Helper()
	dim := fused.Dim()
	g1, g2 := make([]float64, dim), make([]float64, dim)
	for _, bad := range bads {
		for j := 0; j < dim; j++ {
			x := make([]float64, dim)
			for i := range x {
				x[i] = 0.1 * float64(i+1)
			}
			x[j] = bad
			v1, err1 := fused.LogDensityGrad(x, g1)
			v2, err2 := plain.LogDensityGrad(x, g2)
			if (err1 == nil) != (err2 == nil) || errors.Is(err1, ErrNonFinite) != errors.Is(err2, ErrNonFinite) {
				t.Fatalf("x[%d]=%v: fused (%v, %v), unfused (%v, %v)", j, bad, v1, err1, v2, err2)
			}
			if more != nil {
				more(x, j, bad, v1, err1)
			}
		}
	}
}

func sortedNames(m map[string]graphFunc) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if names[j] < names[i] {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return names
}

// TestFusionShape pins down what the rewrites do to two small models: the
// 21-dimensional normal becomes one instruction of four ops, and the
// logistic regression evaluates one exp per observation for softplus and
// sigmoid.
func TestFusionShape(t *testing.T) {
	p := compileFunc(t, fuseCases[0].build)
	if len(p.code.full) != 1 || p.code.full[0].kind != kFused || len(p.code.full[0].fz) != 3 {
		t.Errorf("gauss: %d instructions, want one fused instruction of 3 ops", len(p.code.full))
	} else if op := p.code.full[0].fz[0]; !op.paired || !op.noOut || !op.check {
		t.Errorf("gauss: Σx² and the gradient not in one unstored, checked pass: %+v", op)
	}
	// Lists of one fused instruction take exec's direct path (the tests
	// above compare their results with the unfused programs').
	if len(p.code.value) != 1 || p.code.value[0].kind != kFused {
		t.Errorf("gauss: value list has %d instructions, want one fused instruction", len(p.code.value))
	}
	q := compileFunc(t, logisticGraph(40, 5))
	pairs := 0
	for _, ins := range q.code.full {
		for _, op := range ins.fz {
			if op.code == fSoftplusSigmoid {
				pairs++
			}
		}
	}
	if pairs != 1 {
		t.Errorf("logistic: %d shared softplus/sigmoid ops, want 1", pairs)
	}
}

// TestSoftplusSigmoid compares the shared computation with the separate
// formulas, on both sides of every cut-off and at non-finite inputs.
func TestSoftplusSigmoid(t *testing.T) {
	xs := []float64{0, 1e-300, -1e-300, 0.5, -0.5, 1, -1, 15.9, 16, 16.0000001, 18.9, 19, 19.5, 30,
		-707.9, -708, -708.0000001, -708.9, -709, -709.5, -745, 700, 1e300, -1e300,
		math.Inf(1), math.Inf(-1), math.NaN()}
	rng := rand.New(rand.NewPCG(8, 9))
	for i := 0; i < 1000; i++ {
		xs = append(xs, 40*rng.NormFloat64())
	}
	sp, sg := make([]float64, len(xs)), make([]float64, len(xs))
	softplusSigmoid(sp, sg, xs)
	for i, x := range xs {
		wp, wg := softplus(x), sigmoid(x)
		if math.IsNaN(wp) != math.IsNaN(sp[i]) || math.IsNaN(wg) != math.IsNaN(sg[i]) {
			t.Errorf("x=%v: got (%v, %v), want (%v, %v)", x, sp[i], sg[i], wp, wg)
			continue
		}
		if math.IsNaN(wp) {
			continue
		}
		if !closeTo(sp[i], wp, 4e-16, 0) && !(sp[i] == wp) {
			t.Errorf("softplus(%v) = %v, want %v", x, sp[i], wp)
		}
		if !closeTo(sg[i], wg, 4e-16, 0) && !(sg[i] == wg) {
			t.Errorf("sigmoid(%v) = %v, want %v", x, sg[i], wg)
		}
	}
}

// TestFusedOverlappingSlices calls LogDensityGrad with x and grad in one
// array: the program must fall back to copying and still be right.
func TestFusedOverlappingSlices(t *testing.T) {
	p := compileFunc(t, fuseCases[0].build)
	x := normals(rand.New(rand.NewPCG(5, 6)), 21)
	want := make([]float64, 21)
	v0 := mustGrad(t, p, x, want)
	buf := append([]float64(nil), x...)
	v, err := p.LogDensityGrad(buf, buf)
	if err != nil || v != v0 {
		t.Fatalf("shared buffer: %v, %v; want %v", v, err, v0)
	}
	for i := range buf {
		if buf[i] != want[i] {
			t.Fatalf("grad[%d] = %v, want %v", i, buf[i], want[i])
		}
	}
}

// TestFusedOutputs checks CompileOutputs programs and WithOutputs nodes
// that are intermediate results of fused chains.
func TestFusedOutputs(t *testing.T) {
	build := func(opts ...Option) (*Program, error) {
		g := G.NewGraph()
		x := vec(g, "x", 5)
		p := G.Must(G.HadamardProd(x, x))
		q := G.Must(G.Mul(p, G.NewConstant(-2.0))) // p is an output: no merge
		r := G.Must(G.Sum(G.Must(G.Exp(q))))
		return Compile(g, r, []*G.Node{x}, append(opts, WithOutputs(p, q))...)
	}
	fused, err := build()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := build(withoutFusion())
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.1, -0.2, 0.3, 0.7, -1.1}
	o1, o2 := make([]float64, 10), make([]float64, 10)
	if err := fused.Outputs(x, o1); err != nil {
		t.Fatal(err)
	}
	if err := plain.Outputs(x, o2); err != nil {
		t.Fatal(err)
	}
	for i := range o1 {
		if o1[i] != o2[i] {
			t.Errorf("output %d: fused %v, unfused %v", i, o1[i], o2[i])
		}
	}
	g1, g2 := make([]float64, 5), make([]float64, 5)
	v1, _ := fused.LogDensityGrad(x, g1)
	v2, _ := plain.LogDensityGrad(x, g2)
	if !closeTo(v1, v2, 1e-14, 0) {
		t.Errorf("value: fused %v, unfused %v", v1, v2)
	}
	for i := range g1 {
		if !closeTo(g1[i], g2[i], 1e-14, 1e-300) {
			t.Errorf("grad[%d]: fused %v, unfused %v", i, g1[i], g2[i])
		}
	}
}

// TestFusedDoesNotAllocate: fused programs evaluate without allocating,
// through the copying and the in-place entry points, and their clones too.
func TestFusedDoesNotAllocate(t *testing.T) {
	for _, c := range fuseCases {
		p := compileFunc(t, c.build)
		q := p.Clone()
		x := c.gen(rand.New(rand.NewPCG(1, 1)), p.Dim())
		grad := make([]float64, p.Dim())
		for _, prog := range []*Program{p, q} {
			prog.LogDensityGrad(x, grad)
			if n := testing.AllocsPerRun(50, func() { prog.LogDensityGrad(x, grad) }); n != 0 {
				t.Errorf("%s: LogDensityGrad allocates %v times", c.name, n)
			}
			if n := testing.AllocsPerRun(50, func() { prog.LogDensity(x) }); n != 0 {
				t.Errorf("%s: LogDensity allocates %v times", c.name, n)
			}
		}
	}
}

// TestFusedGradientCheck covers the finite check done by the ops that
// write the gradient: a finite value with an infinite gradient is the same
// error as without fusion, and the next good point evaluates normally.
func TestFusedGradientCheck(t *testing.T) {
	build := func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 3)
		return G.Must(G.Add(G.Must(G.Sum(G.Must(G.Sqrt(x)))), G.Must(G.Sum(G.Must(G.Square(x)))))), []*G.Node{x}
	}
	fused, plain := compileFunc(t, build), compileFunc(t, build, withoutFusion())
	if !fused.code.gradChecked {
		t.Fatal("gradient not checked by its writers")
	}
	if !compileFunc(t, fuseCases[0].build).code.gradChecked {
		t.Fatal("gauss: gradient not checked by its writers")
	}
	g1, g2 := make([]float64, 3), make([]float64, 3)
	// A NaN value returns before the check slot is read and cleared: the
	// next good point must still evaluate without error.
	for _, x := range [][]float64{{1, 0, 2}, {1, 2, 3}, {0, 1, 0}, {4, 5, 6}, {-1, 2, 3}, {7, 8, 9}, {7, 8, 9}} {
		_, err1 := fused.LogDensityGrad(x, g1)
		_, err2 := plain.LogDensityGrad(x, g2)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("x=%v: fused error %v, unfused %v", x, err1, err2)
		}
		if x[0] <= 0 || x[1] <= 0 {
			if !errors.Is(err1, ErrNonFinite) {
				t.Fatalf("x=%v: error %v, want ErrNonFinite", x, err1)
			}
			continue
		}
		for i := range g1 {
			if g1[i] != g2[i] {
				t.Fatalf("x=%v: grad[%d] fused %v, unfused %v", x, i, g1[i], g2[i])
			}
		}
	}
}

// TestScalarGradientCheck covers a gradient written by a scalar
// arithmetic op, the dispatch small models run most: √x at 0 has the
// finite value 0 and the gradient +Inf, which LogDensityGrad must refuse
// with ErrNonFinite, fused or not, and a good point after it evaluates
// normally.
func TestScalarGradientCheck(t *testing.T) {
	build := func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := scalar(g, "x")
		return G.Must(G.Sqrt(x)), []*G.Node{x}
	}
	for _, opts := range [][]Option{nil, {withoutFusion()}} {
		p := compileFunc(t, build, opts...)
		g := make([]float64, 1)
		for _, x := range []float64{0, 4, 0, 1} {
			v, err := p.LogDensityGrad([]float64{x}, g)
			if x == 0 {
				if !errors.Is(err, ErrNonFinite) {
					t.Fatalf("fused=%v x=0: value %v, gradient %v, error %v; want ErrNonFinite", opts == nil, v, g, err)
				}
				continue
			}
			if err != nil || v != math.Sqrt(x) || g[0] != 0.5/math.Sqrt(x) {
				t.Fatalf("fused=%v x=%v: value %v, gradient %v, error %v", opts == nil, x, v, g, err)
			}
		}
	}
}

// TestMulScalarChecked checks the in-loop test of a scaled product against
// math.IsNaN and math.IsInf, at overflow, NaN and the largest finite values.
func TestMulScalarChecked(t *testing.T) {
	big := math.MaxFloat64
	for _, tc := range []struct {
		a       []float64
		x, c    float64
		wantBad bool
	}{
		{[]float64{1, 2, 3}, 2, -0.5, false},
		{[]float64{1, big, 3}, 1, 1, false},
		{[]float64{1, big, 3}, 2, 0.5, true}, // overflows before the scale
		{[]float64{1, math.NaN(), 3}, 2, 1, true},
		{[]float64{1, math.Inf(-1), 3}, 2, 1, true},
		{[]float64{0, 1, 3}, math.Inf(1), 1, true}, // 0·∞
		{[]float64{5e-324, -5e-324, 0}, 1, 1, false},
	} {
		s := [][]float64{tc.a, {tc.x}, {tc.c}, make([]float64, len(tc.a))}
		op := &fop{code: fMul, out: 3, n: len(tc.a), a: foperand{slot: 0}, b: foperand{slot: 1, scalar: true},
			scale: foperand{slot: 2, scalar: true}, scaled: true, sum: -1}
		bad := mulScalarChecked(s[3], s, op)
		want := false
		for i, v := range tc.a {
			r := v * tc.x * tc.c
			if math.Float64bits(s[3][i]) != math.Float64bits(r) && !(math.IsNaN(r) && math.IsNaN(s[3][i])) {
				t.Errorf("%v·%v·%v: element %d = %v, want %v", tc.a, tc.x, tc.c, i, s[3][i], r)
			}
			want = want || math.IsNaN(r) || math.IsInf(r, 0)
		}
		if bad != want || bad != tc.wantBad {
			t.Errorf("%v·%v·%v: bad = %v, want %v", tc.a, tc.x, tc.c, bad, want)
		}
	}
}
