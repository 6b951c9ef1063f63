package kernels

import (
	"errors"
	"fmt"
	"math"
)

// Target is a differentiable log-density on R^n, known up to an additive
// constant. ad.Program and ppl.Model satisfy it.
//
// A non-nil error (bad shape, non-finite value) is treated by every kernel as
// a rejected proposal with log-density −∞, never as a panic. A Target
// usually keeps scratch space, so each goroutine needs its own.
type Target interface {
	// Dim is the dimension n of the space.
	Dim() int
	// LogDensityGrad returns log p(x) and writes ∇log p(x) into grad,
	// which has length Dim.
	LogDensityGrad(x, grad []float64) (float64, error)
}

// logDensityer is the optional gradient-free evaluation that ad.Program and
// ppl.Model offer; random-walk kernels use it to skip the gradient.
type logDensityer interface {
	LogDensity(x []float64) (float64, error)
}

// ErrDimension is returned (wrapped) when a position, covariance or
// initial point does not match the target's dimension.
var ErrDimension = errors.New("kernels: dimension mismatch")

// ErrNoFinitePoint is returned (wrapped, with the cause: the target's
// error, the log-density's value or the gradient entry) when an initial
// position has a non-finite log-density or gradient or the target reports
// an error there.
var ErrNoFinitePoint = errors.New("kernels: no usable initial point")

// evalGrad evaluates t at x, folding errors and non-finite values into
// −∞ so that callers only ever compare numbers.
func evalGrad(t Target, x, grad []float64) float64 {
	lp, err := t.LogDensityGrad(x, grad)
	if err != nil || math.IsNaN(lp) || math.IsInf(lp, 1) || !finiteGrad(grad) {
		return math.Inf(-1)
	}
	return lp
}

// evalValue evaluates t at x without needing the gradient when t offers a
// gradient-free evaluation; grad is scratch of length Dim otherwise.
func evalValue(t Target, x, grad []float64) float64 {
	var lp float64
	var err error
	if ld, ok := t.(logDensityer); ok {
		lp, err = ld.LogDensity(x)
	} else {
		lp, err = t.LogDensityGrad(x, grad)
	}
	if err != nil || math.IsNaN(lp) || math.IsInf(lp, 1) {
		return math.Inf(-1)
	}
	return lp
}

// initialPointError says why x cannot start a chain, wrapping
// ErrNoFinitePoint and the target's own error if it returned one; nil if
// x can. withGrad also requires a finite gradient.
func initialPointError(t Target, x, grad []float64, withGrad bool) error {
	var lp float64
	var err error
	if ld, ok := t.(logDensityer); ok && !withGrad {
		lp, err = ld.LogDensity(x)
	} else {
		lp, err = t.LogDensityGrad(x, grad)
	}
	switch {
	case err != nil:
		return fmt.Errorf("%w: the target failed: %w", ErrNoFinitePoint, err)
	case math.IsNaN(lp) || math.IsInf(lp, 0):
		return fmt.Errorf("%w: log-density %v", ErrNoFinitePoint, lp)
	case withGrad:
		for i, v := range grad {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: log-density %v is finite but gradient entry %d is %v", ErrNoFinitePoint, lp, i, v)
			}
		}
	}
	return nil
}

// finiteGrad reports whether every entry of g is finite.
func finiteGrad(g []float64) bool {
	for _, v := range g {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
