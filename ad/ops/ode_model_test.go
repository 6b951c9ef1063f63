package ops_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// lotkaVolterra is the predator–prey system written the way a user writes
// it: prey u and predators v, θ = (α, β, γ, δ), u' = (α − βv)u and
// v' = (δu − γ)v.
func lotkaVolterra(tb testing.TB) *ops.ODE {
	tb.Helper()
	lv, err := ops.NewODE(2, 4, func(_ *gorgonia.Node, y, th []*gorgonia.Node) ([]*gorgonia.Node, error) {
		u, v := y[0], y[1]
		alpha, beta, gamma, delta := th[0], th[1], th[2], th[3]
		du := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sub(alpha, gorgonia.Must(gorgonia.Mul(beta, v)))), u))
		dv := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sub(gorgonia.Must(gorgonia.Mul(delta, u)), gamma)), v))
		return []*gorgonia.Node{du, dv}, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return lv
}

// lvData simulates 20 yearly observations of both species from the system
// at θ = (0.55, 0.028, 0.80, 0.024), z0 = (33, 6), with lognormal noise of
// scale 0.25 (fixed seed).
func lvData(tb testing.TB, lv *ops.ODE) (times, obs []float64) {
	tb.Helper()
	times = make([]float64, 20)
	for j := range times {
		times[j] = float64(j + 1)
	}
	b := ppl.NewBuilder()
	th := b.Data("theta", []float64{0.55, 0.028, 0.80, 0.024})
	y0 := b.Data("z0", []float64{33, 6})
	z := b.Check(ops.ODESolve(lv, y0, th, 0, times, nil))
	m := gorgonia.NewTapeMachine(b.Graph())
	if err := m.RunAll(); err != nil {
		tb.Fatal(err)
	}
	sol := z.Value().Data().([]float64)
	rng := rand.New(rand.NewPCG(33, 1))
	obs = make([]float64, len(sol))
	for i, s := range sol {
		obs[i] = s * math.Exp(0.25*rng.NormFloat64())
	}
	return times, obs
}

// lvModel is the Lotka–Volterra model of Stan's case study (Carpenter
// 2018) with the noise scale known: 4 parameters and 2 initial states.
func lvModel(tb testing.TB, lv *ops.ODE, times, obs []float64, s *ops.ODESettings) *ppl.GraphModel {
	tb.Helper()
	b := ppl.NewBuilder()
	theta := b.Positive("theta", 4)
	z0 := b.Positive("z_init", 2)
	b.Sample(ppl.Normal{Mu: []float64{1, 0.05, 1, 0.05}, Sigma: []float64{0.5, 0.05, 0.5, 0.05}}, theta)
	b.Sample(ppl.LogNormal{Mu: math.Log(10), Sigma: 1}, z0)
	z := b.Check(ops.ODESolve(lv, z0, theta, 0, times, s))
	y := b.Data("y", obs, len(times), 2)
	b.Sample(ppl.LogNormal{Mu: b.Check(gorgonia.Log(z)), Sigma: 0.25}, y)
	m, err := b.Model()
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// lvPoint is an unconstrained point near the posterior mode.
func lvPoint(tb testing.TB, m *ppl.GraphModel) []float64 {
	tb.Helper()
	u := make([]float64, m.Dim())
	if err := m.UnconstrainNamed(map[string][]float64{"theta": {0.5, 0.03, 0.85, 0.025}, "z_init": {30, 5}}, u); err != nil {
		tb.Fatal(err)
	}
	return u
}

// A model written with ppl's builder around ODESolve: its log-density
// gradient (through the constraints, the solve and the likelihood) matches
// central finite differences of its log-density, solved tightly so that the
// adaptive steps add little noise to the differences.
func TestODEModelGradient(t *testing.T) {
	lv := lotkaVolterra(t)
	times, obs := lvData(t, lv)
	m := lvModel(t, lv, times, obs, &ops.ODESettings{RelTol: 1e-10, AbsTol: 1e-10})
	if fb := m.Fallbacks(); len(fb) != 0 {
		t.Errorf("fallbacks %v", fb)
	}
	u := lvPoint(t, m)
	grad := make([]float64, m.Dim())
	lp, err := m.LogDensityGrad(u, grad)
	if err != nil {
		t.Fatal(err)
	}
	want := fd.Gradient(nil, func(x []float64) float64 {
		v, err := m.LogDensity(x)
		if err != nil {
			return math.NaN()
		}
		return v
	}, u, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	t.Logf("log density %.6f, gradient %.6g, differences %.6g", lp, grad, want)
	for i := range want {
		if !(math.Abs(grad[i]-want[i]) <= 1e-5*math.Max(1, math.Abs(want[i]))) {
			t.Errorf("gradient[%d] = %.10g, finite differences %.10g", i, grad[i], want[i])
		}
	}
	// At the default tolerances the log-density agrees with the tight one
	// to about the tolerance times the likelihood's sensitivity.
	def := lvModel(t, lv, times, obs, nil)
	lpDef, err := def.LogDensity(u)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lpDef-lp) > 1e-3 {
		t.Errorf("log density at default tolerances %.8g, tight %.8g", lpDef, lp)
	}
}

// Clones of a model holding an ODE solve run in parallel goroutines with
// the same results as the original (each clone solves with its own
// program and buffers; run under -race).
func TestODEModelClonesConcurrent(t *testing.T) {
	lv := lotkaVolterra(t)
	times, obs := lvData(t, lv)
	m := lvModel(t, lv, times, obs, nil)
	u := lvPoint(t, m)
	grad := make([]float64, m.Dim())
	want, err := m.LogDensityGrad(u, grad)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]float64, 4)
	errs := make([]error, 4)
	for w := range got {
		c := m.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := make([]float64, c.Dim())
			for range 5 {
				got[w], errs[w] = c.LogDensityGrad(u, g)
			}
		}()
	}
	wg.Wait()
	for w := range got {
		if errs[w] != nil || got[w] != want {
			t.Errorf("clone %d: %v, %v; want %v", w, got[w], errs[w], want)
		}
	}
}

// BenchmarkODELotkaVolterraGrad is the cost of one log-density gradient of
// the Lotka–Volterra model (4 parameters, 2 initial states, 20 observation
// times of both species) at Stan's default ODE tolerances, for comparison
// with Stan's ode_rk45.
func BenchmarkODELotkaVolterraGrad(b *testing.B) {
	lv := lotkaVolterra(b)
	times, obs := lvData(b, lv)
	m := lvModel(b, lv, times, obs, nil)
	u := lvPoint(b, m)
	grad := make([]float64, m.Dim())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.LogDensityGrad(u, grad); err != nil {
			b.Fatal(err)
		}
	}
}
