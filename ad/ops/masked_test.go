package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/gemm"
	"github.com/trjgo/trj/internal/rqspline"
)

// flatGraph builds a cost from views of one flat parameter vector of the
// given total size, compiles it and checks the gradient against finite
// differences at x0.
func checkCompiledGrad(t *testing.T, name string, x0 []float64, build func(g *gorgonia.ExprGraph, view func(off int, shape ...int) *gorgonia.Node) (*gorgonia.Node, error), tol float64) *ad.Program {
	t.Helper()
	g := gorgonia.NewGraph()
	p := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(len(x0)), gorgonia.WithName("p"))
	view := func(off int, shape ...int) *gorgonia.Node {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := gorgonia.Must(Slice(p, gorgonia.S(off, off+n)))
		if len(shape) > 1 {
			v = gorgonia.Must(gorgonia.Reshape(v, tensor.Shape(shape)))
		}
		return v
	}
	cost, err := build(g, view)
	if err != nil {
		t.Fatalf("%s: building: %v", name, err)
	}
	prog, err := ad.Compile(g, cost, []*gorgonia.Node{p})
	if err != nil {
		t.Fatalf("%s: compiling: %v", name, err)
	}
	if fb := prog.Fallbacks(); len(fb) > 0 {
		t.Errorf("%s: fallbacks %v", name, fb)
	}
	got := make([]float64, len(x0))
	if _, err := prog.LogDensityGrad(x0, got); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want := fd.Gradient(nil, orNaN(prog.LogDensity), x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Errorf("%s: gradient[%d] = %.10g, finite difference %.10g", name, i, got[i], want[i])
		}
	}
	return prog
}

func TestMaskedLinearGradient(t *testing.T) {
	// A narrow input (one transposed product) and a wide one with several
	// blocks (block products).
	for _, in := range []int{4, narrowInput + 2} {
		testMaskedLinearGradient(t, in, []int{0, 1, 1, 3, in})
	}
	// One block of a wide input: transposed products.
	testMaskedLinearGradient(t, narrowInput+2, []int{0, 0, narrowInput + 2, narrowInput + 2, narrowInput + 2})
}

func testMaskedLinearGradient(t *testing.T, in int, prefix []int) {
	const B, out, m = 3, 5, 2
	for _, act := range []Activation{Identity, ReLU, Tanh} {
		for _, withExtra := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(1, uint64(act)))
			x0 := randVec(rng, B*in+out*in+out+B*m+out*m, 1)
			checkCompiledGrad(t, "MaskedLinear/"+act.String(), x0, func(g *gorgonia.ExprGraph, view func(int, ...int) *gorgonia.Node) (*gorgonia.Node, error) {
				x := view(0, B, in)
				w := view(B*in, out, in)
				b := view(B*in+out*in, out)
				var extra []*gorgonia.Node
				if withExtra {
					o := B*in + out*in + out
					extra = []*gorgonia.Node{view(o, B, m), view(o+B*m, out, m)}
				}
				y, err := MaskedLinear(x, w, b, prefix, act, extra...)
				if err != nil {
					return nil, err
				}
				return weightedSum(y, 7)
			}, 1e-6)
		}
	}
}

