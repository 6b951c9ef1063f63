package rqspline

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKnotsMatchFree checks the cached-knot methods against the free
// functions, values and gradients, including the endpoints.
func TestKnotsMatchFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*(1+math.Abs(b)) }
	for trial := 0; trial < 100; trial++ {
		k := 1 + rng.IntN(12)
		uw, uh, ud := randomParams(rng, k, 1.5)
		s := NewKnots(k)
		s.Set(uw, uh, ud)
		for j := 0; j < 20; j++ {
			v := rng.Float64()
			switch j {
			case 0:
				v = 0
			case 1:
				v = 1
			case 2:
				v = -0.5
			}
			y1, l1 := Forward(v, uw, uh, ud)
			y2, l2 := s.Forward(v)
			x1, m1 := Inverse(v, uw, uh, ud)
			x2, m2 := s.Inverse(v)
			if !close(y2, y1) || !close(l2, l1) || !close(x2, x1) || !close(m2, m1) {
				t.Fatalf("k=%d v=%v: free (%v %v %v %v), knots (%v %v %v %v)", k, v, y1, l1, x1, m1, y2, l2, x2, m2)
			}
			gy, gl := rng.NormFloat64(), rng.NormFloat64()
			for _, inv := range []bool{false, true} {
				a := [3][]float64{make([]float64, k), make([]float64, k), make([]float64, k+1)}
				b := [3][]float64{make([]float64, k), make([]float64, k), make([]float64, k+1)}
				var g1, g2 float64
				if inv {
					g1 = InverseVJP(v, uw, uh, ud, gy, gl, a[0], a[1], a[2])
					g2 = s.InverseVJP(v, gy, gl, b[0], b[1], b[2])
				} else {
					g1 = ForwardVJP(v, uw, uh, ud, gy, gl, a[0], a[1], a[2])
					g2 = s.ForwardVJP(v, gy, gl, b[0], b[1], b[2])
				}
				// d/dv of the inverse is 1/f', ill-conditioned where f' is tiny.
				if math.Abs(g2-g1) > 1e-9*(1+math.Abs(g1)) {
					t.Fatalf("k=%d v=%v inverse=%v: d/dv %v vs %v", k, v, inv, g2, g1)
				}
				for p := range a {
					for i := range a[p] {
						if math.Abs(a[p][i]-b[p][i]) > 1e-8*(1+math.Abs(a[p][i])) {
							t.Fatalf("k=%d v=%v inverse=%v: gradient %d[%d] %v vs %v", k, v, inv, p, i, b[p][i], a[p][i])
						}
					}
				}
			}
		}
	}
}

func TestKnotsNoAllocs(t *testing.T) {
	uw, uh, ud := randomParams(rand.New(rand.NewPCG(1, 1)), 10, 1)
	s := NewKnots(10)
	g := [3][]float64{make([]float64, 10), make([]float64, 10), make([]float64, 11)}
	if n := testing.AllocsPerRun(50, func() {
		s.Set(uw, uh, ud)
		y, _ := s.Forward(0.3)
		s.Inverse(y)
		s.ForwardVJP(0.3, 1, 1, g[0], g[1], g[2])
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// FuzzSplineVJP checks, for arbitrary parameters and points, that the
// cached-knot path agrees with the free functions bit for bit (both
// compute every bin edge and size by the same expressions) and that the
// forward VJP with upstream (1, 0) equals f'(x) = exp(logDeriv).
func FuzzSplineVJP(f *testing.F) {
	f.Add(0.25, int64(1), uint8(10), 1.0)
	f.Add(1.0, int64(2), uint8(2), 4.0)
	f.Add(0.0, int64(3), uint8(15), 0.5)
	f.Fuzz(func(t *testing.T, x float64, seed int64, k uint8, scale float64) {
		if !inside(x) || math.IsNaN(scale) || math.Abs(scale) > 10 {
			return
		}
		bins := 1 + int(k)%20
		uw, uh, ud := randomParams(rand.New(rand.NewPCG(uint64(seed), 7)), bins, scale)
		s := NewKnots(bins)
		s.Set(uw, uh, ud)
		y1, l1 := Forward(x, uw, uh, ud)
		y2, l2 := s.Forward(x)
		if y1 != y2 || l1 != l2 {
			t.Fatalf("x=%v: free (%v, %v), knots (%v, %v)", x, y1, l1, y2, l2)
		}
		g := [3][]float64{make([]float64, bins), make([]float64, bins), make([]float64, bins+1)}
		dx := s.ForwardVJP(x, 1, 0, g[0], g[1], g[2])
		if d := math.Exp(l2); math.Abs(dx-d) > 1e-9*(1+d) {
			t.Fatalf("x=%v: VJP d/dx %v, exp(logDeriv) %v", x, dx, d)
		}
	})
}
