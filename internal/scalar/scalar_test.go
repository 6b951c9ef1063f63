package scalar

import (
	"math"
	"testing"
)

func TestScalar(t *testing.T) {
	for _, x := range []float64{-800, -30, -1, 0, 0.5, 30, 800} {
		want := math.Log1p(math.Exp(x))
		if math.IsInf(want, 1) {
			want = x
		}
		if got := Softplus(x); math.Abs(got-want) > 1e-15*math.Max(1, math.Abs(want)) {
			t.Errorf("Softplus(%v) = %v, want %v", x, got, want)
		}
		if s := Sigmoid(x) + Sigmoid(-x); math.Abs(s-1) > 1e-15 {
			t.Errorf("Sigmoid(%v) + Sigmoid(−x) = %v", x, s)
		}
	}
	if !AllFinite([]float64{0, -1e308}) || AllFinite([]float64{0, math.NaN()}) || Finite(math.Inf(-1)) {
		t.Error("finiteness checks disagree with math.IsNaN and math.IsInf")
	}
}
