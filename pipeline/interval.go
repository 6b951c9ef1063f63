package pipeline

import "math"

// Interval returns the score (Wilson) interval for the model's probability
// at z standard errors: the p with |P − p| ≤ z·√(p(1 − p)/n), n the
// effective number of independent steps, P(1 − P)/MCSE² when the chains
// mixed and Steps (every kept step, the most n can be) when they never
// entered or never left the model. For a well-visited model it is P ±
// z·MCSE to within a small fraction of MCSE; use it instead for a rarely
// visited one, whose MCSE is estimated from its few visits and shrinks with
// them: with five visits expected, one visit puts P four MCSE below the
// probability, yet inside the interval at z = 4, which takes the standard
// error at p rather than at P (the score test's interval rather than
// Wald's). It returns NaN, NaN when there are no steps or z is not
// positive.
func (c Estimate) Interval(z float64) (lo, hi float64) {
	n := float64(c.Steps)
	if c.Mixed && c.MCSE > 0 {
		n = c.P * (1 - c.P) / (c.MCSE * c.MCSE)
	}
	if !(n > 0) || !(z > 0) || math.IsInf(z, 1) {
		return math.NaN(), math.NaN()
	}
	return wilson(c.P, n, z)
}

// wilson is the Wilson score interval of a proportion p from n independent
// trials at z standard errors.
func wilson(p, n, z float64) (lo, hi float64) {
	z2n := z * z / n
	centre := (p + z2n/2) / (1 + z2n)
	half := z / (1 + z2n) * math.Sqrt(p*(1-p)/n+z2n/(4*n))
	return max(centre-half, 0), min(centre+half, 1)
}
