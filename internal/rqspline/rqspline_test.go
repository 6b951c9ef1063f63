package rqspline

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/trjgo/trj/internal/scalar"
)

func randomParams(rng *rand.Rand, k int, scale float64) (uw, uh, ud []float64) {
	uw = make([]float64, k)
	uh = make([]float64, k)
	ud = make([]float64, k+1)
	for i := range uw {
		uw[i] = scale * rng.NormFloat64()
		uh[i] = scale * rng.NormFloat64()
	}
	for i := range ud {
		ud[i] = scale * rng.NormFloat64()
	}
	return
}

func TestValidate(t *testing.T) {
	uw, uh, ud := randomParams(rand.New(rand.NewPCG(1, 2)), 4, 1)
	if err := Validate(uw, uh, ud); err != nil {
		t.Fatal(err)
	}
	bad := [][3][]float64{
		{nil, nil, {0}},
		{uw, uh[:3], ud},
		{uw, uh, ud[:4]},
		{uw, uh, append(append([]float64{}, ud[:4]...), math.NaN())},
		{make([]float64, 1000), make([]float64, 1000), make([]float64, 1001)},
	}
	for i, b := range bad {
		if Validate(b[0], b[1], b[2]) == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		k := 1 + rng.IntN(12)
		// Scale 1 is typical of a trained conditioner; scale 3 reaches
		// bins whose derivative is tiny, where the inverse is ill-conditioned
		// and only an error of order eps/f'(x) is achievable.
		scale := 1.0
		if trial%2 == 1 {
			scale = 3
		}
		uw, uh, ud := randomParams(rng, k, scale)
		for j := 0; j < 50; j++ {
			x := rng.Float64()
			switch j {
			case 0:
				x = 0
			case 1:
				x = 1
			}
			y, ld := Forward(x, uw, uh, ud)
			if y < 0 || y > 1 || math.IsNaN(ld) {
				t.Fatalf("Forward(%v) = %v, %v", x, y, ld)
			}
			x2, ld2 := Inverse(y, uw, uh, ud)
			tol := 1e-12
			if scale > 1 {
				tol += 1e-15 * math.Exp(-ld)
			}
			if math.Abs(x2-x) > tol {
				t.Fatalf("k=%d x=%v: inverse(forward(x)) = %v, error %g, logderiv %v", k, x, x2, x2-x, ld)
			}
			if math.Abs(ld2-ld) > 1e-9 {
				t.Fatalf("k=%d x=%v: log-derivatives %v (forward) and %v (inverse)", k, x, ld, ld2)
			}
		}
	}
}

func TestEndpointsAndOutside(t *testing.T) {
	uw, uh, ud := randomParams(rand.New(rand.NewPCG(5, 6)), 10, 1)
	if y, _ := Forward(0, uw, uh, ud); y != 0 {
		t.Errorf("f(0) = %v", y)
	}
	if y, _ := Forward(1, uw, uh, ud); math.Abs(y-1) > 1e-15 {
		t.Errorf("f(1) = %v", y)
	}
	// log f'(0) is the log of the first knot derivative.
	if _, ld := Forward(0, uw, uh, ud); math.Abs(ld-math.Log(MinDerivative+scalar.Softplus(ud[0]))) > 1e-12 {
		t.Errorf("log f'(0) = %v", ld)
	}
	for _, x := range []float64{-1e-12, -3, 1 + 1e-12, 7} {
		y, ld := Forward(x, uw, uh, ud)
		xi, ldi := Inverse(x, uw, uh, ud)
		if y != x || ld != 0 || xi != x || ldi != 0 {
			t.Errorf("outside [0,1] at %v: forward (%v, %v), inverse (%v, %v)", x, y, ld, xi, ldi)
		}
	}
}

func TestLogDerivFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 50; trial++ {
		uw, uh, ud := randomParams(rng, 1+rng.IntN(10), 1)
		x := 0.02 + 0.96*rng.Float64()
		_, ld := Forward(x, uw, uh, ud)
		d := fd.Derivative(func(v float64) float64 {
			y, _ := Forward(v, uw, uh, ud)
			return y
		}, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		if math.Abs(math.Log(d)-ld) > 1e-6 {
			t.Fatalf("x=%v: log f' = %v, finite difference %v", x, ld, math.Log(d))
		}
	}
}

// pack concatenates the parameters so fd.Gradient can perturb them.
func pack(uw, uh, ud []float64) []float64 {
	return append(append(append([]float64{}, uw...), uh...), ud...)
}

func unpack(p []float64, k int) (uw, uh, ud []float64) {
	return p[:k], p[k : 2*k], p[2*k:]
}

func TestVJPFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	set := &fd.Settings{Formula: fd.Central, Step: 1e-6}
	for trial := 0; trial < 60; trial++ {
		k := 1 + rng.IntN(10)
		uw, uh, ud := randomParams(rng, k, 1)
		v := 0.02 + 0.96*rng.Float64()
		gy, gld := rng.NormFloat64(), rng.NormFloat64()
		for _, inverse := range []bool{false, true} {
			f := Forward
			vjp := ForwardVJP
			if inverse {
				f, vjp = Inverse, InverseVJP
			}
			loss := func(v float64, p []float64) float64 {
				a, b, c := unpack(p, k)
				o, ld := f(v, a, b, c)
				return gy*o + gld*ld
			}
			guw, guh, gud := make([]float64, k), make([]float64, k), make([]float64, k+1)
			gv := vjp(v, uw, uh, ud, gy, gld, guw, guh, gud)
			p := pack(uw, uh, ud)
			want := fd.Gradient(nil, func(q []float64) float64 { return loss(v, q) }, p, set)
			got := pack(guw, guh, gud)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-6*(1+math.Abs(want[i])) {
					t.Fatalf("inverse=%v k=%d v=%v param %d: vjp %v, finite difference %v", inverse, k, v, i, got[i], want[i])
				}
			}
			wv := fd.Derivative(func(u float64) float64 { return loss(u, p) }, v, set)
			if math.Abs(gv-wv) > 1e-5*(1+math.Abs(wv)) {
				t.Fatalf("inverse=%v k=%d v=%v: d/dv vjp %v, finite difference %v", inverse, k, v, gv, wv)
			}
		}
	}
}

func TestVJPAccumulates(t *testing.T) {
	uw, uh, ud := randomParams(rand.New(rand.NewPCG(11, 12)), 5, 1)
	g1 := [3][]float64{make([]float64, 5), make([]float64, 5), make([]float64, 6)}
	g2 := [3][]float64{make([]float64, 5), make([]float64, 5), make([]float64, 6)}
	ForwardVJP(0.3, uw, uh, ud, 1, 1, g1[0], g1[1], g1[2])
	ForwardVJP(0.3, uw, uh, ud, 1, 1, g2[0], g2[1], g2[2])
	ForwardVJP(0.3, uw, uh, ud, 1, 1, g2[0], g2[1], g2[2])
	for j := range g1 {
		for i := range g1[j] {
			if math.Abs(g2[j][i]-2*g1[j][i]) > 1e-14 {
				t.Fatal("VJP does not accumulate")
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	uw, uh, ud := randomParams(rand.New(rand.NewPCG(13, 14)), 10, 1)
	guw, guh, gud := make([]float64, 10), make([]float64, 10), make([]float64, 11)
	n := testing.AllocsPerRun(100, func() {
		y, _ := Forward(0.4, uw, uh, ud)
		Inverse(y, uw, uh, ud)
		ForwardVJP(0.4, uw, uh, ud, 1, 1, guw, guh, gud)
		InverseVJP(y, uw, uh, ud, 1, 1, guw, guh, gud)
	})
	if n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}

// FuzzSplineRoundTrip checks that the inverse undoes the forward map for
// arbitrary parameters, to a tolerance scaled by the inverse's conditioning
// 1/f'(x), and that the log-derivatives agree.
func FuzzSplineRoundTrip(f *testing.F) {
	f.Add(0.5, int64(1), uint8(10), 1.0)
	f.Add(0.0, int64(2), uint8(1), 5.0)
	f.Add(1.0, int64(3), uint8(3), 0.1)
	f.Add(0.999999, int64(4), uint8(10), 10.0)
	f.Add(1e-300, int64(5), uint8(7), 20.0)
	f.Fuzz(func(t *testing.T, x float64, seed int64, k uint8, scale float64) {
		if !inside(x) || math.IsNaN(scale) || math.Abs(scale) > 30 {
			return
		}
		bins := 1 + int(k)%20
		uw, uh, ud := randomParams(rand.New(rand.NewPCG(uint64(seed), 99)), bins, scale)
		y, ld := Forward(x, uw, uh, ud)
		if !inside(y) || math.IsNaN(ld) || math.IsInf(ld, 0) {
			t.Fatalf("Forward(%v) = %v, %v", x, y, ld)
		}
		x2, ld2 := Inverse(y, uw, uh, ud)
		tol := 1e-13 * (1 + math.Exp(-ld))
		if math.Abs(x2-x) > tol {
			t.Fatalf("x=%v: inverse(forward(x)) = %v (error %g, tolerance %g)", x, x2, x2-x, tol)
		}
		if math.Abs(ld2-ld) > 1e-6*(1+math.Abs(ld)) && math.Abs(x2-x) == 0 {
			t.Fatalf("x=%v: log-derivatives %v and %v", x, ld, ld2)
		}
	})
}
