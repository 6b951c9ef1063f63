package scalar

import (
	"math"
	"testing"
)

func TestBesselI0I1(t *testing.T) {
	// Abramowitz and Stegun, table 9.8 (ten significant digits).
	for _, c := range []struct{ x, i0, i1 float64 }{
		{1, 1.266065878, 0.5651591040},
		{2, 2.279585302, 1.590636855},
		{5, 27.23987182, 24.33564214},
		{10, 2815.716628, 2670.988304},
	} {
		if got := math.Exp(LogBesselI0(c.x)); math.Abs(got/c.i0-1) > 1e-9 {
			t.Errorf("I0(%v) = %.12g, want %.10g", c.x, got, c.i0)
		}
		if got := BesselI1OverI0(c.x); math.Abs(got/(c.i1/c.i0)-1) > 1e-9 {
			t.Errorf("I1/I0(%v) = %.12g, want %.10g", c.x, got, c.i1/c.i0)
		}
	}
	// The power series and the asymptotic expansion agree where they meet
	// and beyond it, where the series is still accurate.
	for _, x := range []float64{besselSeriesMax, 30, 40} {
		i0, i1 := besselI0I1Series(x)
		s0, s1 := besselAsymptotic(x)
		logI0 := x - 0.5*math.Log(2*math.Pi*x) + math.Log(s0)
		if d := math.Abs(logI0 - math.Log(i0)); d > 1e-14*logI0 {
			t.Errorf("log I0(%v): series %.17g, asymptotic %.17g", x, math.Log(i0), logI0)
		}
		if d := math.Abs(s1/s0 - i1/i0); d > 1e-15 {
			t.Errorf("I1/I0(%v): series %.17g, asymptotic %.17g", x, i1/i0, s1/s0)
		}
	}
	// Even and odd; the derivative matches finite differences.
	for _, x := range []float64{0, 1e-8, 0.3, 3, 24.9, 25.1, 300, 1e6} {
		if LogBesselI0(-x) != LogBesselI0(x) || BesselI1OverI0(-x) != -BesselI1OverI0(x) {
			t.Errorf("symmetry broken at %v", x)
		}
		h := 1e-5 * math.Max(1, x)
		fd := (LogBesselI0(x+h) - LogBesselI0(x-h)) / (2 * h)
		if d := math.Abs(fd - BesselI1OverI0(x)); d > 1e-8 {
			t.Errorf("d/dx log I0(%v): %.12g, finite differences %.12g", x, BesselI1OverI0(x), fd)
		}
		fd = (BesselI1OverI0(x+h) - BesselI1OverI0(x-h)) / (2 * h)
		if d := math.Abs(fd - BesselI1OverI0Deriv(x)); d > 1e-7 {
			t.Errorf("d/dx I1/I0(%v): %.12g, finite differences %.12g", x, BesselI1OverI0Deriv(x), fd)
		}
	}
	if v := LogBesselI0(0); v != 0 {
		t.Errorf("log I0(0) = %v", v)
	}
	if v := LogBesselI0(1e300); math.IsInf(v, 0) || math.IsNaN(v) {
		t.Errorf("log I0(1e300) = %v", v)
	}
}
