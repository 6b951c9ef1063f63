package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/ad"
	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// builder makes a scalar cost from the parameter node x.
type builder func(x *gorgonia.Node) (*gorgonia.Node, error)

// tapeGraph is a graph with one parameter node, a scalar cost and its
// gradient, run by gorgonia's TapeMachine.
type tapeGraph struct {
	x, cost *gorgonia.Node
	grad    *gorgonia.Node
	m       gorgonia.VM
	shape   tensor.Shape
}

func newParam(g *gorgonia.ExprGraph, shape tensor.Shape) *gorgonia.Node {
	switch len(shape) {
	case 0:
		return gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("x"))
	case 1:
		return gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(shape...), gorgonia.WithName("x"))
	default:
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(shape...), gorgonia.WithName("x"))
	}
}

func newTapeGraph(t *testing.T, shape tensor.Shape, build builder) *tapeGraph {
	t.Helper()
	g := gorgonia.NewGraph()
	x := newParam(g, shape)
	cost, err := build(x)
	if err != nil {
		t.Fatalf("building graph: %v", err)
	}
	grads, err := gorgonia.Grad(cost, x)
	if err != nil {
		t.Fatalf("gorgonia.Grad: %v", err)
	}
	return &tapeGraph{x: x, cost: cost, grad: grads[0], m: gorgonia.NewTapeMachine(g), shape: shape}
}

// eval runs the tape at x and returns the cost and (a copy of) its gradient.
func (tg *tapeGraph) eval(x []float64) (float64, []float64, error) {
	var v gorgonia.Value
	if len(tg.shape) == 0 {
		v = gorgonia.NewF64(x[0])
	} else {
		v = tensor.New(tensor.WithShape(tg.shape.Clone()...), tensor.WithBacking(append([]float64(nil), x...)))
	}
	if err := gorgonia.Let(tg.x, v); err != nil {
		return 0, nil, err
	}
	tg.m.Reset()
	if err := tg.m.RunAll(); err != nil {
		return 0, nil, err
	}
	c, _, err := flat(tg.cost.Value())
	if err != nil {
		return 0, nil, err
	}
	gr, _, err := flat(tg.grad.Value())
	if err != nil {
		return 0, nil, err
	}
	return c[0], append([]float64(nil), gr...), nil
}

// checkGrad compares the symbolic gradient of build at x0 against central
// finite differences of the same tape.
func checkGrad(t *testing.T, name string, shape tensor.Shape, x0 []float64, build builder, tol float64) {
	t.Helper()
	tg := newTapeGraph(t, shape, build)
	_, got, err := tg.eval(x0)
	if err != nil {
		t.Fatalf("%s: eval: %v", name, err)
	}
	var fdErr error
	f := func(x []float64) float64 {
		c, _, err := tg.eval(x)
		if err != nil {
			fdErr = err
			return math.NaN()
		}
		return c
	}
	want := fd.Gradient(nil, f, x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	if fdErr != nil {
		t.Fatalf("%s: finite differences: %v", name, fdErr)
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Errorf("%s: gradient[%d] = %.10g, finite difference %.10g", name, i, got[i], want[i])
		}
	}
}