func TestMaskedLinearIgnoresMaskedWeights(t *testing.T) {
	const B, in, out = 2, 3, 3
	prefix := []int{1, 2, 2}
	x := []float64{1, 2, 3, -1, 0.5, 2}
	w := []float64{1, 9, 9, 2, 3, 9, -1, 1, 9}
	b := []float64{0.1, 0.2, 0.3}
	op := maskedOp{mask: mustMask(t, prefix, out, in), pairs: 1}
	got, err := runKernel(t, op, []tensor.Shape{{B, in}, {out, in}, {out}}, x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < B; r++ {
		for j := 0; j < out; j++ {
			want := b[j]
			for i := 0; i < prefix[j]; i++ {
				want += x[r*in+i] * w[j*in+i]
			}
			if math.Abs(got[r*out+j]-want) > 1e-12 {
				t.Errorf("out[%d,%d] = %v, want %v", r, j, got[r*out+j], want)
			}
		}
	}
	// A single row takes the matrix-vector path.
	got1, err := runKernel(t, op, []tensor.Shape{{1, in}, {out, in}, {out}}, x[:in], w, b)
	if err != nil {
		t.Fatal(err)
	}
	for j := range got1 {
		if math.Abs(got1[j]-got[j]) > 1e-12 {
			t.Errorf("one row: out[%d] = %v, batch gives %v", j, got1[j], got[j])
		}
	}
	if _, err := MaskedLinear(nil, nil, nil, nil, ReLU); err == nil {
		t.Error("nil inputs accepted")
	}
	g := gorgonia.NewGraph()
	xn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(B, in), gorgonia.WithName("x"))
	wn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(out, in), gorgonia.WithName("w"))
	bn := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(out), gorgonia.WithName("b"))
	if _, err := MaskedLinear(xn, wn, bn, []int{1, 2}, ReLU); err == nil {
		t.Error("prefix of the wrong length accepted")
	}
	if _, err := MaskedLinear(xn, wn, bn, []int{1, 2, 4}, ReLU); err == nil {
		t.Error("prefix beyond the inputs accepted")
	}
}

func mustMask(t *testing.T, prefix []int, out, in int) *mask {
	t.Helper()
	m, err := newMask(prefix, out, in)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPermuteColumnsGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x0 := randVec(rng, 3*4, 1)
	checkCompiledGrad(t, "PermuteColumns", x0, func(g *gorgonia.ExprGraph, view func(int, ...int) *gorgonia.Node) (*gorgonia.Node, error) {
		y, err := PermuteColumns(view(0, 3, 4), []int{2, 0, 3, 1})
		if err != nil {
			return nil, err
		}
		return weightedSum(y, 3)
	}, 1e-7)
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"))
	for _, bad := range [][]int{{0, 1}, {0, 1, 1}, {0, 1, 3}} {
		if _, err := PermuteColumns(x, bad); err == nil {
			t.Errorf("permutation %v accepted", bad)
		}
	}
}

func TestRQSplineRowsGradient(t *testing.T) {
	// A batch uses knot tables; a single row the free spline functions.
	for _, B := range []int{3, 1} {
		testRQSplineRowsGradient(t, B)
	}
}

func testRQSplineRowsGradient(t *testing.T, B int) {
	const n, K = 3, 4
	per := rqspline.NumParams(K)
	for _, inverse := range []bool{false, true} {
		for _, shared := range []int{0, 1} {
			rng := rand.New(rand.NewPCG(3, uint64(shared)))
			x0 := make([]float64, B*n+B*n*per)
			for i := 0; i < B*n; i++ {
				x0[i] = 0.05 + 0.9*rng.Float64()
			}
			copy(x0[B*n:], randVec(rng, B*n*per, 1))
			// Shared coordinates must have equal parameters in every row;
			// the cost takes them from row 0's view for all rows.
			name := "RQSplineRows"
			if inverse {
				name += "/inverse"
			}
			checkCompiledGrad(t, name, x0, func(g *gorgonia.ExprGraph, view func(int, ...int) *gorgonia.Node) (*gorgonia.Node, error) {
				theta := view(B*n, B, n*per)
				y, ld, err := RQSplineRows(view(0, B, n), theta, SplineRows{Bins: K, LogitScale: 0.7, Shared: shared, Inverse: inverse})
				if err != nil {
					return nil, err
				}
				return weightedSum2(y, ld, 5, 6)
			}, 1e-5)
		}
	}
}

func TestRQSplineRowsMatchesScalar(t *testing.T) {
	const B, n, K = 2, 2, 5
	per := rqspline.NumParams(K)
	rng := rand.New(rand.NewPCG(4, 4))
	x := []float64{0.1, 0.7, 0.4, 0.95}
	theta := randVec(rng, B*n*per, 1)
	op := rowsOp{SplineRows: SplineRows{Bins: K, LogitScale: 1}}
	out, err := runKernel(t, op, []tensor.Shape{{B, n}, {B, n * per}}, x, theta)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < B; r++ {
		sum := 0.0
		for i := 0; i < n; i++ {
			p := theta[(r*n+i)*per:]
			y, d := rqspline.Forward(x[r*n+i], p[:K], p[K:2*K], p[2*K:per])
			sum += d
			if math.Abs(out[r*n+i]-y) > 1e-14 {
				t.Errorf("y[%d,%d] = %v, scalar spline %v", r, i, out[r*n+i], y)
			}
		}
		if math.Abs(out[B*n+r]-sum) > 1e-12 {
			t.Errorf("logDet[%d] = %v, scalar splines %v", r, out[B*n+r], sum)
		}
	}
}

