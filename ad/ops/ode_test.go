package ops

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// decayODE is y' = −k y, θ = (k).
func decayODE(t *testing.T) *ODE {
	t.Helper()
	sys, err := NewODE(1, 1, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		ky, err := gorgonia.Mul(th[0], y[0])
		if err != nil {
			return nil, err
		}
		d, err := gorgonia.Neg(ky)
		return []*gorgonia.Node{d}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

// linearODE is y' = A y for a 2×2 matrix A, θ = A row-major.
func linearODE(t *testing.T) *ODE {
	t.Helper()
	sys, err := NewODE(2, 4, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		f := make([]*gorgonia.Node, 2)
		for i := range f {
			a := gorgonia.Must(gorgonia.Mul(th[2*i], y[0]))
			b := gorgonia.Must(gorgonia.Mul(th[2*i+1], y[1]))
			f[i] = gorgonia.Must(gorgonia.Add(a, b))
		}
		return f, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sys
}

// lotkaVolterraODE is u' = (α − βv)u, v' = (−γ + δu)v, θ = (α, β, γ, δ).
func lotkaVolterraODE(tb testing.TB) *ODE {
	tb.Helper()
	sys, err := NewODE(2, 4, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		u, v := y[0], y[1]
		du := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sub(th[0], gorgonia.Must(gorgonia.Mul(th[1], v)))), u))
		dv := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sub(gorgonia.Must(gorgonia.Mul(th[3], u)), th[2])), v))
		return []*gorgonia.Node{du, dv}, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return sys
}

// solvePacked runs the solver kernel directly and returns the solution
// (T×n) and the sensitivities (T×n×(n+p)), checking that a call does not
// allocate.
func solvePacked(t *testing.T, sys *ODE, y0, theta []float64, t0 float64, times []float64, s *ODESettings) (y, sens []float64, err error) {
	t.Helper()
	set, err := s.resolve()
	if err != nil {
		t.Fatal(err)
	}
	op := odeOp{sys: sys, t0: t0, times: times, set: set}
	in := [][]float64{y0}
	shapes := []tensor.Shape{{len(y0)}}
	if sys.params > 0 {
		in = append(in, theta)
		shapes = append(shapes, tensor.Shape{len(theta)})
	}
	k, _, out, err := lowerFor(op, shapes)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Eval(out, in); err != nil {
		return nil, nil, err // the error path may allocate its message
	}
	if allocs := testing.AllocsPerRun(3, func() { _ = k.Eval(out, in) }); allocs != 0 {
		t.Errorf("odeKernel.Eval allocates %v times per call", allocs)
	}
	ny := len(times) * sys.dim
	return out[:ny], out[ny:], nil
}

// The solution and its sensitivities of y' = −ky match the closed form
// y0·e^{−kt} at three tolerances, within a small multiple of the
// tolerance, and the error falls as the tolerance does.
func TestODEExponentialDecay(t *testing.T) {
	sys := decayODE(t)
	y0, k := 2.5, 0.7
	times := []float64{0, 0.1, 0.5, 1, 2, 3.5, 5, 8, 10}
	prev := math.Inf(1)
	for _, tol := range []float64{1e-4, 1e-6, 1e-8} {
		y, sens, err := solvePacked(t, sys, []float64{y0}, []float64{k}, 0, times, &ODESettings{RelTol: tol, AbsTol: tol})
		if err != nil {
			t.Fatalf("tol %g: %v", tol, err)
		}
		var worst float64
		for j, tj := range times {
			e := math.Exp(-k * tj)
			for _, d := range [][2]float64{{y[j], y0 * e}, {sens[2*j], e}, {sens[2*j+1], -tj * y0 * e}} {
				worst = math.Max(worst, math.Abs(d[0]-d[1]))
			}
		}
		t.Logf("tol %g: largest error of y and its sensitivities %.3g", tol, worst)
		if worst > 10*tol {
			t.Errorf("tol %g: largest error %.3g, want at most 10·tol", tol, worst)
		}
		if !(worst < prev) {
			t.Errorf("tol %g: largest error %.3g did not fall from %.3g", tol, worst, prev)
		}
		prev = worst
	}
}

