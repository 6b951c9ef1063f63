package sas

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
)

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	tg := Paper()
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < tg.NumModels(); k++ {
		c := tg.Component(k)
		x := make([]float64, c.Dim())
		g := make([]float64, c.Dim())
		for rep := 0; rep < 20; rep++ {
			if err := c.Sample(rng, x); err != nil {
				t.Fatal(err)
			}
			if _, err := c.LogDensityGrad(x, g); err != nil {
				t.Fatal(err)
			}
			want := fd.Gradient(nil, func(y []float64) float64 {
				v, _ := c.Clone().LogDensity(y)
				return v
			}, x, &fd.Settings{Formula: fd.Central})
			for i := range g {
				if math.Abs(g[i]-want[i]) > 1e-5*(1+math.Abs(want[i])) {
					t.Errorf("model %d at %v: grad[%d]=%v, finite differences %v", k, x, i, g[i], want[i])
				}
			}
		}
	}
}

func TestTransportRoundTripAndJacobian(t *testing.T) {
	tg := Paper()
	rng := rand.New(rand.NewPCG(3, 4))
	for k, tr := range tg.Transports() {
		n := tr.Dim()
		x := make([]float64, n)
		z := make([]float64, n)
		back := make([]float64, n)
		for rep := 0; rep < 20; rep++ {
			if err := tg.Component(k).Sample(rng, x); err != nil {
				t.Fatal(err)
			}
			ldf, ldi := checks.RoundTrip(t, tr, x, z, back)
			if !floats.EqualApprox(x, back, 1e-9) {
				t.Errorf("model %d: round trip %v → %v", k, x, back)
			}
			if math.Abs(ldf+ldi) > 1e-9 {
				t.Errorf("model %d: forward log-det %v, inverse %v", k, ldf, ldi)
			}
			jac := mat.NewDense(n, n, nil)
			fd.Jacobian(jac, func(dst, y []float64) {
				tr2 := tg.Component(k).Transport()
				_, _ = tr2.Forward(y, dst)
			}, x, &fd.JacobianSettings{Formula: fd.Central})
			want := math.Log(math.Abs(mat.Det(jac)))
			if math.Abs(want-ldf) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("model %d: log-det %v, finite differences %v", k, ldf, want)
			}
		}
	}
}

func TestOneDimensionalDensityIntegratesAndSamplerMatches(t *testing.T) {
	c := Paper().Component(0)
	dens := func(x float64) float64 {
		v, err := c.Clone().LogDensity([]float64{x})
		if err != nil {
			return 0
		}
		return math.Exp(v)
	}
	// The substitution x = sinh(s) makes the tails integrable on a finite
	// interval.
	mass := quad.Fixed(func(s float64) float64 { return dens(math.Sinh(s)) * math.Cosh(s) }, -8, 8, 2000, nil, 0)
	if math.Abs(mass-1) > 1e-6 {
		t.Fatalf("density integrates to %v", mass)
	}
	mean := quad.Fixed(func(s float64) float64 { x := math.Sinh(s); return x * dens(x) * math.Cosh(s) }, -8, 8, 2000, nil, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 20000
	xs := make([]float64, n)
	x := []float64{0}
	for i := range xs {
		if err := c.Sample(rng, x); err != nil {
			t.Fatal(err)
		}
		xs[i] = x[0]
	}
	m, sd := stat.MeanStdDev(xs, nil)
	if se := sd / math.Sqrt(n); math.Abs(m-mean) > 4*se {
		t.Errorf("sample mean %v, quadrature %v, 4·MCSE %v", m, mean, 4*se)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := NewComponent([]float64{0}, []float64{-1}, []float64{1}); err == nil {
		t.Error("negative δ accepted")
	}
	if _, err := NewComponent([]float64{0, 0}, []float64{1, 1}, []float64{1, 1, 0, 1}); err == nil {
		t.Error("upper-triangular entry accepted")
	}
	tg := Paper()
	if _, err := tg.LogDensity(0, []float64{1, 2}); err == nil {
		t.Error("wrong dimension accepted")
	}
	if _, err := tg.LogDensity(2, []float64{1}); err == nil {
		t.Error("bad model accepted")
	}
	if _, err := tg.LogDensity(0, []float64{math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
	for _, k := range []int{-1, 2} {
		if d, l, p, c := tg.ModelDim(k), tg.ModelLabel(k), tg.ModelProb(k), tg.Component(k); d != 0 || l != "" || p != 0 || c != nil {
			t.Errorf("model %d out of range: ModelDim %d, ModelLabel %q, ModelProb %v, Component %v", k, d, l, p, c)
		}
	}
	if _, err := NewTarget([]*Component{nil}, []float64{1}); err == nil {
		t.Error("nil component accepted")
	}
}
