package ops

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/checks"
)

// famFixture is a data set for one GLM family: n rows of d covariates and
// outcomes drawn from the model at a random β (σ = 0.7 for the normal).
type famFixture struct {
	fam  glmFamily
	n, d int
	x, y []float64
}

func newFamFixture(fam glmFamily, n, d int, seed uint64) *famFixture {
	rng := rand.New(rand.NewPCG(seed, 11))
	f := &famFixture{fam: fam, n: n, d: d, x: randVec(rng, n*d, 1), y: make([]float64, n)}
	beta := randVec(rng, d, 0.5/math.Sqrt(float64(d)))
	for i := range f.y {
		var eta float64
		for j := 0; j < d; j++ {
			eta += f.x[i*d+j] * beta[j]
		}
		switch fam {
		case glmBernoulliLogit:
			if rng.Float64() < 1/(1+math.Exp(-eta)) {
				f.y[i] = 1
			}
		case glmPoissonLog:
			// Knuth's method: fine for the small means here.
			l, k, p := math.Exp(-math.Exp(eta)), 0.0, rng.Float64()
			for p > l {
				k++
				p *= rng.Float64()
			}
			f.y[i] = k
		case glmNormalID:
			f.y[i] = eta + 0.7*rng.NormFloat64()
		}
	}
	return f
}

// params is the parameter count: d, and σ for the normal family.
func (f *famFixture) params() int {
	if f.fam.hasScale() {
		return f.d + 1
	}
	return f.d
}

// reference is the log-likelihood and its gradient with respect to β (and
// σ) from the textbook formulas, row by row.
func (f *famFixture) reference(theta []float64) (float64, []float64) {
	var s float64
	grad := make([]float64, f.params())
	for i := 0; i < f.n; i++ {
		var eta float64
		for j := 0; j < f.d; j++ {
			eta += f.x[i*f.d+j] * theta[j]
		}
		var r float64
		switch f.fam {
		case glmBernoulliLogit:
			s += f.y[i]*eta - math.Log1p(math.Exp(eta))
			r = f.y[i] - 1/(1+math.Exp(-eta))
		case glmPoissonLog:
			lg, _ := math.Lgamma(f.y[i] + 1)
			s += f.y[i]*eta - math.Exp(eta) - lg
			r = f.y[i] - math.Exp(eta)
		case glmNormalID:
			sigma := theta[f.d]
			z := (f.y[i] - eta) / sigma
			s += -0.5*z*z - math.Log(sigma) - 0.5*math.Log(2*math.Pi)
			r = z / sigma
			grad[f.d] += (z*z - 1) / sigma
		}
		for j := 0; j < f.d; j++ {
			grad[j] += f.x[i*f.d+j] * r
		}
	}
	return s, grad
}

// shapes and inputs of the kernel at theta.
func (f *famFixture) kernelArgs(theta []float64) ([]tensor.Shape, [][]float64) {
	shapes := []tensor.Shape{{f.n, f.d}, {f.d}, {f.n}}
	in := [][]float64{f.x, theta[:f.d], f.y}
	if f.fam.hasScale() {
		shapes = append(shapes, tensor.ScalarShape())
		in = append(in, theta[f.d:f.d+1])
	}
	return shapes, in
}

// build returns the log-likelihood as a graph of the parameter vector θ
// (β, then σ for the normal family).
func (f *famFixture) build(theta *gorgonia.Node) (*gorgonia.Node, error) {
	g := theta.Graph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(f.n, f.d), gorgonia.WithName("X"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(f.n, f.d), tensor.WithBacking(append([]float64(nil), f.x...)))))
	y := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(f.n), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(f.n), tensor.WithBacking(append([]float64(nil), f.y...)))))
	switch f.fam {
	case glmBernoulliLogit:
		return BernoulliLogitGLM(x, theta, y)
	case glmPoissonLog:
		return PoissonLogGLM(x, theta, y)
	}
	beta, err := gorgonia.Slice(theta, gorgonia.S(0, f.d))
	if err != nil {
		return nil, err
	}
	sigma, err := gorgonia.Slice(theta, gorgonia.S(f.d))
	if err != nil {
		return nil, err
	}
	return NormalIDGLM(x, beta, y, sigma)
}

// point is a parameter vector near the data's β, with σ = 0.8.
func (f *famFixture) point(seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 12))
	theta := randVec(rng, f.params(), 0.3/math.Sqrt(float64(f.d)))
	if f.fam.hasScale() {
		theta[f.d] = 0.8
	}
	return theta
}

