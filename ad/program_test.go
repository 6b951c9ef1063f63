package ad

import (
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/internal/gemm"
)

// cubeOp is a custom elementwise x³ op for testing the Lowerer and fallback
// paths. lowered selects whether it implements Lowerer (via loweredCube).
type cubeOp struct {
	limit float64 // Do and the kernel fail for inputs above limit
}

func (op cubeOp) Arity() int { return 1 }
func (op cubeOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (op cubeOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (op cubeOp) Do(vals ...G.Value) (G.Value, error) {
	d, err := valueData(vals[0], size(vals[0].Shape()))
	if err != nil {
		return nil, err
	}
	for i, v := range d {
		if v > op.limit {
			panic(fmt.Sprintf("cubeOp: input %v above limit", v))
		}
		d[i] = v * v * v
	}
	if _, ok := vals[0].(G.Scalar); ok {
		return G.NewF64(d[0]), nil
	}
	return tensor.New(tensor.WithShape(vals[0].Shape().Clone()...), tensor.WithBacking(d)), nil
}
func (op cubeOp) ReturnsPtr() bool      { return false }
func (op cubeOp) CallsExtern() bool     { return false }
func (op cubeOp) OverwritesInput() int  { return -1 }
func (op cubeOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op cubeOp) Hashcode() uint32      { return stringHash(op) }
func (op cubeOp) String() string        { return fmt.Sprintf("testCube(%v)", op.limit) }
func (op cubeOp) DiffWRT(int) []bool    { return []bool{true} }
func (op cubeOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	d, err := G.Mul(G.NewConstant(3.0), G.Must(G.Square(in[0])))
	if err != nil {
		return nil, err
	}
	d, err = G.HadamardProd(grad, d)
	return G.Nodes{d}, err
}

// loweredCube is cubeOp with a native kernel. Its kernel counts calls so the
// test can see that clones own their kernels.
type loweredCube struct{ cubeOp }

func (op loweredCube) String() string        { return fmt.Sprintf("testLoweredCube(%v)", op.limit) }
func (op loweredCube) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op loweredCube) Hashcode() uint32      { return stringHash(op) }
func (op loweredCube) Lower(in []tensor.Shape) (Kernel, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("want 1 input, got %d", len(in))
	}
	if len(in[0]) > 1 {
		return nil, fmt.Errorf("only vectors supported, got %v", in[0])
	}
	return &cubeKernel{limit: op.limit}, nil
}

type cubeKernel struct {
	limit float64
	calls int
}

func (k *cubeKernel) Eval(out []float64, in [][]float64) error {
	k.calls++
	for i, v := range in[0] {
		if v > k.limit {
			return fmt.Errorf("input %v above limit %v", v, k.limit)
		}
		out[i] = v * v * v
	}
	return nil
}

func (k *cubeKernel) CloneKernel() Kernel { return &cubeKernel{limit: k.limit} }

func cubeGraph(op G.Op) graphFunc {
	return func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 4)
		y := G.Must(G.ApplyOp(op, x))
		return weighted(g, G.Must(G.Add(y, G.Must(G.Sin(x)))), 3), []*G.Node{x}
	}
}

func TestLowererAndFallback(t *testing.T) {
	lowered := compileFunc(t, cubeGraph(loweredCube{cubeOp{limit: 10}}))
	if fb := lowered.Fallbacks(); len(fb) != 0 {
		t.Errorf("lowered op: fallbacks %v, want none", fb)
	}
	slow := compileFunc(t, cubeGraph(cubeOp{limit: 10}))
	if fb := slow.Fallbacks(); len(fb) != 1 || fb[0] != "testCube(10) ×1" {
		t.Errorf("Fallbacks() = %q, want [testCube(10) ×1]", fb)
	}
	checkAgainstReferences(t, cubeGraph(loweredCube{cubeOp{limit: 10}}), normals, noBug)
	checkAgainstReferences(t, cubeGraph(cubeOp{limit: 10}), normals, noBug)

	x := []float64{0.3, -1.2, 2, 0.5}
	checkSameNumbers(t, lowered, "lowered", slow, "fallback", x)

	// Kernel errors and panics in Do become errors.
	bad := []float64{0.3, 11, 2, 0.5}
	g1 := make([]float64, 4)
	if _, err := lowered.LogDensityGrad(bad, g1); err == nil {
		t.Error("lowered kernel error not reported")
	}
	if _, err := slow.LogDensityGrad(bad, g1); err == nil {
		t.Error("panic in fallback Do not reported")
	}

	// Clones own their kernels.
	c := lowered.Clone()
	k0 := lowered.kernels[0].(*cubeKernel)
	before := k0.calls
	if _, err := c.LogDensity(x); err != nil {
		t.Fatal(err)
	}
	if k0.calls != before {
		t.Error("clone shares a stateful kernel with its parent")
	}
}

