package main

import (
	"math"
	"testing"
)

func TestProbsFromLogZ(t *testing.T) {
	logZ := []float64{-10, -10 + math.Log(3), -40}
	se := []float64{0.1, 0.2, 0.05}
	prior := []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	p, pse := probsFromLogZ(logZ, se, prior)
	want := []float64{0.25, 0.75, math.Exp(-30) / 4}
	for k := range p {
		if math.Abs(p[k]-want[k]) > 1e-12*math.Max(want[k], 1e-300)+1e-15 {
			t.Errorf("p[%d] = %g, want %g", k, p[k], want[k])
		}
	}
	// Two models: sd(p₀) = p₀p₁·√(se₀² + se₁²); the third is negligible.
	if w := 0.25 * 0.75 * math.Hypot(0.1, 0.2); math.Abs(pse[0]-w) > 1e-9 {
		t.Errorf("se[0] = %g, want %g", pse[0], w)
	}
	// A rare model's relative SE is its log Z's SE (to first order).
	if r := pse[2] / p[2]; math.Abs(r-math.Sqrt(0.05*0.05+0.75*0.75*0.2*0.2+0.25*0.25*0.1*0.1)) > 1e-9 {
		t.Errorf("relative se of the rare model %g", r)
	}
}

func TestScoreProbs(t *testing.T) {
	s := scoreProbs([]float64{0.3, 0.7}, []float64{0.01, 0.01}, []float64{0.25, 0.75}, []float64{0, 0.0})
	if math.Abs(s.MaxErr-0.05) > 1e-12 || math.Abs(s.MaxZ-5) > 1e-9 || s.Within4 || math.Abs(s.SumSq-0.005) > 1e-12 {
		t.Errorf("score %+v", s)
	}
	s = scoreProbs([]float64{0.3, 0.7}, []float64{0.03, 0.03}, []float64{0.25, 0.75}, []float64{0.04, 0.04})
	if math.Abs(s.MaxZ-1) > 1e-9 || !s.Within4 || math.Abs(math.Abs(s.ZAtMax)-1) > 1e-9 {
		t.Errorf("score with reference SE %+v", s)
	}
	if s := scoreProbs([]float64{math.NaN(), 1}, []float64{0, 0}, []float64{0.5, 0.5}, nil); s.Within4 || !math.IsNaN(s.MaxErr) {
		t.Errorf("NaN estimate scored %+v", s)
	}
}
