package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
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