var glmFamilies = []glmFamily{glmBernoulliLogit, glmPoissonLog, glmNormalID}

// TestGLMFamiliesKernel checks each family's kernel against the row-by-row
// reference, with sizes that leave every remainder of the four-row and
// 64-row blocks.
func TestGLMFamiliesKernel(t *testing.T) {
	for _, fam := range glmFamilies {
		for _, sz := range [][2]int{{1, 1}, {7, 3}, {67, 5}, {130, 9}} {
			f := newFamFixture(fam, sz[0], sz[1], uint64(sz[0]))
			theta := f.point(1)
			shapes, in := f.kernelArgs(theta)
			got, err := runKernel(t, glmOp{fam: fam}, shapes, in...)
			if err != nil {
				t.Fatalf("%v %v: %v", fam, sz, err)
			}
			want, wantGrad := f.reference(theta)
			if !closeTo(got[0], want, 1e-12) {
				t.Errorf("%v %v: value %v, reference %v", fam, sz, got[0], want)
			}
			for j := range wantGrad {
				if !closeTo(got[1+j], wantGrad[j], 1e-12) {
					t.Errorf("%v %v: gradient[%d] = %v, reference %v", fam, sz, j, got[1+j], wantGrad[j])
				}
			}
		}
	}
}

// TestGLMFamiliesGradient checks the gradients that reach the parameters
// through gorgonia's symbolic differentiation against central finite
// differences of the reference, through a non-unit output gradient.
func TestGLMFamiliesGradient(t *testing.T) {
	for _, fam := range glmFamilies {
		f := newFamFixture(fam, 40, 4, 9)
		theta := f.point(2)
		checkGrad(t, fam.String(), tensor.Shape{f.params()}, theta, f.build, 1e-7)
		checkScaledGradFD(t, fam.String(), tensor.Shape{f.params()}, theta, f.build, func(th []float64) float64 {
			v, _ := f.reference(th)
			return v
		}, 1e-6)
	}
}

// TestGLMFamiliesCompiled checks ad.Compile's native programs against the
// TapeMachine: no fallback, no allocation.
func TestGLMFamiliesCompiled(t *testing.T) {
	for _, fam := range glmFamilies {
		f := newFamFixture(fam, 50, 5, 3)
		theta := f.point(3)
		tape := newTapeGraph(t, tensor.Shape{f.params()}, f.build)
		want, wantGrad, err := tape.eval(theta)
		if err != nil {
			t.Fatal(err)
		}
		p := compileBuilt(t, tensor.Shape{f.params()}, f.build)
		if fb := p.Fallbacks(); len(fb) != 0 {
			t.Errorf("%v: fallbacks %v", fam, fb)
		}
		checkMatchesTape(t, fam.String(), p, theta, want, wantGrad, 1e-12)
	}
}

// TestGLMWorkersDeterministic evaluates data sets of several chunks with 1
// to 5 workers, directly and through ad.Program.SetWorkers: the results
// must be bit-for-bit the same (run with -race to check the partials are
// per chunk).
func TestGLMWorkersDeterministic(t *testing.T) {
	n := checks.Size(9000, 4500)
	for _, fam := range glmFamilies {
		f := newFamFixture(fam, n, 7, 4)
		theta := f.point(4)
		shapes, in := f.kernelArgs(theta)
		k, err := glmOp{fam: fam}.Lower(shapes)
		if err != nil {
			t.Fatal(err)
		}
		gk := k.(*glmKernel)
		if gk.nChunks < 2 {
			t.Fatalf("%v: %d rows make %d chunk(s), want several", fam, n, gk.nChunks)
		}
		var first []float64
		for w := 1; w <= 5; w++ {
			gk.SetWorkers(w)
			out := make([]float64, len(theta)+1)
			if err := gk.Eval(out, in); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = out
				want, wantGrad := f.reference(theta)
				if !closeTo(out[0], want, 1e-11) {
					t.Errorf("%v: value %v, reference %v", fam, out[0], want)
				}
				for j := range wantGrad {
					if !closeTo(out[1+j], wantGrad[j], 1e-11) {
						t.Errorf("%v: gradient[%d] = %v, reference %v", fam, j, out[1+j], wantGrad[j])
					}
				}
				continue
			}
			for j := range out {
				if out[j] != first[j] {
					t.Errorf("%v, %d workers: entry %d = %v, one worker %v", fam, w, j, out[j], first[j])
				}
			}
		}

		p := compileBuilt(t, tensor.Shape{f.params()}, f.build)
		grad1 := make([]float64, p.Dim())
		v1, err := p.LogDensityGrad(theta, grad1)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.SetWorkers(3); err != nil {
			t.Fatal(err)
		}
		q := p.Clone()
		grad3 := make([]float64, p.Dim())
		for _, prog := range []*ad.Program{p, q} {
			v3, err := prog.LogDensityGrad(theta, grad3)
			if err != nil {
				t.Fatal(err)
			}
			if v3 != v1 || v3 != first[0] {
				t.Errorf("%v: program value %v with 3 workers, %v with 1, kernel %v", fam, v3, v1, first[0])
			}
			for j := range grad3 {
				if grad3[j] != grad1[j] {
					t.Errorf("%v: program gradient[%d] = %v with 3 workers, %v with 1", fam, j, grad3[j], grad1[j])
				}
			}
		}
	}
	if err := (&ad.Program{}).SetWorkers(0); err == nil {
		t.Error("SetWorkers(0): no error")
	}
}

