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
		return nil, nil, err
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
// matches central finite differences of the same tape (solved tightly, so
// that differencing the adaptive solver's steps adds little noise), and the
// compiled program matches gorgonia's TapeMachine.
func TestODELotkaVolterraGradient(t *testing.T) {
	sys := lotkaVolterraODE(t)
	times := []float64{0.5, 1, 2, 3, 5, 8, 12}
	x0 := []float64{30, 4, 0.55, 0.028, 0.8, 0.024}
	build := lvCost(sys, times, &ODESettings{RelTol: 1e-11, AbsTol: 1e-11})
	checkGrad(t, "LotkaVolterra", tensor.Shape{6}, x0, build, 1e-5)
	p := compileBuilt(t, tensor.Shape{6}, build)
	if fb := p.Fallbacks(); len(fb) != 0 {
		t.Errorf("fallbacks %v", fb)
	}
	tg := newTapeGraph(t, tensor.Shape{6}, build)
	want, wantGrad, err := tg.eval(x0)
	if err != nil {
		t.Fatal(err)
	}
	checkMatchesTape(t, "LotkaVolterra", p, x0, want, wantGrad, 1e-12)
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
	_, _, err = solvePacked(t, sys, []float64{0}, []float64{1e6}, 0, []float64{1, 10}, &ODESettings{AllowStiff: true, MaxSteps: 20000})
	if !errors.Is(err, ErrODEMaxSteps) || !strings.Contains(err.Error(), "stiff") {
		t.Fatalf("stiff problem with AllowStiff: error %v, want ErrODEMaxSteps", err)
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

var _ = ad.ErrNonFinite
