package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/internal/checks"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// glmFixture is a small logistic-regression data set.
type glmFixture struct {
	n, d int
	x, y []float64
}

func newGLMFixture(n, d int, seed uint64) *glmFixture {
	rng := rand.New(rand.NewPCG(seed, 3))
	f := &glmFixture{n: n, d: d, x: randVec(rng, n*d, 1), y: make([]float64, n)}
	for i := range f.y {
		if rng.Float64() < 0.5 {
			f.y[i] = 1
		}
	}
	return f
}

// reference is the log-likelihood and its gradient in plain Go, with the
// textbook (overflow-prone) formulas.
func (f *glmFixture) reference(beta []float64) (float64, []float64) {
	var s float64
	grad := make([]float64, f.d)
	for i := 0; i < f.n; i++ {
		var eta float64
		for j := 0; j < f.d; j++ {
			eta += f.x[i*f.d+j] * beta[j]
		}
		s += f.y[i]*eta - math.Log(1+math.Exp(eta))
		r := f.y[i] - 1/(1+math.Exp(-eta))
		for j := 0; j < f.d; j++ {
			grad[j] += f.x[i*f.d+j] * r
		}
	}
	return s, grad
}

// data adds x and y to g as data nodes.
func (f *glmFixture) data(g *gorgonia.ExprGraph) (x, y *gorgonia.Node) {
	x = gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(f.n, f.d), gorgonia.WithName("X"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(f.n, f.d), tensor.WithBacking(append([]float64(nil), f.x...)))))
	y = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(f.n), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(f.n), tensor.WithBacking(append([]float64(nil), f.y...)))))
	return x, y
}

// fused builds the log-likelihood with BernoulliLogitGLM.
func (f *glmFixture) fused(beta *gorgonia.Node) (*gorgonia.Node, error) {
	x, y := f.data(beta.Graph())
	return BernoulliLogitGLM(x, beta, y)
}

// plain builds the same log-likelihood from gorgonia primitives and Softplus.
func (f *glmFixture) plain(beta *gorgonia.Node) (*gorgonia.Node, error) {
	x, y := f.data(beta.Graph())
	eta, err := gorgonia.Mul(x, beta)
	if err != nil {
		return nil, err
	}
	ye, err := gorgonia.HadamardProd(y, eta)
	if err != nil {
		return nil, err
	}
	sp, err := Softplus(eta)
	if err != nil {
		return nil, err
	}
	d, err := gorgonia.Sub(ye, sp)
	if err != nil {
		return nil, err
	}
	return gorgonia.Sum(d)
}

func TestBernoulliLogitGLMValue(t *testing.T) {
	f := newGLMFixture(40, 3, 1)
	beta := []float64{0.7, -1.2, 0.4}
	shapes := []tensor.Shape{{f.n, f.d}, {f.d}, {f.n}}
	got, err := runKernel(t, glmOp{}, shapes, f.x, beta, f.y)
	if err != nil {
		t.Fatal(err)
	}
	want, wantGrad := f.reference(beta)
	if !closeTo(got[0], want, 1e-13) {
		t.Errorf("value %v, reference %v", got[0], want)
	}
	for j := range wantGrad {
		if !closeTo(got[1+j], wantGrad[j], 1e-13) {
			t.Errorf("gradient[%d] = %v, reference %v", j, got[1+j], wantGrad[j])
		}
	}
	viaDo, err := tapeValue(tensor.Shape{f.d}, beta, f.fused)
	if err != nil {
		t.Fatal(err)
	}
	if len(viaDo) != 1 || viaDo[0] != got[0] {
		t.Errorf("Do %v, kernel %v", viaDo, got[0])
	}
	// The backward kernel scales the packed gradient by the output gradient.
	gbar := make([]float64, f.d+1)
	gbar[0] = -2.5
	packed := []tensor.Shape{{f.d + 1}, {f.d + 1}}
	back, err := runKernel(t, glmGradOp{off: 1, n: f.d}, packed, got, gbar)
	if err != nil {
		t.Fatal(err)
	}
	for j := range back {
		if back[j] != -2.5*got[1+j] {
			t.Errorf("backward[%d] = %v, want %v", j, back[j], -2.5*got[1+j])
		}
	}

	// Stable where exp(η) overflows: η = ±1000 with y = 1 and 0 gives
	// 0 + (−1000) + (−1000) + 0, and residuals 0, −1, 1, 0 weighted by x
	// give the gradient −1000 − 1000.
	big := &glmFixture{n: 4, d: 1, x: []float64{1000, 1000, -1000, -1000}, y: []float64{1, 0, 1, 0}}
	got, err = runKernel(t, glmOp{}, []tensor.Shape{{4, 1}, {1}, {4}}, big.x, []float64{1}, big.y)
	if err != nil || got[0] != -2000 || got[1] != -2000 {
		t.Errorf("value and gradient at η = ±1000: %v, %v, want [-2000 -2000]", got, err)
	}
}

func TestBernoulliLogitGLMGradient(t *testing.T) {
	f := newGLMFixture(30, 4, 2)
	beta := []float64{0.3, -0.8, 1.1, 0.05}
	checkGrad(t, "BernoulliLogitGLM", tensor.Shape{f.d}, beta, f.fused, 1e-7)

	// And directly against gonum's finite differences of the plain-Go
	// reference, through a non-unit output gradient.
	checkScaledGradFD(t, "BernoulliLogitGLM", tensor.Shape{f.d}, beta, f.fused, func(b []float64) float64 {
		v, _ := f.reference(b)
		return v
	}, 1e-7)
}

