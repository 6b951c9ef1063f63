package pipeline

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/ppl/diag"
)

// Estimate is a posterior mean estimated from chains (a model's
// probability, a term's inclusion probability, a model size), with its
// Monte Carlo standard error, R̂ across chains and effective sample size.
type Estimate struct {
	// P is the mean over every kept step of every chain.
	P float64
	// MCSE is P's Monte Carlo standard error: the larger of the one from
	// the series' ESS across chains and the spread of the chains' own
	// means (their standard deviation over √chains). The chains start
	// apart, so their means are independent estimates whatever the
	// mixing; their spread counts slow components (rare passages between
	// the modes of a multimodal posterior) that the autocorrelations
	// within one chain cannot show.
	MCSE float64
	// Rhat is the rank-normalised split-R̂ and ESS the bulk effective
	// sample size (Vehtari et al. 2021). Either is NaN when the chains are
	// too short for it; R̂ is +Inf when chains sit at different constant
	// values (a term always in one chain and never in another).
	Rhat, ESS float64
	// Mixed is false when the series never changed in any chain (the
	// chains never entered the model, or never left it): P is then 0 or 1
	// and MCSE, R̂ and ESS, which the chains cannot estimate, are 0, 1 and
	// 0.
	Mixed bool
	// Steps is the number of kept steps over all chains that P counts.
	Steps int
}

// EstimateMean estimates the mean of x, one series per chain, by the rule
// of Estimate. The chains may have different lengths (a run stopped
// early keeps every finished step): P is then the mean of every step, its
// MCSE combines each chain's own (the chains are independent) with the
// spread of their means, and R̂ and ESS are computed on the chains cut to
// the shortest.
func EstimateMean(x [][]float64) Estimate {
	var sum float64
	n := 0
	for _, c := range x {
		for _, v := range c {
			sum += v
		}
		n += len(c)
	}
	e := Estimate{Rhat: 1, Steps: n}
	if n == 0 {
		return e
	}
	e.P = sum / float64(n)
	if constantSeries(x) {
		return e
	}
	e.Mixed = true
	short := x
	if !sameLength(x) {
		short = cut(x)
	}
	rhat, errR := diag.Rhat(short)
	ess, errE := diag.ESSBulk(short)
	e.Rhat, e.ESS = rhat, ess
	if errR != nil {
		e.Rhat = math.NaN()
		if chainsConstant(x) {
			e.Rhat = math.Inf(1)
		}
	}
	if errE != nil {
		e.ESS = math.NaN()
	}
	var mcse float64
	if sameLength(x) {
		var err error
		if mcse, err = diag.MCSEMean(x); err != nil || math.IsNaN(mcse) {
			mcse = batchMeansSE(x)
		}
	} else {
		mcse = pooledSE(x, n)
	}
	spread := betweenSE(x)
	if math.IsNaN(mcse) {
		mcse = spread
	}
	e.MCSE = max(mcse, spread)
	return e
}

// pooledSE is the standard error of the step-weighted mean of chains of
// different lengths: each chain's mean has its own MCSE (batch means when
// the chain is too short for its ESS), weighted by its share of the steps.
func pooledSE(x [][]float64, n int) float64 {
	var v float64
	for _, c := range x {
		if len(c) == 0 {
			continue
		}
		one := [][]float64{c}
		se, err := diag.MCSEMean(one)
		if err != nil || math.IsNaN(se) {
			se = batchMeansSE(one)
		}
		if math.IsNaN(se) {
			return math.NaN()
		}
		w := float64(len(c)) / float64(n)
		v += w * w * se * se
	}
	return math.Sqrt(v)
}

// batchMeansSE is the standard error from 20 batch means per chain, the
// fallback when the ESS cannot be computed.
func batchMeansSE(x [][]float64) float64 {
	var means []float64
	for _, c := range x {
		b := max(1, len(c)/20)
		for i := 0; i+b <= len(c); i += b {
			means = append(means, stat.Mean(c[i:i+b], nil))
		}
	}
	if len(means) < 2 {
		return math.NaN()
	}
	return stat.StdDev(means, nil) / math.Sqrt(float64(len(means)))
}

// betweenSE is the standard deviation of the chains' means over √chains
// (0 for one chain).
func betweenSE(x [][]float64) float64 {
	var means []float64
	for _, c := range x {
		if len(c) > 0 {
			means = append(means, stat.Mean(c, nil))
		}
	}
	if len(means) < 2 {
		return 0
	}
	return stat.StdDev(means, nil) / math.Sqrt(float64(len(means)))
}

// constantSeries reports whether every value of every chain is the same.
func constantSeries(x [][]float64) bool {
	first, set := 0.0, false
	for _, c := range x {
		for _, v := range c {
			if !set {
				first, set = v, true
			}
			if v != first {
				return false
			}
		}
	}
	return true
}

// chainsConstant reports whether each chain is constant on its own.
func chainsConstant(x [][]float64) bool {
	for _, c := range x {
		if !constantSeries([][]float64{c}) {
			return false
		}
	}
	return true
}

func sameLength(x [][]float64) bool {
	for _, c := range x {
		if len(c) != len(x[0]) {
			return false
		}
	}
	return true
}

// cut returns x's chains cut to the shortest non-empty one.
func cut(x [][]float64) [][]float64 {
	n := math.MaxInt
	var out [][]float64
	for _, c := range x {
		if len(c) > 0 {
			n = min(n, len(c))
			out = append(out, c)
		}
	}
	for i := range out {
		out[i] = out[i][:n]
	}
	return out
}