func TestGLMFamiliesErrors(t *testing.T) {
	// Counts must be non-negative integers.
	shapes := []tensor.Shape{{2, 1}, {1}, {2}}
	for _, y := range [][]float64{{1, -1}, {0.5, 2}, {math.NaN(), 1}, {math.Inf(1), 0}} {
		if _, err := runKernel(t, glmOp{fam: glmPoissonLog}, shapes, []float64{1, 2}, []float64{0.5}, y); !errors.Is(err, ErrDomain) {
			t.Errorf("Poisson y = %v: error %v, want ErrDomain", y, err)
		}
	}
	// The cached constant follows y.
	k, err := glmOp{fam: glmPoissonLog}.Lower(shapes)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 2)
	y := []float64{3, 0}
	for _, y3 := range []float64{3, 5, 3} {
		y[0] = y3
		if err := k.Eval(out, [][]float64{{1, 2}, {0.5}, y}); err != nil {
			t.Fatal(err)
		}
		lg, _ := math.Lgamma(y3 + 1)
		want := y3*0.5 - math.Exp(0.5) - lg - math.Exp(1)
		if !closeTo(out[0], want, 1e-14) {
			t.Errorf("Poisson y = %v: value %v, want %v", y, out[0], want)
		}
	}
	// Linear predictors beyond the inlined exp's range take math.Exp.
	for _, eta := range []float64{-750, -700, 699.5, 700.5} {
		got, err := runKernel(t, glmOp{fam: glmPoissonLog}, []tensor.Shape{{1, 1}, {1}, {1}}, []float64{eta}, []float64{1}, []float64{2})
		if err != nil {
			t.Fatal(err)
		}
		mu := math.Exp(eta)
		if want := 2*eta - mu - math.Log(2); !closeTo(got[0], want, 1e-14) || !closeTo(got[1], eta*(2-mu), 1e-14) {
			t.Errorf("Poisson at η = %v: %v, want value %v, gradient %v", eta, got, want, eta*(2-mu))
		}
	}
	// σ must be positive and finite.
	nshapes := []tensor.Shape{{2, 1}, {1}, {2}, {}}
	for _, s := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := runKernel(t, glmOp{fam: glmNormalID}, nshapes, []float64{1, 2}, []float64{0.5}, []float64{1, 2}, []float64{s}); !errors.Is(err, ErrDomain) {
			t.Errorf("normal σ = %v: error %v, want ErrDomain", s, err)
		}
	}
	// Shapes.
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(4, 2))
	b := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2))
	yv := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4))
	sigma := gorgonia.NewScalar(g, tensor.Float64)
	if _, err := NormalIDGLM(x, b, yv, nil); err == nil {
		t.Error("NormalIDGLM with nil sigma: no error")
	}
	if _, err := NormalIDGLM(x, b, yv, b); err == nil {
		t.Error("NormalIDGLM with a vector sigma: no error")
	}
	if _, err := PoissonLogGLM(x, b, b); err == nil {
		t.Error("PoissonLogGLM with short y: no error")
	}
	if _, err := NormalIDGLM(x, b, yv, sigma); err != nil {
		t.Errorf("NormalIDGLM, well-shaped arguments: %v", err)
	}
	if _, err := PoissonLogGLM(x, b, yv); err != nil {
		t.Errorf("PoissonLogGLM, well-shaped arguments: %v", err)
	}
}
