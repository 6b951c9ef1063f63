package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func symOf(a []float64, n int) *mat.SymDense {
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a[i*n+j]+a[j*n+i]))
		}
	}
	return s
}

// tapeValue evaluates build(x) at x with the TapeMachine, no gradient.
func tapeValue(shape tensor.Shape, x []float64, build builder) ([]float64, error) {
	g := gorgonia.NewGraph()
	xn := newParam(g, shape)
	y, err := build(xn)
	if err != nil {
		return nil, err
	}
	var v gorgonia.Value = tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(append([]float64(nil), x...)))
	if err := gorgonia.Let(xn, v); err != nil {
		return nil, err
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		return nil, err
	}
	d, _, err := flat(y.Value())
	return append([]float64(nil), d...), err
}

// gonumCholesky is gonum's Cholesky factorisation of s.
func gonumCholesky(t *testing.T, s mat.Symmetric) *mat.Cholesky {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		t.Fatal("gonum Cholesky failed")
	}
	return &ch
}

// randSPDFactored is randSPD(rng, n) with gonum's Cholesky factorisation.
func randSPDFactored(t *testing.T, rng *rand.Rand, n int) ([]float64, *mat.Cholesky) {
	t.Helper()
	a := randSPD(rng, n)
	return a, gonumCholesky(t, symOf(a, n))
}

func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5} {
		a, ch := randSPDFactored(t, rng, n)
		var want mat.TriDense
		ch.LTo(&want)
		sh := tensor.Shape{n, n}
		got, err := runKernel(t, choleskyOp{}, []tensor.Shape{sh}, a)
		if err != nil {
			t.Fatal(err)
		}
		viaDo, err := tapeValue(sh, a, Cholesky)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if !closeTo(got[i*n+j], want.At(i, j), 1e-12) {
					t.Errorf("n=%d L[%d,%d] = %v, gonum %v", n, i, j, got[i*n+j], want.At(i, j))
				}
				if got[i*n+j] != viaDo[i*n+j] {
					t.Errorf("n=%d L[%d,%d]: kernel %v, Do %v", n, i, j, got[i*n+j], viaDo[i*n+j])
				}
			}
		}
		// The gradient uses only the symmetric part of a, so perturb a
		// non-symmetric point: finite differences must still agree.
		x0 := append([]float64(nil), a...)
		if n > 1 {
			x0[1] += 0.3
		}
		checkGrad(t, "Cholesky", sh, x0, weighted(Cholesky, 7), 1e-6)
	}
}

func TestLogDetSPD(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 3, 6} {
		a, ch := randSPDFactored(t, rng, n)
		sh := tensor.Shape{n, n}
		l := make([]float64, n*n)
		if err := choleskyInto(l, a, n); err != nil {
			t.Fatal(err)
		}
		got, err := runKernel(t, logDetTriOp{}, []tensor.Shape{sh}, l)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(got[0], ch.LogDet(), 1e-12) {
			t.Errorf("n=%d: logdet %v, gonum %v", n, got[0], ch.LogDet())
		}
		viaDo, err := tapeValue(sh, a, LogDetSPD)
		if err != nil {
			t.Fatal(err)
		}
		if viaDo[0] != got[0] {
			t.Errorf("n=%d: kernel %v, Do %v", n, got[0], viaDo[0])
		}
		// The gradient is the inverse.
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			t.Fatal(err)
		}
		tg := newTapeGraph(t, sh, LogDetSPD)
		_, ga, err := tg.eval(a)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if !closeTo(ga[i*n+j], inv.At(i, j), 1e-10) {
					t.Errorf("n=%d: grad[%d,%d] = %v, inverse %v", n, i, j, ga[i*n+j], inv.At(i, j))
				}
			}
		}
		checkGrad(t, "LogDetSPD", sh, a, LogDetSPD, 1e-6)
	}
}

// TestCholeskyShared checks that LogDetSPD(a) and Cholesky(a) in one graph
// share a single factorisation node.
func TestCholeskyShared(t *testing.T) {
	g := gorgonia.NewGraph()
	a := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 3), gorgonia.WithName("a"))
	must(Cholesky(a))
	must(LogDetSPD(a))
	var count int
	for _, n := range g.AllNodes() {
		if _, ok := n.Op().(choleskyOp); ok {
			count++
		}
	}
	if count != 1 {
		t.Errorf("graph has %d Cholesky nodes, want 1", count)
	}
}

