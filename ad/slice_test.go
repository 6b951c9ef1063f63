package ad

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
)

// sliceCases exercise the gradients of gorgonia.Slice, which the compiler
// sums by scattering into one buffer (accum.go).
var sliceCases = []struct {
	name  string
	build graphFunc
}{
	{"ar1-recursion-T200", ar1Graph(200, true)},

	{"matrix-rows-and-columns", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m := mat(g, "m", 5, 4)
		var terms []*G.Node
		for i := 0; i < 5; i++ { // rows: contiguous
			terms = append(terms, weighted(g, G.Must(G.Exp(G.Must(G.Slice(m, G.S(i))))), uint64(10+i)))
		}
		for j := 0; j < 4; j++ { // columns: strided
			terms = append(terms, weighted(g, G.Must(G.Square(G.Must(G.Slice(m, nil, G.S(j))))), uint64(20+j)))
		}
		terms = append(terms,
			G.Must(G.Square(G.Must(G.Slice(m, G.S(3), G.S(1))))),                // one element
			G.Must(G.Cube(G.Must(G.Slice(m, G.S(0), G.S(2))))),                  // another
			weighted(g, G.Must(G.Tanh(G.Must(G.Slice(m, G.S(1, 4))))), 30),      // block of rows
			weighted(g, G.Must(G.Sin(G.Must(G.Slice(m, nil, G.S(1, 3))))), 31),  // block of columns
			weighted(g, G.Must(G.Square(G.Must(G.Slice(m, G.S(0, 5, 2))))), 32), // every other row
			weighted(g, G.Must(G.Tanh(m)), 34),                                  // a full-size term in the same sum
		)
		return sumAll(terms...), []*G.Node{m}
	}},

	{"overlapping-vector-slices", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		v := vec(g, "v", 9)
		s := scalar(g, "s")
		a := G.Must(G.Slice(v, G.S(0, 5)))
		b := G.Must(G.Slice(v, G.S(3, 9)))
		c := G.Must(G.Slice(v, G.S(2, 6)))
		d := G.Must(G.Slice(v, G.S(1, 8, 3)))
		e := G.Must(G.Slice(v, G.S(4))) // inside a, b and c
		f := G.Must(G.Slice(v, G.S(8)))
		return sumAll(
			weighted(g, G.Must(G.Square(a)), 1),
			weighted(g, G.Must(G.Exp(b)), 2),
			weighted(g, G.Must(G.Mul(s, c)), 3),
			weighted(g, G.Must(G.Cube(d)), 4),
			G.Must(G.Mul(e, G.Must(G.Mul(s, f)))),
			G.Must(G.Square(G.Must(G.Sub(e, f)))),
			weighted(g, G.Must(G.Sin(v)), 5),
		), []*G.Node{v, s}
	}},

	{"nested-and-3d-slices", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		m := mat(g, "m", 3, 4)
		t3 := G.NewTensor(g, G.Float64, 3, G.WithShape(2, 3, 4), G.WithName("t3"))
		var terms []*G.Node
		for i := 0; i < 3; i++ { // every element as m[i][j]
			row := G.Must(G.Slice(m, G.S(i)))
			for j := 0; j < 4; j++ {
				el := G.Must(G.Slice(row, G.S(j)))
				terms = append(terms, G.Must(G.Mul(G.NewConstant(float64(i+2*j+1)), G.Must(G.Square(el)))))
			}
		}
		terms = append(terms,
			weighted(g, G.Must(G.Exp(G.Must(G.Slice(t3, nil, G.S(1))))), 40),         // axis 1
			weighted(g, G.Must(G.Square(G.Must(G.Slice(t3, nil, nil, G.S(2))))), 41), // axis 2
			weighted(g, G.Must(G.Tanh(G.Must(G.Slice(G.Must(G.Slice(t3, G.S(1))), G.S(0, 2))))), 42),
			G.Must(G.Square(G.Must(G.Slice(t3, G.S(0), G.S(2), G.S(3))))),
		)
		return sumAll(terms...), []*G.Node{m, t3}
	}},

	{"single-slice", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		// The only use of x is one slice, so its gradient is one slice
		// gradient and no sum.
		x := vec(g, "x", 6)
		return weighted(g, G.Must(G.Exp(G.Must(G.Slice(x, G.S(1, 4))))), 1), []*G.Node{x}
	}},
}

func TestSliceGradients(t *testing.T) {
	for _, tc := range sliceCases {
		t.Run(tc.name, func(t *testing.T) {
			build := tc.build
			if testing.Short() && tc.name == "ar1-recursion-T200" {
				build = ar1Graph(50, true) // the TapeMachine takes seconds at T = 200
			}
			checkAgainstReferences(t, build, normals, noBug)

			p := compileFunc(t, build)
			if fb := p.Fallbacks(); len(fb) != 0 {
				t.Errorf("fallbacks %v", fb)
			}
			accums := 0
			for _, ins := range p.code.full {
				if ins.kind == kAccum {
					accums++
				}
			}
			if accums == 0 {
				t.Error("no slice gradient was lowered as an accumulation")
			}
			x := normals(rand.New(rand.NewPCG(3, 4)), p.Dim())
			grad := make([]float64, p.Dim())
			if allocs := testing.AllocsPerRun(20, func() { _, _ = p.LogDensityGrad(x, grad) }); allocs != 0 {
				t.Errorf("%v allocs per LogDensityGrad, want 0", allocs)
			}
		})
	}
}

