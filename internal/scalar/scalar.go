package scalar

import (
	"errors"
	"math"
)

// ErrNonFinite reports a NaN or infinite value. Packages wrap it with
// their name and what was not finite.
var ErrNonFinite = errors.New("non-finite value")

// Finite reports whether v is neither NaN nor infinite.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// AllFinite reports whether every element of v is finite.
func AllFinite(v []float64) bool {
	for _, x := range v {
		if !Finite(x) {
			return false
		}
	}
	return true
}

// Softplus is log(1 + eˣ) without overflow for large x or loss of
// precision for very negative x.
func Softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// Sigmoid is 1/(1 + e⁻ˣ), the derivative of Softplus, evaluated so that
// exp never overflows.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
