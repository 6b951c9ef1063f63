package main

import (
	"math"
)

// probsFromLogZ returns the posterior model probabilities
// p_k = prior_k·Z_k / Σ_j prior_j·Z_j from log evidences with independent
// standard errors, and their delta-method standard errors
// (∂p_k/∂log Z_j = p_k(δ_kj − p_j)).
func probsFromLogZ(logZ, logZSE, prior []float64) (p, se []float64) {
	K := len(logZ)
	l := make([]float64, K)
	top := math.Inf(-1)
	for k := range l {
		l[k] = math.Log(prior[k]) + logZ[k]
		top = max(top, l[k])
	}
	p = make([]float64, K)
	var sum float64
	for k := range l {
		p[k] = math.Exp(l[k] - top)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	se = make([]float64, K)
	for k := range p {
		var v float64
		for j := range p {
			d := -p[k] * p[j]
			if j == k {
				d += p[k]
			}
			v += d * d * logZSE[j] * logZSE[j]
		}
		se[k] = math.Sqrt(v)
	}
	return p, se
}

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
