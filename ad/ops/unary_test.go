package ops

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// unaryCases lists each public elementwise op with a reference
// implementation and points inside its domain.
var unaryCases = []struct {
	name  string
	build func(*gorgonia.Node) (*gorgonia.Node, error)
	kind  unaryKind
	ref   func(float64) float64
	x     []float64
}{
	{"Lgamma", Lgamma, kindLgamma, func(x float64) float64 { y, _ := math.Lgamma(x); return y }, []float64{0.3, 1.1, 2.5, 17.2, -0.5, -2.7}},
	// Away from the integers: gonum's Digamma switches the number of
	// recurrence steps there and jumps by ~1e-11, which a finite difference
	// with step 1e-6 magnifies past the tolerance.
	{"Digamma", Digamma, kindDigamma, mathext.Digamma, []float64{0.3, 1.1, 2.5, 17.2, -0.5, -2.7}},
	{"Asinh", Asinh, kindAsinh, math.Asinh, []float64{-30, -1.2, 0, 0.4, 3, 1e3}},
	{"Sinh", Sinh, kindSinh, math.Sinh, []float64{-5, -1.2, 0, 0.4, 3, 10}},
	{"Atanh", Atanh, kindAtanh, math.Atanh, []float64{-0.99, -0.5, 0, 0.3, 0.9, 0.999}},
	{"Softplus", Softplus, kindSoftplus, func(x float64) float64 { return math.Log(1 + math.Exp(x)) }, []float64{-30, -2, 0, 0.5, 3, 30}},
	{"LogSigmoid", LogSigmoid, kindLogSigmoid, func(x float64) float64 { return -math.Log(1 + math.Exp(-x)) }, []float64{-30, -2, 0, 0.5, 3, 30}},
	// The reference integrates e^{x cos θ} over (0, π) (DLMF 10.32.1).
	{"LogBesselI0", LogBesselI0, kindLogBesselI0, logI0Quadrature, []float64{-3, 0, 0.5, 4, 24, 40}},
}

// logI0Quadrature is log I₀(x) = log((1/π)∫₀^π e^{x cos θ} dθ) by the
// trapezoidal rule, exact to rounding for this periodic integrand.
func logI0Quadrature(x float64) float64 {
	const n = 400
	s := 0.0
	for i := range n {
		s += math.Exp(x * (math.Cos(math.Pi*(float64(i)+0.5)/n) - 1))
	}
	return x + math.Log(s/n)
}

func TestUnaryValues(t *testing.T) {
	for _, c := range unaryCases {
		sh := tensor.Shape{len(c.x)}
		got, err := runKernel(t, unaryOp{kind: c.kind}, []tensor.Shape{sh}, c.x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		viaDo, err := tapeValue(sh, c.x, c.build)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i, x := range c.x {
			if want := c.ref(x); !closeTo(got[i], want, 1e-13) {
				t.Errorf("%s(%v) = %v, want %v", c.name, x, got[i], want)
			}
			if got[i] != viaDo[i] {
				t.Errorf("%s(%v): kernel %v, Do %v", c.name, x, got[i], viaDo[i])
			}
		}
	}
}

// TestUnaryExtremes checks the stable forms where the naive formula fails.
func TestUnaryExtremes(t *testing.T) {
	sh := tensor.Shape{4}
	x := []float64{-800, -40, 40, 800}
	sp, err := runKernel(t, unaryOp{kind: kindSoftplus}, []tensor.Shape{sh}, x)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := runKernel(t, unaryOp{kind: kindLogSigmoid}, []tensor.Shape{sh}, x)
	if err != nil {
		t.Fatal(err)
	}
	wantSp := []float64{0, math.Exp(-40), 40 + math.Exp(-40), 800}
	wantLs := []float64{-800, -40 - math.Exp(-40), -math.Exp(-40), 0}
	for i := range x {
		if !closeTo(sp[i], wantSp[i], 1e-15) || math.Abs(sp[i]-wantSp[i]) > 1e-15*math.Abs(wantSp[i]) && wantSp[i] != 0 {
			t.Errorf("softplus(%v) = %v, want %v", x[i], sp[i], wantSp[i])
		}
		if !closeTo(ls[i], wantLs[i], 1e-15) {
			t.Errorf("logsigmoid(%v) = %v, want %v", x[i], ls[i], wantLs[i])
		}
	}
}

func TestUnaryGradients(t *testing.T) {
	for _, c := range unaryCases {
		sh := tensor.Shape{len(c.x)}
		checkGrad(t, c.name, sh, c.x, weighted(c.build, 3), 2e-6)
		// A scalar node works too.
		checkGrad(t, c.name+"/scalar", tensor.ScalarShape(), c.x[1:2], c.build, 2e-6)
	}
}

// TestUnarySecondOrder differentiates the gradient of Σ w⊙f(x) again: the
// result must be w⊙f”(x), checked against finite differences of the first
// gradient (and, for lgamma, against trigamma).
func TestUnarySecondOrder(t *testing.T) {
	for _, c := range unaryCases {
		if c.kind == kindDigamma {
			continue // trigamma, its derivative, is not differentiable
		}
		sh := tensor.Shape{len(c.x)}
		build := func(x *gorgonia.Node) (*gorgonia.Node, error) {
			y, err := c.build(x)
			if err != nil {
				return nil, err
			}
			s, err := weightedSum(y, 3)
			if err != nil {
				return nil, err
			}
			g, err := gorgonia.Grad(s, x)
			if err != nil {
				return nil, err
			}
			return weightedSum(g[0], 4)
		}
		checkGrad(t, c.name+"/second", sh, c.x, build, 2e-6)
	}
}

func TestUnaryDomainErrors(t *testing.T) {
	cases := []struct {
		kind unaryKind
		x    float64
	}{
		{kindLgamma, 0}, {kindLgamma, -3}, {kindDigamma, -1}, {kindTrigamma, 0},
		{kindAtanh, 1}, {kindAtanh, -1.5}, {kindAtanhD1, 2},
	}
	for _, c := range cases {
		op := unaryOp{kind: c.kind}
		if _, err := runKernel(t, op, []tensor.Shape{{1}}, []float64{c.x}); err != ErrDomain {
			t.Errorf("%v(%v): error %v, want ErrDomain", op, c.x, err)
		}
		if _, err := runKernel(t, scaledOp{kind: c.kind}, []tensor.Shape{{1}, {1}}, []float64{c.x}, []float64{1}); err != ErrDomain {
			t.Errorf("g*%v(%v): error %v, want ErrDomain", op, c.x, err)
		}
	}
	if _, err := tapeValue(tensor.Shape{2}, []float64{0.5, 2}, Atanh); err == nil || !strings.Contains(err.Error(), ErrDomain.Error()) {
		t.Errorf("Atanh Do outside the domain: %v", err)
	}
	// Trigamma has no derivative: a third-order gradient through lgamma is
	// an error, not a panic.
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("x"))
	y, err := gorgonia.ApplyOp(unaryOp{kind: kindTrigamma}, x)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gorgonia.Sum(y)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gorgonia.Grad(s, x); err == nil {
		t.Error("gradient through trigamma: no error")
	}
}
