package main

import (
	"math"
	"testing"
)

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
