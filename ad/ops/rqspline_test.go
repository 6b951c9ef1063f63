package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/internal/rqspline"
)

// splineFixture is a spline problem: n inputs, K bins, per-element or shared
// parameters.
type splineFixture struct {
	n, k    int
	shared  bool
	x       []float64
	w, h, d []float64
}

func newSplineFixture(seed uint64, n, k int, shared bool) splineFixture {
	rng := rand.New(rand.NewPCG(seed, 99))
	rows := n
	if shared {
		rows = 1
	}
	f := splineFixture{n: n, k: k, shared: shared}
	f.x = make([]float64, n)
	for i := range f.x {
		f.x[i] = 0.05 + 0.9*rng.Float64()
	}
	f.x[n-1] = 1.3 // outside [0, 1]: identity
	f.w = randVec(rng, rows*k, 1)
	f.h = randVec(rng, rows*k, 1)
	f.d = randVec(rng, rows*(k+1), 1)
	return f
}

func (f splineFixture) shapes() []tensor.Shape {
	if f.shared {
		return []tensor.Shape{{f.n}, {f.k}, {f.k}, {f.k + 1}}
	}
	return []tensor.Shape{{f.n}, {f.n, f.k}, {f.n, f.k}, {f.n, f.k + 1}}
}

func (f splineFixture) values() [][]float64 { return [][]float64{f.x, f.w, f.h, f.d} }

func constNode(s tensor.Shape, v []float64) *gorgonia.Node {
	return gorgonia.NewConstant(tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(append([]float64(nil), v...))))
}

// build returns a cost Σ a⊙y + Σ b⊙logDeriv with input arg as the parameter
// node and the other inputs as constants.
func (f splineFixture) build(arg int, inverse bool) builder {
	return func(p *gorgonia.Node) (*gorgonia.Node, error) {
		in := make([]*gorgonia.Node, 4)
		for i, s := range f.shapes() {
			if i == arg {
				in[i] = p
			} else {
				in[i] = constNode(s, f.values()[i])
			}
		}
		y, ld, err := RQSpline(in[0], in[1], in[2], in[3], inverse)
		if err != nil {
			return nil, err
		}
		return weightedSum2(y, ld, 21, 22)
	}
}

func TestRQSplineValues(t *testing.T) {
	for _, shared := range []bool{false, true} {
		f := newSplineFixture(1, 5, 4, shared)
		op := rqSplineOp{shared: shared}
		out, err := runKernel(t, op, f.shapes(), f.values()...)
		if err != nil {
			t.Fatal(err)
		}
		lay, err := op.layout(f.shapes()...)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range f.x {
			w, h, d := lay.params(f.values(), i)
			y, ld := rqspline.Forward(x, w, h, d)
			if out[i] != y || out[f.n+i] != ld {
				t.Errorf("shared=%t: element %d: (%v, %v), rqspline (%v, %v)", shared, i, out[i], out[f.n+i], y, ld)
			}
		}
		// Through the TapeMachine.
		g := gorgonia.NewGraph()
		in := make([]*gorgonia.Node, 4)
		for i, s := range f.shapes() {
			in[i] = constNode(s, f.values()[i])
		}
		in[0] = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(f.n), gorgonia.WithValue(tensor.New(tensor.WithShape(f.n), tensor.WithBacking(append([]float64(nil), f.x...)))))
		y, ld, err := RQSpline(in[0], in[1], in[2], in[3], false)
		if err != nil {
			t.Fatal(err)
		}
		m := gorgonia.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		yv, _, _ := flat(y.Value())
		lv, _, _ := flat(ld.Value())
		for i := range f.x {
			if yv[i] != out[i] || lv[i] != out[f.n+i] {
				t.Errorf("shared=%t: Do (%v, %v), kernel (%v, %v)", shared, yv[i], lv[i], out[i], out[f.n+i])
			}
		}
		m.Close()
		// The inverse op undoes the forward op and negates the log-derivative.
		inv := rqSplineOp{shared: shared, inverse: true}
		back, err := runKernel(t, inv, f.shapes(), out[:f.n], f.w, f.h, f.d)
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.x {
			if math.Abs(back[i]-f.x[i]) > 1e-12 || math.Abs(back[f.n+i]+out[f.n+i]) > 1e-9 {
				t.Errorf("shared=%t: inverse(forward(%v)) = (%v, %v), log-derivative %v", shared, f.x[i], back[i], back[f.n+i], out[f.n+i])
			}
		}
	}
}

func TestRQSplineGradient(t *testing.T) {
	names := []string{"x", "w", "h", "d"}
	for _, shared := range []bool{false, true} {
		for _, inverse := range []bool{false, true} {
			f := newSplineFixture(2, 4, 3, shared)
			for arg := range 4 {
				checkGrad(t, "RQSpline/"+names[arg], f.shapes()[arg], f.values()[arg], f.build(arg, inverse), 1e-5)
			}
		}
	}
}

func TestRQSplineErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3))
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 4))
	d := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 5))
	if _, _, err := RQSpline(x, w, w, w, false); err == nil {
		t.Error("derivatives with K columns: no error")
	}
	w2 := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 4))
	if _, _, err := RQSpline(x, w2, w2, d, false); err == nil {
		t.Error("parameters for 2 elements, x of 3: no error")
	}
	if _, _, err := RQSpline(x, w, w, d, false); err != nil {
		t.Errorf("valid shapes: %v", err)
	}
	f := newSplineFixture(3, 3, 2, false)
	f.h[1] = math.NaN()
	if _, err := runKernel(t, rqSplineOp{}, f.shapes(), f.values()...); err == nil {
		t.Error("NaN parameter: no error")
	}
}
