package scalar

import "math"

// besselSeriesMax is where the modified Bessel functions switch from their
// power series (positive terms, accurate to a few ulps, about x + 20 of
// them) to their asymptotic expansions (whose smallest term, near k = 2x,
// is below 1e-17 from here on).
const besselSeriesMax = 25

// LogBesselI0 is log I₀(x), the logarithm of the modified Bessel function
// of the first kind of order zero, the normalising constant of the von
// Mises distribution. It is even in x and finite for every finite x.
func LogBesselI0(x float64) float64 {
	x = math.Abs(x)
	if x <= besselSeriesMax {
		i0, _ := besselI0I1Series(x)
		return math.Log(i0)
	}
	s0, _ := besselAsymptotic(x)
	return x - 0.5*math.Log(2*math.Pi*x) + math.Log(s0)
}

// BesselI1OverI0 is I₁(x)/I₀(x), the derivative of LogBesselI0 (the mean
// resultant length of a von Mises distribution of concentration x). It is
// odd in x.
func BesselI1OverI0(x float64) float64 {
	a := math.Abs(x)
	var r float64
	if a <= besselSeriesMax {
		i0, i1 := besselI0I1Series(a)
		r = i1 / i0
	} else {
		s0, s1 := besselAsymptotic(a)
		r = s1 / s0
	}
	return math.Copysign(r, x)
}

// BesselI1OverI0Deriv is the derivative of BesselI1OverI0,
// 1 − A(x)/x − A(x)² with A = I₁/I₀, and ½ at zero.
func BesselI1OverI0Deriv(x float64) float64 {
	if x == 0 {
		return 0.5
	}
	a := BesselI1OverI0(x)
	return 1 - a/x - a*a
}

// besselI0I1Series sums I₀(x) = Σ (x²/4)ᵏ/(k!)² and
// I₁(x) = (x/2) Σ (x²/4)ᵏ/(k!(k+1)!) for 0 ≤ x ≤ besselSeriesMax.
func besselI0I1Series(x float64) (i0, i1 float64) {
	q := x * x / 4
	t0, t1 := 1.0, 1.0
	i0, i1 = 1, 1
	for k := 1.0; k < 200; k++ {
		t0 *= q / (k * k)
		t1 *= q / (k * (k + 1))
		i0 += t0
		i1 += t1
		if t0 < 1e-17*i0 && t1 < 1e-17*i1 {
			break
		}
	}
	return i0, x / 2 * i1
}

// besselAsymptotic returns the sums S₀ and S₁ of Iᵥ(x) ≈ eˣ/√(2πx)·Sᵥ,
// Sᵥ = Σₖ (−1)ᵏ aₖ(ν)/xᵏ (DLMF 10.40.1), for x > besselSeriesMax, stopping
// at the first term below 1e-17.
func besselAsymptotic(x float64) (s0, s1 float64) {
	t0, t1 := 1.0, 1.0
	s0, s1 = 1, 1
	for k := 1.0; k < 100; k++ {
		m := (2*k - 1) * (2*k - 1)
		t0 *= m / (8 * k * x)
		t1 *= (m - 4) / (8 * k * x)
		s0 += t0
		s1 += t1
		if t0 < 1e-17 && math.Abs(t1) < 1e-17 {
			break
		}
	}
	return s0, s1
}