func TestSolveTriangular(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 4
	tm := randVec(rng, n*n, 1)
	for i := 0; i < n; i++ {
		tm[i*n+i] = 2 + math.Abs(tm[i*n+i])
	}
	for _, lower := range []bool{true, false} {
		for _, m := range []int{0, 3} { // 0: vector right-hand side
			bShape := tensor.Shape{n}
			cols := 1
			if m > 0 {
				bShape = tensor.Shape{n, m}
				cols = m
			}
			b := randVec(rng, n*cols, 1)
			got, err := runKernel(t, solveOp{lower: lower, bDims: len(bShape)}, []tensor.Shape{{n, n}, bShape}, tm, b)
			if err != nil {
				t.Fatal(err)
			}
			// Reference: gonum solve with the triangle as a dense matrix.
			tri := mat.NewDense(n, n, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					if (lower && j <= i) || (!lower && j >= i) {
						tri.Set(i, j, tm[i*n+j])
					}
				}
			}
			var want mat.Dense
			if err := want.Solve(tri, mat.NewDense(n, cols, b)); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for c := 0; c < cols; c++ {
					if !closeTo(got[i*cols+c], want.At(i, c), 1e-12) {
						t.Errorf("lower=%t m=%d: x[%d,%d] = %v, gonum %v", lower, m, i, c, got[i*cols+c], want.At(i, c))
					}
				}
			}
			// Gradient with respect to the matrix, b fixed.
			bc := tensor.New(tensor.WithShape(bShape.Clone()...), tensor.WithBacking(b))
			checkGrad(t, "SolveTriangular/T", tensor.Shape{n, n}, tm, weighted(func(x *gorgonia.Node) (*gorgonia.Node, error) {
				return SolveTriangular(x, gorgonia.NewConstant(bc), lower)
			}, 11), 1e-6)
			// Gradient with respect to b, the matrix fixed.
			tc := tensor.New(tensor.WithShape(n, n), tensor.WithBacking(tm))
			checkGrad(t, "SolveTriangular/b", bShape, b, func(x *gorgonia.Node) (*gorgonia.Node, error) {
				y, err := SolveTriangular(gorgonia.NewConstant(tc), x, lower)
				if err != nil {
					return nil, err
				}
				// Square so that the gradient depends on x.
				sq, err := gorgonia.Square(y)
				if err != nil {
					return nil, err
				}
				return weightedSum(sq, 12)
			}, 1e-6)
		}
	}
}

// TestMvNormalComposite checks a whole multivariate-normal log-density built
// from Cholesky, SolveTriangular and LogDetSPD against gonum, and its
// gradient with respect to the covariance factor against finite differences.
func TestMvNormalComposite(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 4
	y := randVec(rng, n, 1)
	a0 := randVec(rng, n*n, 0.7)
	build := func(a *gorgonia.Node) (*gorgonia.Node, error) {
		g := a.Graph()
		aat, err := gorgonia.Mul(a, must(gorgonia.Transpose(a)))
		if err != nil {
			return nil, err
		}
		eye := make([]float64, n*n)
		for i := 0; i < n; i++ {
			eye[i*n+i] = 1
		}
		sigma, err := gorgonia.Add(aat, gorgonia.NewConstant(tensor.New(tensor.WithShape(n, n), tensor.WithBacking(eye))))
		if err != nil {
			return nil, err
		}
		l, err := Cholesky(sigma)
		if err != nil {
			return nil, err
		}
		z, err := SolveTriangular(l, gorgonia.NewConstant(tensor.New(tensor.WithShape(n), tensor.WithBacking(y))), true)
		if err != nil {
			return nil, err
		}
		quad, err := gorgonia.Sum(must(gorgonia.Square(z)))
		if err != nil {
			return nil, err
		}
		ld, err := LogDetSPD(sigma)
		if err != nil {
			return nil, err
		}
		half := gorgonia.NewConstant(-0.5)
		c := gorgonia.NewConstant(-0.5 * n * math.Log(2*math.Pi))
		_ = g
		s, err := gorgonia.Add(quad, ld)
		if err != nil {
			return nil, err
		}
		return gorgonia.Add(must(gorgonia.Mul(half, s)), c)
	}
	tg := newTapeGraph(t, tensor.Shape{n, n}, build)
	val, _, err := tg.eval(a0)
	if err != nil {
		t.Fatal(err)
	}
	am := mat.NewDense(n, n, a0)
	var s mat.SymDense
	s.SymOuterK(1, am)
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+1)
	}
	ch := gonumCholesky(t, &s)
	var sy mat.VecDense
	if err := ch.SolveVecTo(&sy, mat.NewVecDense(n, y)); err != nil {
		t.Fatal(err)
	}
	want := -0.5 * (n*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(&sy, mat.NewVecDense(n, y)))
	if !closeTo(val, want, 1e-12) {
		t.Errorf("log-density %v, gonum %v", val, want)
	}
	checkGrad(t, "MvNormal", tensor.Shape{n, n}, a0, build, 1e-6)
}

