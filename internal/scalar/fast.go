package scalar

import "math"

// FastLog returns log x for a normal positive x to about 1e-9 absolute,
// in a few multiplications and one division: for samplers that take
// thousands of logarithms to weigh proposals and correct the weights'
// error in their acceptance step. It is a fixed function of x, so two
// callers with equal x get equal values. x ≤ 0, subnormal, infinite or
// NaN gives NaN.
func FastLog(x float64) float64 {
	b := math.Float64bits(x)
	e := int(b>>52&0x7ff) - 1023
	if x <= 0 || e == -1023 || e == 1024 {
		return math.NaN()
	}
	m := math.Float64frombits(b&^(0x7ff<<52) | 1023<<52) // [1, 2)
	if m > math.Sqrt2 {
		m /= 2
		e++
	}
	// log m = 2 atanh t, t = (m−1)/(m+1), |t| ≤ 0.172: the series to t⁹
	// leaves below 1e-9.
	t := (m - 1) / (m + 1)
	t2 := t * t
	return float64(e)*math.Ln2 + 2*t*(1+t2*(1.0/3+t2*(1.0/5+t2*(1.0/7+t2*(1.0/9)))))
}
