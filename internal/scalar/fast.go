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

// FastExp returns e^x to about 1e-8 relative for x ≤ 709, 0 below −708:
// FastLog's companion.
func FastExp(x float64) float64 {
	switch {
	case x < -708:
		return 0
	case x > 709 || x != x:
		return math.Exp(x)
	}
	// Adding 1.5·2⁵² rounds to the nearest integer in float64.
	const round = 6755399441055744.0
	k := (x*math.Log2E + round) - round
	f := x - k*math.Ln2 // |f| ≤ ln 2 / 2
	p := 1 + f*(1+f*(1.0/2+f*(1.0/6+f*(1.0/24+f*(1.0/120+f*(1.0/720+f*(1.0/5040+f*(1.0/40320))))))))
	return math.Float64frombits(math.Float64bits(p) + uint64(int64(k))<<52)
}