// TestBernoulliLogitGLMCompiled checks ad.Compile's native program against
// the TapeMachine and against the same model built from primitives, with no
// fallback, no allocation and independent clones.
func TestBernoulliLogitGLMCompiled(t *testing.T) {
	f := newGLMFixture(50, 5, 3)
	rng := rand.New(rand.NewPCG(4, 5))
	beta := randVec(rng, f.d, 0.5)
	prior := func(b *gorgonia.Node, ll *gorgonia.Node) (*gorgonia.Node, error) {
		sq, err := gorgonia.Square(b)
		if err != nil {
			return nil, err
		}
		s, err := gorgonia.Sum(sq)
		if err != nil {
			return nil, err
		}
		p, err := gorgonia.Mul(gorgonia.NewConstant(-0.5), s)
		if err != nil {
			return nil, err
		}
		return gorgonia.Add(ll, p)
	}
	build := func(ll builder) builder {
		return func(b *gorgonia.Node) (*gorgonia.Node, error) {
			v, err := ll(b)
			if err != nil {
				return nil, err
			}
			return prior(b, v)
		}
	}
	compile := func(bd builder) *ad.Program {
		p := compileBuilt(t, tensor.Shape{f.d}, bd)
		if fb := p.Fallbacks(); len(fb) != 0 {
			t.Errorf("fallbacks: %v", fb)
		}
		return p
	}
	tape := newTapeGraph(t, tensor.Shape{f.d}, build(f.fused))
	want, wantGrad, err := tape.eval(beta)
	if err != nil {
		t.Fatal(err)
	}
	fusedProg, plainProg := compile(build(f.fused)), compile(build(f.plain))
	for name, p := range map[string]*ad.Program{"fused": fusedProg, "fused-clone": fusedProg.Clone(), "plain": plainProg} {
		got := checkMatchesTape(t, name, p, beta, want, wantGrad, 1e-12)
		if v, err := p.LogDensity(beta); err != nil || v != got {
			t.Errorf("%s: LogDensity %v, %v; LogDensityGrad %v", name, v, err, got)
		}
	}
}

func TestBernoulliLogitGLMErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(4, 2))
	b := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2))
	y := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4))
	bad := []struct {
		name    string
		x, b, y *gorgonia.Node
	}{
		{"beta too long", x, gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3)), y},
		{"y too short", x, b, gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3))},
		{"x a vector", y, b, y},
		{"beta a matrix", x, x, y},
		{"nil beta", x, nil, y},
	}
	for _, c := range bad {
		if _, err := BernoulliLogitGLM(c.x, c.b, c.y); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := BernoulliLogitGLM(x, b, y); err != nil {
		t.Errorf("well-shaped arguments: %v", err)
	}
	if _, err := (glmOp{}).Lower([]tensor.Shape{{4, 2}, {2}, {5}}); err == nil {
		t.Error("Lower with mismatched y: no error")
	}
	// Outcomes other than 0 and 1 are outside the Bernoulli's support.
	shapes := []tensor.Shape{{2, 1}, {1}, {2}}
	if _, err := runKernel(t, glmOp{}, shapes, []float64{1, 2}, []float64{0.5}, []float64{1, 0.5}); !errors.Is(err, ErrDomain) {
		t.Errorf("y = 0.5: error %v, want ErrDomain", err)
	}
	// The packed gradient entries are internal: differentiating through
	// them is refused rather than silently wrong.
	if _, err := runKernel(t, glmGradOp{off: 1, n: 1}, []tensor.Shape{{2}, {2}}, []float64{-1, 0.5}, []float64{1, 1}); !errors.Is(err, errGLMPacked) {
		t.Errorf("gradient through the packed gradient: error %v, want errGLMPacked", err)
	}
	// Wrong buffers are reported, not a panic.
	k, err := (glmOp{}).Lower(shapes)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Eval(make([]float64, 1), [][]float64{{1}, {0.5}, {1, 0}}); err == nil {
		t.Error("short x buffer: no error")
	}
}

// TestBernoulliLogitGLMClonesConcurrent runs clones of one program in
// parallel at different points (go test -race): the forward kernel's
// scratch and the packed gradient are per clone.
func TestBernoulliLogitGLMClonesConcurrent(t *testing.T) {
	f := newGLMFixture(60, 4, 6)
	p := compileBuilt(t, tensor.Shape{f.d}, f.fused)
	const workers = 4
	rng := rand.New(rand.NewPCG(7, 8))
	points := make([][]float64, workers)
	for w := range points {
		points[w] = randVec(rng, f.d, 0.5)
	}
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		q := p.Clone()
		go func(beta []float64) {
			grad := make([]float64, f.d)
			want, wantGrad := f.reference(beta)
			for it := 0; it < 50; it++ {
				v, err := q.LogDensityGrad(beta, grad)
				if err != nil {
					errs <- err
					return
				}
				if !closeTo(v, want, 1e-12) {
					errs <- fmt.Errorf("value %v, reference %v", v, want)
					return
				}
				for j := range grad {
					if !closeTo(grad[j], wantGrad[j], 1e-12) {
						errs <- fmt.Errorf("gradient[%d] = %v, reference %v", j, grad[j], wantGrad[j])
						return
					}
				}
			}
			errs <- nil
		}(points[w])
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

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