func TestLowerError(t *testing.T) {
	g := G.NewGraph()
	m := mat(g, "m", 2, 2)
	out := G.Must(G.Sum(G.Must(G.ApplyOp(loweredCube{cubeOp{limit: 1}}, m))))
	if _, err := Compile(g, out, []*G.Node{m}); err == nil {
		t.Error("Compile accepted a Lowerer that refused its shapes")
	}
}

func TestBind(t *testing.T) {
	g := G.NewGraph()
	d := dataNode(g, "d", []float64{1, 2, 3}, 3)
	x := vec(g, "x", 3)
	dr := G.Must(G.Reshape(d, tensor.Shape{3, 1})) // a view of d: Bind must show through
	out := G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(G.Must(G.Sub(x, d)))))), G.Must(G.Sum(dr))))
	p, err := Compile(g, out, []*G.Node{x})
	if err != nil {
		t.Fatal(err)
	}
	x0 := []float64{0, 0, 0}
	want := func(dv []float64) float64 {
		s := 0.0
		for i, v := range dv {
			s += (x0[i]-v)*(x0[i]-v) + v
		}
		return s
	}
	if v, _ := p.LogDensity(x0); v != want([]float64{1, 2, 3}) {
		t.Errorf("before Bind: %v, want %v", v, want([]float64{1, 2, 3}))
	}
	c := p.Clone()
	nd := []float64{4, -1, 0.5}
	if err := p.Bind(d, nd); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.LogDensity(x0); v != want(nd) {
		t.Errorf("after Bind: %v, want %v", v, want(nd))
	}
	if v, _ := c.LogDensity(x0); v != want([]float64{1, 2, 3}) {
		t.Errorf("clone saw its parent's Bind: %v", v)
	}
	if err := p.Bind(d, []float64{1, 2}); err == nil {
		t.Error("Bind accepted a wrong length")
	}
	if err := p.Bind(x, []float64{1, 2, 3}); err == nil {
		t.Error("Bind accepted a wrt node")
	}
	if err := p.Bind(nil, nil); err == nil {
		t.Error("Bind accepted nil")
	}
}

func TestOutputs(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 3)
	ex := G.Must(G.Exp(x))
	s := G.Must(G.Sum(ex))
	out := G.Must(G.Neg(s))
	p, err := Compile(g, out, []*G.Node{x}, WithOutputs(ex, s))
	if err != nil {
		t.Fatal(err)
	}
	x0 := []float64{0.1, 0.2, -0.3}
	dst := make([]float64, 4)
	if err := p.Outputs(x0, dst); err != nil {
		t.Fatal(err)
	}
	tot := 0.0
	for i, v := range x0 {
		if !closeTo(dst[i], math.Exp(v), 1e-15, 0) {
			t.Errorf("output[%d] = %v, want %v", i, dst[i], math.Exp(v))
		}
		tot += math.Exp(v)
	}
	if !closeTo(dst[3], tot, 1e-15, 0) {
		t.Errorf("output[3] = %v, want %v", dst[3], tot)
	}
	if err := p.Outputs(x0, dst[:3]); err == nil {
		t.Error("Outputs accepted a short destination")
	}
}