// weightedSum returns Σ w⊙y for fixed random weights, a scalar cost whose
// gradient exercises every output element differently.
func weightedSum(y *gorgonia.Node, seed uint64) (*gorgonia.Node, error) {
	if y.IsScalar() {
		return y, nil
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	w := make([]float64, y.Shape().TotalSize())
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	wn := gorgonia.NewConstant(tensor.New(tensor.WithShape(y.Shape().Clone()...), tensor.WithBacking(w)))
	p, err := gorgonia.HadamardProd(y, wn)
	if err != nil {
		return nil, err
	}
	return gorgonia.Sum(p)
}

// weighted is the builder weightedSum(f(x), seed).
func weighted(f builder, seed uint64) builder {
	return func(x *gorgonia.Node) (*gorgonia.Node, error) {
		y, err := f(x)
		if err != nil {
			return nil, err
		}
		return weightedSum(y, seed)
	}
}

// weightedSum2 is weightedSum(y, seedY) + weightedSum(z, seedZ): a scalar
// that depends on both outputs of a two-output op.
func weightedSum2(y, z *gorgonia.Node, seedY, seedZ uint64) (*gorgonia.Node, error) {
	a, errY := weightedSum(y, seedY)
	b, errZ := weightedSum(z, seedZ)
	if err := errors.Join(errY, errZ); err != nil {
		return nil, err
	}
	return gorgonia.Add(a, b)
}

// randSPD returns a well-conditioned random n×n SPD matrix, row-major.
func randSPD(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	s := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var v float64
			for k := 0; k < n; k++ {
				v += a[i*n+k] * a[j*n+k]
			}
			if i == j {
				v += float64(n)
			}
			s[i*n+j] = v
		}
	}
	return s
}

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// compileBuilt compiles the graph build makes of one parameter of the
// given shape.
func compileBuilt(t *testing.T, shape tensor.Shape, build builder) *ad.Program {
	t.Helper()
	g := gorgonia.NewGraph()
	x := newParam(g, shape)
	cost, err := build(x)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ad.Compile(g, cost, []*gorgonia.Node{x})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkScaledGradFD checks the tape gradient of −2.5·build at x, a
// non-unit output gradient, against gonum's central finite differences of
// −2.5·ref.
func checkScaledGradFD(t *testing.T, name string, shape tensor.Shape, x []float64, build builder, ref func([]float64) float64, tol float64) {
	t.Helper()
	tg := newTapeGraph(t, shape, func(th *gorgonia.Node) (*gorgonia.Node, error) {
		ll, err := build(th)
		if err != nil {
			return nil, err
		}
		return gorgonia.Mul(ll, gorgonia.NewConstant(-2.5))
	})
	_, got, err := tg.eval(x)
	if err != nil {
		t.Fatal(err)
	}
	want := fd.Gradient(nil, func(th []float64) float64 {
		return -2.5 * ref(th)
	}, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	for j := range want {
		if !closeTo(got[j], want[j], tol) {
			t.Errorf("%s: gradient[%d] = %v, finite difference %v", name, j, got[j], want[j])
		}
	}
}

// checkMatchesTape checks p's value (to 1e-12) and gradient (to gradTol) at
// x against the TapeMachine's want and wantGrad, and that LogDensityGrad
// does not allocate; it returns the value.
func checkMatchesTape(t *testing.T, name string, p *ad.Program, x []float64, want float64, wantGrad []float64, gradTol float64) float64 {
	t.Helper()
	grad := make([]float64, p.Dim())
	got, err := p.LogDensityGrad(x, grad)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !closeTo(got, want, 1e-12) {
		t.Errorf("%s: value %v, tape %v", name, got, want)
	}
	for j := range grad {
		if !closeTo(grad[j], wantGrad[j], gradTol) {
			t.Errorf("%s: gradient[%d] = %v, tape %v", name, j, grad[j], wantGrad[j])
		}
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = p.LogDensityGrad(x, grad) }); a != 0 {
		t.Errorf("%s: LogDensityGrad allocates %v times", name, a)
	}
	return got
}

// orNaN is f with NaN for an error, for finite differences.
func orNaN(f func([]float64) (float64, error)) func([]float64) float64 {
	return func(x []float64) float64 {
		if v, err := f(x); err == nil {
			return v
		}
		return math.NaN()
	}
}

// runKernel lowers op for shapes and evaluates it once.
func runKernel(t *testing.T, op lowerer, shapes []tensor.Shape, in ...[]float64) ([]float64, error) {
	t.Helper()
	k, _, out, err := lowerFor(op, shapes)
	if err != nil {
		return nil, err
	}
	if err := k.Eval(out, in); err != nil {
		return nil, err
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = k.Eval(out, in) }); allocs != 0 {
		t.Errorf("%v: Kernel.Eval allocates %v times per call", op, allocs)
	}
	return out, nil
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// TestCompiledMatchesTape compiles graphs built from every op with
// ad.Compile and checks that the native kernels reproduce the TapeMachine's
// value and gradient, with no fallback and no allocation.
func TestCompiledMatchesTape(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	spline := newSplineFixture(4, 3, 4, false)
	cases := []struct {
		name  string
		shape tensor.Shape
		x     []float64
		build builder
	}{
		{"mvnormal", tensor.Shape{3, 3}, randVec(rng, 9, 0.7), mvNormalBuilder(3, randVec(rng, 3, 1))},
		{"elementwise", tensor.Shape{4}, []float64{0.3, 0.7, 0.9, 0.05}, func(x *gorgonia.Node) (*gorgonia.Node, error) {
			var terms gorgonia.Nodes
			for _, f := range []func(*gorgonia.Node) (*gorgonia.Node, error){Lgamma, Digamma, Asinh, Sinh, Atanh, Softplus, LogSigmoid} {
				y, err := f(x)
				if err != nil {
					return nil, err
				}
				s, err := weightedSum(y, uint64(len(terms)))
				if err != nil {
					return nil, err
				}
				terms = append(terms, s)
			}
			return gorgonia.ReduceAdd(terms)
		}},
		{"logsumexp", tensor.Shape{3, 4}, randVec(rng, 12, 2), func(x *gorgonia.Node) (*gorgonia.Node, error) {
			y, err := LogSumExp(x, 1)
			if err != nil {
				return nil, err
			}
			return LogSumExp(y, 0)
		}},
		{"rqspline", spline.shapes()[1], spline.w, spline.build(1, false)},
		{"rqspline-inverse", spline.shapes()[0], spline.x, spline.build(0, true)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := newTapeGraph(t, c.shape, c.build)
			want, wantGrad, err := tg.eval(c.x)
			if err != nil {
				t.Fatal(err)
			}
			p := compileBuilt(t, c.shape, c.build)
			if fb := p.Fallbacks(); len(fb) != 0 {
				t.Errorf("fallbacks: %v", fb)
			}
			checkMatchesTape(t, c.name, p, c.x, want, wantGrad, 1e-10)
		})
	}
}

