package ops

import "math"

// trigamma returns ψ₁(x), the derivative of the digamma function. gonum's
// mathext has Digamma but no trigamma, which lgamma's second derivative
// needs.
func trigamma(x float64) float64 {
	switch {
	case math.IsNaN(x), math.IsInf(x, -1):
		return math.NaN()
	case math.IsInf(x, 1):
		return 0
	case x <= 0 && x == math.Floor(x):
		return math.Inf(1)
	}
	var acc float64
	if x < 0 {
		// Reflection, DLMF 5.15.6: ψ₁(1−x) + ψ₁(x) = π²/sin²(πx). The
		// fractional part keeps sin accurate for large |x|.
		s := math.Sin(math.Pi * (x - math.Floor(x)))
		acc = math.Pi * math.Pi / (s * s)
		return acc - trigamma(1-x)
	}
	// Recurrence ψ₁(x) = ψ₁(x+1) + 1/x² until the asymptotic series is
	// accurate to about 1e-15 relative.
	for ; x < 10; x++ {
		acc += 1 / (x * x)
	}
	// Asymptotic expansion, DLMF 5.15.8, with Bernoulli numbers B₂…B₁₂.
	r := 1 / x
	r2 := r * r
	series := r2 * (1.0/6 + r2*(-1.0/30+r2*(1.0/42+r2*(-1.0/30+r2*(5.0/66+r2*(-691.0/2730))))))
	return acc + r + r2/2 + r*series
}
