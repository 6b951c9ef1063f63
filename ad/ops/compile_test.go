package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

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