// TestDgemm checks the products of MaskedLinear's kernels against gonum's
// Dgemm, within the error bound of the two sums: each element is within
// (k+2)·ε·(|alpha|·Σ|a||b| + |beta·c|) of the exact product.
func TestDgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func(n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.NormFloat64()
		}
		return d
	}
	abs := func(g blas64.General) blas64.General {
		d := make([]float64, len(g.Data))
		for i, v := range g.Data {
			d[i] = math.Abs(v)
		}
		g.Data = d
		return g
	}
	for _, sh := range [][3]int{{64, 300, 70}, {200, 130, 150}, {3, 700, 65}, {130, 130, 1}} {
		m, n, k := sh[0], sh[1], sh[2]
		work := make([]float64, gemm.WorkLen(k))
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, beta := range []float64{0, 1, 0.5} {
					a := blas64.General{Rows: m, Cols: k, Stride: k + 3, Data: fill(m * (k + 3))}
					if tA == blas.Trans {
						a = blas64.General{Rows: k, Cols: m, Stride: m, Data: fill(k * m)}
					}
					b := blas64.General{Rows: k, Cols: n, Stride: n, Data: fill(k * n)}
					if tB == blas.Trans {
						b = blas64.General{Rows: n, Cols: k, Stride: k + 1, Data: fill(n * (k + 1))}
					}
					c0 := fill(m * (n + 2))
					want := blas64.General{Rows: m, Cols: n, Stride: n + 2, Data: append([]float64(nil), c0...)}
					got := blas64.General{Rows: m, Cols: n, Stride: n + 2, Data: c0}
					bound := abs(want)
					blas64.Gemm(tA, tB, 1.5, abs(a), abs(b), beta, bound)
					blas64.Gemm(tA, tB, 1.5, a, b, beta, want)
					dgemm(tA, tB, 1.5, a, b, beta, got, work)
					const eps = 0x1p-53
					for i := range got.Data {
						tol := 2.01 * float64(k+2) * eps * bound.Data[i]
						if math.Abs(got.Data[i]-want.Data[i]) > tol || (i%got.Stride >= n && got.Data[i] != want.Data[i]) {
							t.Fatalf("%v %v%v beta %v: element %d = %v, gonum %v", sh, tA, tB, beta, i, got.Data[i], want.Data[i])
						}
					}
				}
			}
		}
	}
}

// TestReLUMasks checks the branch-free ReLU and its gradient against the
// branching definitions on signed zeros, infinities and NaNs.
func TestReLUMasks(t *testing.T) {
	nan := math.NaN()
	vals := []float64{-2, math.Copysign(0, -1), 0, 3, math.Inf(1), math.Inf(-1), nan, -math.SmallestNonzeroFloat64}
	x := append([]float64(nil), vals...)
	relu(x)
	for i, v := range vals {
		want := v
		if v < 0 {
			want = 0
		}
		if math.Float64bits(x[i]) != math.Float64bits(want) {
			t.Errorf("relu(%v) = %v, want %v", v, x[i], want)
		}
	}
	for _, g := range vals {
		out := make([]float64, len(vals))
		gs := make([]float64, len(vals))
		for i := range gs {
			gs[i] = g
		}
		reluGrad(out, vals, gs)
		for i, y := range vals {
			want := 0.0
			if y > 0 {
				want = g
			}
			if math.Float64bits(out[i]) != math.Float64bits(want) {
				t.Errorf("reluGrad(y=%v, g=%v) = %v, want %v", y, g, out[i], want)
			}
		}
	}
}
