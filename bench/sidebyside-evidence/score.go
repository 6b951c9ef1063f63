package main

import (
	"math"
)

// score is an estimate of the model probabilities against the reference.
type score struct {
	// MaxErr is the largest |P_k − ref_k|, SEAtMax the reported SE of that
	// model and ZAtMax its z-score.
	MaxErr, SEAtMax, ZAtMax float64
	// MaxZ is the largest |z_k| over the models, z_k = (P_k − ref_k) /
	// √(SE_k² + refSE_k²); Within4 says every |z_k| ≤ 4.
	MaxZ    float64
	Within4 bool
	// SumSq is Σ_k (P_k − ref_k)².
	SumSq float64
}

// scoreProbs scores estimates p ± se against ref ± refSE (refSE nil: exact).
// A NaN estimate or SE makes the score NaN and Within4 false.
func scoreProbs(p, se, ref, refSE []float64) score {
	s := score{Within4: true, MaxErr: -1}
	for k := range ref {
		e := p[k] - ref[k]
		v := se[k] * se[k]
		if refSE != nil {
			v += refSE[k] * refSE[k]
		}
		z := e / math.Sqrt(v)
		if e == 0 {
			z = 0
		}
		if math.IsNaN(e) || math.IsNaN(z) {
			return score{MaxErr: math.NaN(), SEAtMax: math.NaN(), ZAtMax: math.NaN(), MaxZ: math.NaN(), SumSq: math.NaN()}
		}
		if math.Abs(e) > s.MaxErr {
			s.MaxErr, s.SEAtMax, s.ZAtMax = math.Abs(e), se[k], z
		}
		s.MaxZ = max(s.MaxZ, math.Abs(z))
		if !(math.Abs(z) <= 4) {
			s.Within4 = false
		}
		s.SumSq += e * e
	}
	return s
}