func TestNonFinite(t *testing.T) {
	p := compileSum(t, 2, G.Sqrt)
	grad := make([]float64, 2)
	if _, err := p.LogDensityGrad([]float64{-1, 1}, grad); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN value: err = %v, want ErrNonFinite", err)
	}
	if _, err := p.LogDensity([]float64{-1, 1}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN value (LogDensity): err = %v, want ErrNonFinite", err)
	}
	// sqrt(0) is finite, its derivative is not.
	if _, err := p.LogDensityGrad([]float64{0, 1}, grad); !errors.Is(err, ErrNonFinite) {
		t.Errorf("infinite gradient: err = %v, want ErrNonFinite", err)
	}
	if v, err := p.LogDensityGrad([]float64{4, 1}, grad); err != nil || v != 3 {
		t.Errorf("LogDensityGrad = %v, %v; want 3, nil", v, err)
	}
}

func TestInputLengthErrors(t *testing.T) {
	p := compileFunc(t, logisticGraph(10, 3))
	grad := make([]float64, p.Dim())
	if _, err := p.LogDensity(make([]float64, p.Dim()+1)); err == nil {
		t.Error("LogDensity accepted a long x")
	}
	if _, err := p.LogDensityGrad(make([]float64, p.Dim()-1), grad); err == nil {
		t.Error("LogDensityGrad accepted a short x")
	}
	if _, err := p.LogDensityGrad(make([]float64, p.Dim()), grad[1:]); err == nil {
		t.Error("LogDensityGrad accepted a short gradient")
	}
	if err := p.Outputs(make([]float64, p.Dim()), nil); err != nil {
		t.Errorf("Outputs with no outputs: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 3)
	s := G.Must(G.Sum(G.Must(G.Square(x))))
	ex := G.Must(G.Exp(x))
	other := G.NewGraph()
	y := vec(other, "y", 3)
	noValue := vec(g, "nv", 3)
	usesNoValue := G.Must(G.Sum(G.Must(G.HadamardProd(x, noValue))))
	g32 := G.NewGraph()
	x32 := G.NewVector(g32, tensor.Float32, G.WithShape(2), G.WithName("x32"))
	s32 := G.Must(G.Sum(x32))
	sNotDiff := G.Must(G.Sum(G.Must(G.Square(vec(g, "z", 2)))))

	cases := []struct {
		name string
		g    *G.ExprGraph
		out  *G.Node
		wrt  []*G.Node
		opts []Option
	}{
		{"nil graph", nil, s, []*G.Node{x}, nil},
		{"nil output", g, nil, []*G.Node{x}, nil},
		{"output not scalar", g, ex, []*G.Node{x}, nil},
		{"output in another graph", g, G.Must(G.Sum(y)), []*G.Node{x}, nil},
		{"no wrt", g, s, nil, nil},
		{"nil wrt", g, s, []*G.Node{nil}, nil},
		{"wrt in another graph", g, s, []*G.Node{y}, nil},
		{"wrt not an input", g, s, []*G.Node{ex}, nil},
		{"wrt twice", g, s, []*G.Node{x, x}, nil},
		{"wrt does not affect output", g, sNotDiff, []*G.Node{x}, nil},
		{"data node without value", g, usesNoValue, []*G.Node{x}, nil},
		{"float32", g32, s32, []*G.Node{x32}, nil},
		{"output node not in graph", g, s, []*G.Node{x}, []Option{WithOutputs(y)}},
	}
	for _, tc := range cases {
		if p, err := Compile(tc.g, tc.out, tc.wrt, tc.opts...); err == nil {
			t.Errorf("%s: Compile succeeded (%v)", tc.name, p)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

// TestCloneConcurrent runs clones on several goroutines; go test -race
// checks that they share no mutable state.
func TestCloneConcurrent(t *testing.T) {
	p := compileFunc(t, logisticGraph(50, 4))
	const workers = 4
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([][]float64, 8)
	want := make([]float64, len(xs))
	wantGrad := make([][]float64, len(xs))
	for i := range xs {
		xs[i] = normals(rng, p.Dim())
		wantGrad[i] = make([]float64, p.Dim())
		var err error
		if want[i], err = p.LogDensityGrad(xs[i], wantGrad[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		q := p.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			grad := make([]float64, q.Dim())
			for rep := 0; rep < 20; rep++ {
				for i, x := range xs {
					v, err := q.LogDensityGrad(x, grad)
					if err != nil || v != want[i] {
						errs <- fmt.Errorf("point %d: %v, %v; want %v", i, v, err, want[i])
						return
					}
					for j := range grad {
						if grad[j] != wantGrad[i][j] {
							errs <- fmt.Errorf("point %d grad[%d]: %v, want %v", i, j, grad[j], wantGrad[i][j])
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLogDensityGradDoesNotAllocate(t *testing.T) {
	for _, tc := range graphCases {
		p := compileFunc(t, tc.build)
		x := tc.gen(rand.New(rand.NewPCG(3, 4)), p.Dim())
		grad := make([]float64, p.Dim())
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := p.LogDensityGrad(x, grad); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per LogDensityGrad, want 0", tc.name, allocs)
		}
		allocs = testing.AllocsPerRun(20, func() { _, _ = p.LogDensity(x) })
		if allocs != 0 {
			t.Errorf("%s: %v allocs per LogDensity, want 0", tc.name, allocs)
		}
	}
}

func TestByIndicesBindAndRange(t *testing.T) {
	g := G.NewGraph()
	v := vec(g, "v", 3)
	idx := indexNode(g, "idx", 0, 2)
	out := G.Must(G.Sum(G.Must(G.ByIndices(v, idx, 0))))
	p, err := Compile(g, out, []*G.Node{v})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{10, 20, 30}
	grad := make([]float64, 3)
	if val, err := p.LogDensityGrad(x, grad); err != nil || val != 40 || grad[0] != 1 || grad[1] != 0 || grad[2] != 1 {
		t.Errorf("got %v, %v, %v; want 40, [1 0 1]", val, grad, err)
	}
	if err := p.Bind(idx, []float64{1, 1}); err != nil {
		t.Fatal(err)
	}
	if val, err := p.LogDensityGrad(x, grad); err != nil || val != 40 || grad[0] != 0 || grad[1] != 2 || grad[2] != 0 {
		t.Errorf("after Bind: got %v, %v, %v; want 40, [0 2 0]", val, grad, err)
	}
	for _, bad := range [][]float64{{3, 0}, {-1, 0}, {0.5, 0}} {
		if err := p.Bind(idx, bad); err != nil {
			t.Fatal(err)
		}
		if _, err := p.LogDensityGrad(x, grad); err == nil {
			t.Errorf("index %v accepted", bad)
		}
	}
}

// TestBuiltinFallback runs a gorgonia op the compiler does not lower
// (Tensordot) through its Do, and checks the result and the report.
func TestBuiltinFallback(t *testing.T) {
	build := func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		a := mat(g, "a", 3, 4)
		b := constMatrix(g, "b", 2, 4, 2)
		return weighted(g, G.Must(G.Tensordot([]int{1}, []int{0}, a, b)), 1), []*G.Node{a}
	}
	p := compileFunc(t, build)
	want := []string{"Tensordot(aAxes=[1], bAxes=[0]) ×1", "Tensordot(aAxes=[1], bAxes=[1]) ×1"}
	if fb := p.Fallbacks(); fmt.Sprint(fb) != fmt.Sprint(want) {
		t.Errorf("Fallbacks() = %q, want %q", fb, want)
	}
	checkAgainstReferences(t, build, normals, noBug)
}

// TestGemmMatchesBLAS checks matMul against blas64.Gemm for every
// transpose combination, and that it does not allocate.
func TestGemmMatchesBLAS(t *testing.T) {
	const m, n, k = 150, 131, 7
	rng := rand.New(rand.NewPCG(8, 9))
	a, b := normals(rng, m*k), normals(rng, k*n)
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			l := linalg{tA: tA, tB: tB, ar: m, ac: k, br: k, bc: n, m: m, n: n}
			if tA == blas.Trans {
				l.ar, l.ac = k, m
			}
			if tB == blas.Trans {
				l.br, l.bc = n, k
			}
			got, want := make([]float64, m*n), make([]float64, m*n)
			work := make([]float64, gemm.WorkLen(k))
			matMul(&l, 1, a, b, 0, got, work)
			blas64.Gemm(tA, tB, 1,
				blas64.General{Rows: l.ar, Cols: l.ac, Stride: l.ac, Data: a},
				blas64.General{Rows: l.br, Cols: l.bc, Stride: l.bc, Data: b},
				0, blas64.General{Rows: m, Cols: n, Stride: n, Data: want})
			for i := range got {
				if !closeTo(got[i], want[i], 1e-13, 1e-13) {
					t.Fatalf("tA=%c tB=%c: out[%d] = %v, want %v", tA, tB, i, got[i], want[i])
				}
			}
			if allocs := testing.AllocsPerRun(5, func() { matMul(&l, 1, a, b, 0, got, work) }); allocs != 0 {
				t.Errorf("tA=%c tB=%c: %v allocs", tA, tB, allocs)
			}
		}
	}
}

// TestCompileTwice compiles one graph twice (gorgonia.Grad then finds the
// gradient already built) and once more after a TapeMachine used it.
func TestCompileTwice(t *testing.T) {
	g := G.NewGraph()
	out, wrt := logisticGraph(20, 3)(g)
	p1, err := Compile(g, out, wrt)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Compile(g, out, wrt, WithOutputs(out))
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.1, -0.3, 0.2, 0.5}
	g1, g2 := make([]float64, 4), make([]float64, 4)
	v1, err1 := p1.LogDensityGrad(x, g1)
	v2, err2 := p2.LogDensityGrad(x, g2)
	if err1 != nil || err2 != nil || v1 != v2 || fmt.Sprint(g1) != fmt.Sprint(g2) {
		t.Errorf("first %v %v %v, second %v %v %v", v1, g1, err1, v2, g2, err2)
	}
	letX(t, wrt, x)
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	p3, err := Compile(g, out, wrt)
	if err != nil {
		t.Fatal(err)
	}
	if v3, err := p3.LogDensityGrad(x, g2); err != nil || v3 != v1 {
		t.Errorf("after tape: %v, %v; want %v", v3, err, v1)
	}
}

// TestComparisons evaluates comparison nodes through Outputs: 1 for true and
// 0 for false, whether gorgonia types the result float64 or bool.
func TestComparisons(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 4)
	zero := G.NewConstant(0.0)
	gt := G.Must(G.Gt(x, zero, true))
	lte := G.Must(G.Lte(x, zero, false))
	eq := G.Must(G.Eq(x, G.NewConstant(0.5), true))
	out := G.Must(G.Sum(G.Must(G.HadamardProd(x, gt)))) // Σ max(x, 0)
	p, err := Compile(g, out, []*G.Node{x}, WithOutputs(gt, lte, eq))
	if err != nil {
		t.Fatal(err)
	}
	x0 := []float64{-1, 0.5, 0, 2}
	dst := make([]float64, 12)
	if err := p.Outputs(x0, dst); err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 0}
	if fmt.Sprint(dst) != fmt.Sprint(want) {
		t.Errorf("Outputs = %v, want %v", dst, want)
	}
	grad := make([]float64, 4)
	if v, err := p.LogDensityGrad(x0, grad); err != nil || v != 2.5 || fmt.Sprint(grad) != "[0 1 0 1]" {
		t.Errorf("LogDensityGrad = %v, %v, %v; want 2.5, [0 1 0 1]", v, grad, err)
	}
}

// TestUnaryCutoffs checks sigmoid and softplus far in the tails, where
// gorgonia (and this package) switch to their limits to avoid overflow.
func TestUnaryCutoffs(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 5)
	sig, sp := G.Must(G.Sigmoid(x)), G.Must(G.Softplus(x))
	p, err := Compile(g, G.Must(G.Sum(sp)), []*G.Node{x}, WithOutputs(sig, sp))
	if err != nil {
		t.Fatal(err)
	}
	x0 := []float64{-800, -3, 0, 3, 800}
	dst := make([]float64, 10)
	if err := p.Outputs(x0, dst); err != nil {
		t.Fatal(err)
	}
	for i, v := range x0 {
		wantSig := 1 / (1 + math.Exp(-v))
		wantSp := math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v)))
		if !closeTo(dst[i], wantSig, 1e-15, 0) || !closeTo(dst[5+i], wantSp, 1e-15, 0) {
			t.Errorf("x=%v: sigmoid %v softplus %v, want %v %v", v, dst[i], dst[5+i], wantSig, wantSp)
		}
	}
	grad := make([]float64, 5)
	if _, err := p.LogDensityGrad(x0, grad); err != nil {
		t.Fatalf("finite inputs in the tails: %v", err)
	}
}

// panicKernel is a buggy custom kernel.
type panicKernel struct{}

func (panicKernel) Eval(out []float64, in [][]float64) error { panic("kernel bug") }

type panicOp struct{ cubeOp }

func (op panicOp) String() string                          { return "testPanic" }
func (op panicOp) WriteHash(h hash.Hash)                   { fmt.Fprint(h, op.String()) }
func (op panicOp) Hashcode() uint32                        { return 12345 }
func (op panicOp) Lower(in []tensor.Shape) (Kernel, error) { return panicKernel{}, nil }

func TestKernelPanicBecomesError(t *testing.T) {
	p := compileFunc(t, cubeGraph(panicOp{cubeOp{limit: 10}}))
	grad := make([]float64, p.Dim())
	if _, err := p.LogDensityGrad(make([]float64, p.Dim()), grad); err == nil {
		t.Error("panicking kernel: no error")
	} else {
		t.Log(err)
	}
}

// scratchCube is cubeOp with a kernel that computes through the
// Program's shared scratch (Scratcher), asking for extra more than it uses.
type scratchCube struct {
	cubeOp
	extra int
}

func (op scratchCube) String() string        { return fmt.Sprintf("testScratchCube(%d)", op.extra) }
func (op scratchCube) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op scratchCube) Hashcode() uint32      { return stringHash(op) }
func (op scratchCube) Lower(in []tensor.Shape) (Kernel, error) {
	return &scratchKernel{n: size(in[0]) + op.extra}, nil
}

type scratchKernel struct {
	n    int
	seen *float64 // the scratch of the last call
}

func (k *scratchKernel) Eval([]float64, [][]float64) error {
	return errors.New("Eval called instead of EvalScratch")
}
func (k *scratchKernel) ScratchLen() int { return k.n }
func (k *scratchKernel) EvalScratch(out []float64, in [][]float64, scratch []float64) error {
	if len(scratch) < k.n {
		return fmt.Errorf("scratch of %d, want %d", len(scratch), k.n)
	}
	k.seen = &scratch[0]
	for i, v := range in[0] {
		scratch[i] = v * v
	}
	for i, v := range in[0] {
		out[i] = scratch[i] * v
	}
	return nil
}

func (k *scratchKernel) CloneKernel() Kernel { return &scratchKernel{n: k.n} }

// TestScratcher checks that a Program gives its Scratcher kernels one
// scratch buffer of the largest length they ask for, a clone its own, and
// that the results are those of the computation.
func TestScratcher(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 4)
	a := G.Must(G.ApplyOp(scratchCube{cubeOp{math.Inf(1)}, 0}, x))
	b := G.Must(G.ApplyOp(scratchCube{cubeOp{math.Inf(1)}, 5}, x))
	v := G.Must(G.Sum(G.Must(G.Add(a, G.Must(G.Mul(b, G.NewConstant(2.0)))))))
	p, err := Compile(g, v, []*G.Node{x})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Clone()
	xs := []float64{0.5, -1, 2, 0.25}
	for k, prog := range []*Program{p, q} {
		grad := make([]float64, 4)
		got, err := prog.LogDensityGrad(xs, grad)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for i, xi := range xs {
			want += 3 * xi * xi * xi
			if w := 9 * xi * xi; grad[i] != w {
				t.Errorf("program %d: grad[%d] = %v, want %v", k, i, grad[i], w)
			}
		}
		if got != want {
			t.Errorf("program %d: value %v, want %v", k, got, want)
		}
		if len(prog.scratch) != 9 {
			t.Errorf("program %d: scratch of %d, want 9", k, len(prog.scratch))
		}
		for _, kern := range prog.kernels {
			if sk := kern.(*scratchKernel); sk.seen != &prog.scratch[0] {
				t.Errorf("program %d: a kernel ran on scratch other than the program's", k)
			}
		}
	}
	if &p.scratch[0] == &q.scratch[0] {
		t.Error("a clone shares its scratch")
	}
}
