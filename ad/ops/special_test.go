package ops

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mathext"
)

func TestTrigamma(t *testing.T) {
	// Closed forms, DLMF 5.15.
	exact := []struct{ x, want float64 }{
		{1, math.Pi * math.Pi / 6},
		{0.5, math.Pi * math.Pi / 2},
		{2, math.Pi*math.Pi/6 - 1},
		{1.5, math.Pi*math.Pi/2 - 4},
		{-0.5, math.Pi*math.Pi/2 + 4},
	}
	for _, c := range exact {
		if got := trigamma(c.x); math.Abs(got-c.want) > 1e-13*math.Abs(c.want) {
			t.Errorf("trigamma(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	// Against a central difference of gonum's digamma elsewhere.
	for _, x := range []float64{0.1, 0.9, 3.3, 7.5, 9.99, 10.01, 25, 300, -1.3, -7.8} {
		want := fd.Derivative(mathext.Digamma, x, &fd.Settings{Formula: fd.Central, Step: 1e-5 * math.Max(1, math.Abs(x))})
		if got := trigamma(x); math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("trigamma(%v) = %v, finite difference of digamma %v", x, got, want)
		}
	}
	if !math.IsInf(trigamma(-2), 1) || !math.IsInf(trigamma(0), 1) {
		t.Error("trigamma at a pole is not +Inf")
	}
}