func must(n *gorgonia.Node, err error) *gorgonia.Node {
	if err != nil {
		panic(err)
	}
	return n
}

func TestLinalgErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	rect := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3))
	sq := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 3))
	v2 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2))
	f32 := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 3))
	if _, err := Cholesky(rect); err == nil {
		t.Error("Cholesky of a 2×3 matrix: no error")
	}
	if _, err := LogDetSPD(rect); err == nil {
		t.Error("LogDetSPD of a 2×3 matrix: no error")
	}
	if _, err := Cholesky(f32); err == nil {
		t.Error("Cholesky of float32: no error")
	}
	if _, err := Cholesky(nil); err == nil {
		t.Error("Cholesky(nil): no error")
	}
	if _, err := SolveTriangular(sq, v2, true); err == nil {
		t.Error("SolveTriangular 3×3 with length-2 b: no error")
	}
	if _, err := SolveTriangular(rect, v2, true); err == nil {
		t.Error("SolveTriangular with a 2×3 matrix: no error")
	}
	if _, err := (choleskyOp{}).Lower([]tensor.Shape{{2, 3}}); err == nil {
		t.Error("Lower of Cholesky for 2×3: no error")
	}

	// Not positive definite: the kernel and the TapeMachine return
	// ErrNotPositiveDefinite.
	notPD := []float64{1, 2, 2, 1}
	sh := tensor.Shape{2, 2}
	if _, err := runKernel(t, choleskyOp{}, []tensor.Shape{sh}, notPD); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("Cholesky kernel on an indefinite matrix: %v", err)
	}
	if _, err := runKernel(t, logDetTriOp{}, []tensor.Shape{sh}, []float64{1, 0, 0, -1}); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("LogDetSPD kernel on a bad factor: %v", err)
	}
	// gorgonia flattens Do's error into its message, so errors.Is cannot
	// see through the TapeMachine.
	if _, err := tapeValue(sh, notPD, Cholesky); err == nil || !strings.Contains(err.Error(), ErrNotPositiveDefinite.Error()) {
		t.Errorf("Cholesky Do on an indefinite matrix: %v", err)
	}
	if _, err := tapeValue(sh, []float64{math.NaN(), 0, 0, 1}, LogDetSPD); err == nil || !strings.Contains(err.Error(), ErrNotPositiveDefinite.Error()) {
		t.Errorf("LogDetSPD Do on NaN: %v", err)
	}
	singular := []float64{1, 0, 5, 0}
	if _, err := runKernel(t, solveOp{lower: true, bDims: 1}, []tensor.Shape{sh, {2}}, singular, []float64{1, 1}); !errors.Is(err, ErrSingular) {
		t.Errorf("SolveTriangular kernel on a singular matrix: %v", err)
	}
	// Wrong buffer sizes are an error, not a panic.
	k, err := (choleskyOp{}).Lower([]tensor.Shape{sh})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Eval(make([]float64, 4), [][]float64{make([]float64, 3)}); err == nil {
		t.Error("Eval with a short input: no error")
	}
}