// TestSliceGradientIsLinear checks that the gradient of a length-T vector
// taken apart by T scalar slices costs O(T): one instruction writes a
// buffer of length T (the sum of the slice gradients), and the program
// needs about as much memory as the same model written with T scalar
// parameters. Before slice gradients were summed in one buffer, there were
// 2T−1 instructions of length T and T² numbers of scratch memory.
func TestSliceGradientIsLinear(t *testing.T) {
	skipInRacePass(t)
	const n = 200
	ps := compileFunc(t, ar1Graph(n, true))
	pc := compileFunc(t, ar1Graph(n, false))
	long := 0
	for _, ins := range ps.code.full {
		if ps.code.slotLen[ins.out] >= n {
			long++
			if ins.kind != kAccum || len(ins.terms) != n {
				t.Errorf("instruction %q of length %d, want only the sum of %d slice gradients", ins.label(), ps.code.slotLen[ins.out], n)
			}
		}
	}
	if long != 1 {
		t.Errorf("%d instructions of length ≥ %d, want 1", long, n)
	}
	if ps.code.arenaLen > pc.code.arenaLen+2*n {
		t.Errorf("arena of %d numbers with slices, %d with scalars: want at most %d more", ps.code.arenaLen, pc.code.arenaLen, 2*n)
	}

	// Both forms are the same function of the same numbers.
	x := normals(rand.New(rand.NewPCG(7, 8)), ps.Dim())
	gs, gc := make([]float64, n+2), make([]float64, n+2)
	vs, vc := mustGrad(t, ps, x, gs), mustGrad(t, pc, x, gc)
	if !closeTo(vs, vc, 1e-14, 1e-14) {
		t.Errorf("value %v with slices, %v with scalars", vs, vc)
	}
	for i := range gs {
		if !closeTo(gs[i], gc[i], 1e-13, 1e-13) {
			t.Errorf("grad[%d] %v with slices, %v with scalars", i, gs[i], gc[i])
		}
	}
}

// TestSliceGradientSumAsOutput reads sums of slice gradients through
// WithOutputs, so that both the root of a sum and one of its partial sums
// are pinned: the partial sum must get its own buffer and still be added
// into the root.
func TestSliceGradientSumAsOutput(t *testing.T) {
	const n = 6
	g := G.NewGraph()
	x := vec(g, "x", n)
	zv := normals(rand.New(rand.NewPCG(9, 10)), n)
	z := dataNode(g, "z", zv, n)

	// h = Σ_t c_t z_t x_t + Σ_{1≤t<4} z_t e^{x_t}, so that
	// ∂h/∂z_t = c_t x_t + [1 ≤ t < 4] e^{x_t}: a sum of n + 1 slice
	// gradients of z whose increments depend on the parameters.
	var terms []*G.Node
	for i := 0; i < n; i++ {
		zi, xi := G.Must(G.Slice(z, G.S(i))), G.Must(G.Slice(x, G.S(i)))
		terms = append(terms, G.Must(G.Mul(G.NewConstant(float64(i+1)), G.Must(G.Mul(zi, xi)))))
	}
	terms = append(terms, G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Slice(z, G.S(1, 4))), G.Must(G.Exp(G.Must(G.Slice(x, G.S(1, 4))))))))))
	gz, err := G.Grad(sumAll(terms...), z)
	if err != nil {
		t.Fatal(err)
	}
	var partial *G.Node // a partial sum inside the sum gz[0]
	for _, c := range children(g, gz[0]) {
		if isSameSizeAdd(g, c) {
			partial = c
		}
	}
	if partial == nil {
		t.Fatalf("gradient %v is not a sum of sums", gz[0])
	}

	out := weighted(g, G.Must(G.Square(x)), 1)
	p, err := Compile(g, out, []*G.Node{x}, WithOutputs(gz[0], partial))
	if err != nil {
		t.Fatal(err)
	}
	// Two sums, the second reading the first as a full-size term.
	var sums []instr
	for _, ins := range p.code.outputs {
		if ins.kind == kAccum {
			sums = append(sums, ins)
		}
	}
	if len(sums) != 2 || sums[1].terms[0].runs != nil || sums[1].args[0] != sums[0].out {
		t.Errorf("want the partial sum and a sum that reads it, got %d sums", len(sums))
	}

	xv := normals(rand.New(rand.NewPCG(11, 12)), n)
	got := make([]float64, 2*n)
	if err := p.Outputs(xv, got); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		want := float64(i+1) * xv[i]
		if i >= 1 && i < 4 {
			want += math.Exp(xv[i])
		}
		if !closeTo(got[i], want, 1e-14, 1e-14) {
			t.Errorf("∂h/∂z_%d = %v, want %v", i, got[i], want)
		}
	}

	// The TapeMachine adds the last term into the partial sum in place, so
	// the partial sum's reference is the full sum minus that last term, a
	// slice gradient that gorgonia's own op computes from its increment.
	letX(t, []*G.Node{x}, xv)
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	full, err := valueData(gz[0].Value(), n)
	if err != nil {
		t.Fatal(err)
	}
	last := children(g, gz[0])[1]
	lc := children(g, last)
	if opType(last.Op()) != "sliceIncrOp" || len(lc) != 2 {
		t.Fatalf("last term of the sum is %v, want a slice gradient", last.Op())
	}
	lv, err := doOp(last.Op(), []G.Value{zeroValue(lc[0]), lc[1].Value()})
	if err != nil {
		t.Fatal(err)
	}
	lastV, err := valueData(lv, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range full {
		if !closeTo(got[i], full[i], 1e-14, 1e-14) {
			t.Errorf("sum[%d] = %v, tape %v", i, got[i], full[i])
		}
		if want := full[i] - lastV[i]; !closeTo(got[n+i], want, 1e-14, 1e-14) {
			t.Errorf("partial sum[%d] = %v, want %v", i, got[n+i], want)
		}
	}
}