// mvNormalBuilder is the multivariate normal log-density of y with
// covariance AAᵀ + I as a function of A (n×n).
func mvNormalBuilder(n int, y []float64) builder {
	return func(a *gorgonia.Node) (*gorgonia.Node, error) {
		at, err := gorgonia.Transpose(a)
		if err != nil {
			return nil, err
		}
		aat, err := gorgonia.Mul(a, at)
		if err != nil {
			return nil, err
		}
		eye := make([]float64, n*n)
		for i := 0; i < n; i++ {
			eye[i*n+i] = 1
		}
		sigma, err := gorgonia.Add(aat, constNode(tensor.Shape{n, n}, eye))
		if err != nil {
			return nil, err
		}
		l, err := Cholesky(sigma)
		if err != nil {
			return nil, err
		}
		z, err := SolveTriangular(l, constNode(tensor.Shape{n}, y), true)
		if err != nil {
			return nil, err
		}
		sq, err := gorgonia.Square(z)
		if err != nil {
			return nil, err
		}
		quad, err := gorgonia.Sum(sq)
		if err != nil {
			return nil, err
		}
		ld, err := LogDetSPD(sigma)
		if err != nil {
			return nil, err
		}
		s, err := gorgonia.Add(quad, ld)
		if err != nil {
			return nil, err
		}
		return gorgonia.Mul(gorgonia.NewConstant(-0.5), s)
	}
}

// TestCompiledClonesConcurrent runs clones of a compiled program, whose
// Cholesky gradient kernel keeps scratch space, from several goroutines; run
// with -race.
func TestCompiledClonesConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const n = 4
	build := mvNormalBuilder(n, randVec(rng, n, 1))
	p := compileBuilt(t, tensor.Shape{n, n}, build)
	points := make([][]float64, 4)
	want := make([]float64, len(points))
	for i := range points {
		points[i] = randVec(rng, n*n, 0.7)
		grad := make([]float64, n*n)
		var err error
		if want[i], err = p.LogDensityGrad(points[i], grad); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, len(points))
	for i := range points {
		q := p.Clone()
		go func() {
			grad := make([]float64, n*n)
			for range 200 {
				v, err := q.LogDensityGrad(points[i], grad)
				if err != nil {
					errs <- err
					return
				}
				if v != want[i] {
					errs <- fmt.Errorf("clone %d: value %v, want %v", i, v, want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range points {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