// y' = Ay against the matrix exponential: y(t) = e^{At}y0, so ∂y/∂y0 is
// e^{At}, and ∂y/∂A is checked against central differences of e^{At}y0.
func TestODELinearSystem(t *testing.T) {
	sys := linearODE(t)
	a := []float64{-0.5, 1.2, -0.8, -0.3}
	y0 := []float64{1, -0.5}
	times := []float64{0.25, 1, 2.5, 4}
	const tol = 1e-9
	y, sens, err := solvePacked(t, sys, y0, a, 0, times, &ODESettings{RelTol: tol, AbsTol: tol})
	if err != nil {
		t.Fatal(err)
	}
	expm := func(a []float64, tj float64) *mat.Dense {
		var e mat.Dense
		at := mat.NewDense(2, 2, append([]float64(nil), a...))
		at.Scale(tj, at)
		e.Exp(at)
		return &e
	}
	exact := func(a []float64, tj float64) []float64 {
		var v mat.VecDense
		v.MulVec(expm(a, tj), mat.NewVecDense(2, append([]float64(nil), y0...)))
		return []float64{v.AtVec(0), v.AtVec(1)}
	}
	for j, tj := range times {
		want := exact(a, tj)
		e := expm(a, tj)
		for i := range 2 {
			if !closeTo(y[2*j+i], want[i], 20*tol) {
				t.Errorf("t=%g: y[%d] = %.12g, e^{At}y0 gives %.12g", tj, i, y[2*j+i], want[i])
			}
			row := sens[(2*j+i)*6 : (2*j+i+1)*6]
			for c := range 2 {
				if !closeTo(row[c], e.At(i, c), 20*tol) {
					t.Errorf("t=%g: ∂y%d/∂y0[%d] = %.12g, e^{At} gives %.12g", tj, i, c, row[c], e.At(i, c))
				}
			}
			da := fd.Gradient(nil, func(x []float64) float64 { return exact(x, tj)[i] }, a, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			for c := range 4 {
				if !closeTo(row[2+c], da[c], 1e-7) {
					t.Errorf("t=%g: ∂y%d/∂A[%d] = %.10g, differences of e^{At}y0 give %.10g", tj, i, c, row[2+c], da[c])
				}
			}
		}
	}
}

// lvCost is a Lotka–Volterra log-likelihood-like cost of (y0, θ) packed in
// one parameter vector: Σ_j,i w_ji log y_i(t_j) − ½ Σ (y − obs)².
func lvCost(sys *ODE, times []float64, s *ODESettings) builder {
	return func(x *gorgonia.Node) (*gorgonia.Node, error) {
		y0, err := gorgonia.Slice(x, gorgonia.S(0, 2))
		if err != nil {
			return nil, err
		}
		th, err := gorgonia.Slice(x, gorgonia.S(2, 6))
		if err != nil {
			return nil, err
		}
		y, err := ODESolve(sys, y0, th, 0, times, s)
		if err != nil {
			return nil, err
		}
		ly, err := gorgonia.Log(y)
		if err != nil {
			return nil, err
		}
		return weightedSum(ly, 7)
	}
}

// The compiled gradient of a Lotka–Volterra cost with respect to θ and y0
// matches central finite differences of the compiled value (solved
// tightly, so that differencing the adaptive solver's steps adds little
// noise), and the compiled program matches gorgonia's TapeMachine.
func TestODELotkaVolterraGradient(t *testing.T) {
	sys := lotkaVolterraODE(t)
	times := []float64{0.5, 1, 2, 3, 5, 8}
	x0 := []float64{30, 4, 0.55, 0.028, 0.8, 0.024}
	build := lvCost(sys, times, &ODESettings{RelTol: 1e-10, AbsTol: 1e-10})
	p := compileBuilt(t, tensor.Shape{6}, build)
	if fb := p.Fallbacks(); len(fb) != 0 {
		t.Errorf("fallbacks %v", fb)
	}
	grad := make([]float64, 6)
	if _, err := p.LogDensityGrad(x0, grad); err != nil {
		t.Fatal(err)
	}
	want := fd.Gradient(nil, orNaN(p.LogDensity), x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	for i := range want {
		if !closeTo(grad[i], want[i], 1e-5) {
			t.Errorf("gradient[%d] = %.10g, finite differences %.10g", i, grad[i], want[i])
		}
	}
	tg := newTapeGraph(t, tensor.Shape{6}, build)
	tv, tgrad, err := tg.eval(x0)
	if err != nil {
		t.Fatal(err)
	}
	checkMatchesTape(t, "LotkaVolterra", p, x0, tv, tgrad, 1e-12)
}

// Stiff problems fail fast with a clear error instead of hanging: the
// stiffness test fires on y' = −10⁶(y − cos t) after about a thousand
// steps, and with the test off MaxSteps stops the solve.
func TestODEStiff(t *testing.T) {
	sys, err := NewODE(1, 1, func(tt *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		c := gorgonia.Must(gorgonia.Cos(tt))
		d := gorgonia.Must(gorgonia.Sub(c, y[0]))
		return []*gorgonia.Node{gorgonia.Must(gorgonia.Mul(th[0], d))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = solvePacked(t, sys, []float64{0}, []float64{1e6}, 0, []float64{1, 10}, nil)
	if !errors.Is(err, ErrODEStiff) {
		t.Fatalf("stiff problem: error %v, want ErrODEStiff", err)
	}
	t.Log(err)
	_, _, err = solvePacked(t, sys, []float64{0}, []float64{1e6}, 0, []float64{1, 10}, &ODESettings{AllowStiff: true, MaxSteps: 5000})
	if !errors.Is(err, ErrODEMaxSteps) || !strings.Contains(err.Error(), "stiff") {
		t.Fatalf("stiff problem with AllowStiff: error %v, want ErrODEMaxSteps", err)
	}
	t.Log(err)
	// Robertson's chemical kinetics, the classic stiff test problem.
	rob, err := NewODE(3, 3, func(_ *gorgonia.Node, y, k []*gorgonia.Node) ([]*gorgonia.Node, error) {
		m := func(a, b *gorgonia.Node) *gorgonia.Node { return gorgonia.Must(gorgonia.Mul(a, b)) }
		r1 := m(k[0], y[0])
		r2 := m(k[1], m(y[1], y[2]))
		r3 := m(k[2], m(y[1], y[1]))
		d1 := gorgonia.Must(gorgonia.Sub(r2, r1))
		d3 := r3
		d2 := gorgonia.Must(gorgonia.Sub(gorgonia.Must(gorgonia.Sub(r1, r2)), r3))
		return []*gorgonia.Node{d1, d2, d3}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = solvePacked(t, rob, []float64{1, 0, 0}, []float64{0.04, 1e4, 3e7}, 0, []float64{40}, nil)
	if !errors.Is(err, ErrODEStiff) {
		t.Fatalf("Robertson: error %v, want ErrODEStiff", err)
	}
	t.Log(err)
	// The same equation with a mild rate is not stiff and solves: with
	// rate k, y = k(k cos t + sin t)/(k² + 1) − k²e^{−kt}/(k² + 1).
	const k = 2.0
	times := []float64{1, 10}
	y, _, err := solvePacked(t, sys, []float64{0}, []float64{k}, 0, times, nil)
	if err != nil {
		t.Fatalf("mild rate: %v", err)
	}
	for j, tj := range times {
		want := (k*(k*math.Cos(tj)+math.Sin(tj)) - k*k*math.Exp(-k*tj)) / (k*k + 1)
		if math.Abs(y[j]-want) > 1e-5 {
			t.Errorf("mild rate, t=%g: y = %.8g, closed form %.8g", tj, y[j], want)
		}
	}
}

// A system without parameters takes a nil theta and differentiates with
// respect to y0 only; output times equal to t0, and repeated, give y0 and
// the identity, and output times one ulp apart are no trouble.
func TestODENoParameters(t *testing.T) {
	sys, err := NewODE(1, 0, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		if len(th) != 0 {
			return nil, errors.New("parameters given")
		}
		return []*gorgonia.Node{gorgonia.Must(gorgonia.Mul(y[0], gorgonia.NewConstant(-0.7)))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	times := []float64{1, 1, 2, 2 + 0x1p-51, 3}
	y, sens, err := solvePacked(t, sys, []float64{2}, nil, 1, times, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j, tj := range times {
		e := math.Exp(-0.7 * (tj - 1))
		if math.Abs(y[j]-2*e) > 1e-5 || math.Abs(sens[j]-e) > 1e-5 {
			t.Errorf("t=%g: y = %v, ∂y/∂y0 = %v, want %v, %v", tj, y[j], sens[j], 2*e, e)
		}
	}
	build := func(x *gorgonia.Node) (*gorgonia.Node, error) {
		y, err := ODESolve(sys, x, nil, 1, times, &ODESettings{RelTol: 1e-10, AbsTol: 1e-10})
		if err != nil {
			return nil, err
		}
		return weightedSum(y, 3)
	}
	checkGrad(t, "no parameters", tensor.Shape{1}, []float64{2}, build, 1e-6)
}

// Bad systems, settings, times and shapes are refused when the graph is
// built, each with an error naming the cause.
func TestODEBadInput(t *testing.T) {
	one := func(_ *gorgonia.Node, y, _ []*gorgonia.Node) ([]*gorgonia.Node, error) { return y, nil }
	for name, c := range map[string]struct {
		dim, params int
		rhs         ODERHS
		want        string
	}{
		"no states": {0, 1, one, "states"},
		"negative":  {1, -1, one, "parameters"},
		"nil rhs":   {1, 1, nil, "nil right-hand side"},
		"rhs error": {1, 1, func(*gorgonia.Node, []*gorgonia.Node, []*gorgonia.Node) ([]*gorgonia.Node, error) {
			return nil, errors.New("boom")
		}, "boom"},
		"too few": {2, 1, func(_ *gorgonia.Node, y, _ []*gorgonia.Node) ([]*gorgonia.Node, error) { return y[:1], nil }, "returned 1 derivatives, want 2"},
		"nil derivative": {1, 1, func(*gorgonia.Node, []*gorgonia.Node, []*gorgonia.Node) ([]*gorgonia.Node, error) {
			return []*gorgonia.Node{nil}, nil
		}, "derivative 0 is nil"},
		"foreign node": {1, 1, func(*gorgonia.Node, []*gorgonia.Node, []*gorgonia.Node) ([]*gorgonia.Node, error) {
			return []*gorgonia.Node{gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float64)}, nil
		}, "not built from"},
		"vector": {1, 2, func(_ *gorgonia.Node, _, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
			v, err := gorgonia.Concat(0, gorgonia.Must(gorgonia.Reshape(th[0], tensor.Shape{1})), gorgonia.Must(gorgonia.Reshape(th[1], tensor.Shape{1})))
			return []*gorgonia.Node{v}, err
		}, "want a float64 scalar"},
	} {
		_, err := NewODE(c.dim, c.params, c.rhs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}

	sys := decayODE(t)
	g := gorgonia.NewGraph()
	y0 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(1), gorgonia.WithName("y0"))
	th := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(1), gorgonia.WithName("th"))
	th2 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("th2"))
	ok := []float64{1, 2}
	for name, c := range map[string]struct {
		sys       *ODE
		y0, theta *gorgonia.Node
		t0        float64
		times     []float64
		set       *ODESettings
		want      string
	}{
		"nil system":      {nil, y0, th, 0, ok, nil, "nil ODE"},
		"negative RelTol": {sys, y0, th, 0, ok, &ODESettings{RelTol: -1}, "RelTol is -1"},
		"NaN AbsTol":      {sys, y0, th, 0, ok, &ODESettings{AbsTol: math.NaN()}, "AbsTol is NaN"},
		"tiny RelTol":     {sys, y0, th, 0, ok, &ODESettings{RelTol: 1e-20}, "below what float64"},
		"negative steps":  {sys, y0, th, 0, ok, &ODESettings{MaxSteps: -3}, "MaxSteps is -3"},
		"no times":        {sys, y0, th, 0, nil, nil, "no output times"},
		"NaN t0":          {sys, y0, th, math.NaN(), ok, nil, "t0 is NaN"},
		"before t0":       {sys, y0, th, 1.5, ok, nil, "before t0"},
		"decreasing":      {sys, y0, th, 0, []float64{2, 1}, nil, "non-decreasing"},
		"infinite time":   {sys, y0, th, 0, []float64{1, math.Inf(1)}, nil, "times[1] is +Inf"},
		"wrong theta":     {sys, y0, th2, 0, ok, nil, "theta has shape (2)"},
		"wrong y0":        {sys, th2, th, 0, ok, nil, "y0 has shape (2)"},
		"nil y0":          {sys, nil, th, 0, ok, nil, "argument 0 is nil"},
		"nil theta":       {sys, y0, nil, 0, ok, nil, "argument 1 is nil"},
	} {
		_, err := ODESolve(c.sys, c.y0, c.theta, c.t0, c.times, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
	noParams, err := NewODE(1, 0, one)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ODESolve(noParams, y0, th, 0, ok, nil); err == nil || !strings.Contains(err.Error(), "without parameters") {
		t.Errorf("theta for a system without parameters: error %v", err)
	}
}

// Values that go wrong while solving are errors naming the cause, never
// NaN: a non-finite y0 or θ, a right-hand side that is NaN (log of a
// negative state), and a solution that blows up in finite time (y' = y²
// from y(0) = 1 is 1/(1 − t)).
func TestODEBadValues(t *testing.T) {
	sys := decayODE(t)
	for name, in := range map[string][2][]float64{
		"y0":    {{math.NaN()}, {1}},
		"theta": {{1}, {math.Inf(1)}},
	} {
		_, _, err := solvePacked(t, sys, in[0], in[1], 0, []float64{1}, nil)
		if !errors.Is(err, ad.ErrNonFinite) || !strings.Contains(err.Error(), name) {
			t.Errorf("non-finite %s: error %v, want ad.ErrNonFinite naming it", name, err)
		}
	}
	logSys, err := NewODE(1, 1, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		return []*gorgonia.Node{gorgonia.Must(gorgonia.Sub(gorgonia.Must(gorgonia.Log(y[0])), th[0]))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// y' = log y − 1 from y = 1 decreases through 0, where log y is NaN.
	_, _, err = solvePacked(t, logSys, []float64{1}, []float64{1}, 0, []float64{5}, nil)
	if !errors.Is(err, ad.ErrNonFinite) || !strings.Contains(err.Error(), "right-hand side at t =") {
		t.Errorf("log of a negative state: error %v, want ad.ErrNonFinite at a time", err)
	}
	square, err := NewODE(1, 1, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		return []*gorgonia.Node{gorgonia.Must(gorgonia.Mul(th[0], gorgonia.Must(gorgonia.Square(y[0]))))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = solvePacked(t, square, []float64{1}, []float64{1}, 0, []float64{0.5, 2}, nil)
	if !errors.Is(err, ErrODEStepSize) && !errors.Is(err, ad.ErrNonFinite) {
		t.Errorf("blow-up: error %v, want ErrODEStepSize or ad.ErrNonFinite", err)
	}
	t.Log(err)
}

// A tolerance sweep on Lotka–Volterra, which has no closed form: against a
// solve at 1e-12, the largest relative error of the solution and its
// sensitivities at tolerances 1e-4, 1e-6 and 1e-8 falls at least 30-fold
// per 100-fold cut in the tolerance (error per step control makes the
// global error roughly proportional to the tolerance). Over two cycles of
// the orbit the global error is not a small multiple of the tolerance (the
// phase error and the sensitivities to it grow with time); the closed-form
// tests bound the level.
func TestODEToleranceSweep(t *testing.T) {
	sys := lotkaVolterraODE(t)
	times := []float64{1, 2, 4, 6, 8, 10, 12, 15}
	y0, th := []float64{30, 4}, []float64{0.55, 0.028, 0.8, 0.024}
	refY, refS, err := solvePacked(t, sys, y0, th, 0, times, &ODESettings{RelTol: 1e-12, AbsTol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	prev := math.Inf(1)
	for _, tol := range []float64{1e-4, 1e-6, 1e-8} {
		y, s, err := solvePacked(t, sys, y0, th, 0, times, &ODESettings{RelTol: tol, AbsTol: tol})
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for _, pair := range [][2][]float64{{y, refY}, {s, refS}} {
			for i, v := range pair[0] {
				r := pair[1][i]
				worst = math.Max(worst, math.Abs(v-r)/math.Max(1, math.Abs(r)))
			}
		}
		t.Logf("tol %g: largest relative error of y and ∂y/∂(y0, θ) %.3g", tol, worst)
		if !(30*worst < prev) {
			t.Errorf("tol %g: error %.3g did not fall 30-fold from %.3g", tol, worst, prev)
		}
		prev = worst
	}
}
