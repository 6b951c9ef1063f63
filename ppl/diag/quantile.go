package diag

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Quantile returns the p-quantile of the pooled draws of x, interpolating
// linearly between order statistics (Hyndman and Fan's type 7, the default of
// R and NumPy, so that summaries match theirs). p must lie in [0, 1].
func Quantile(x [][]float64, p float64) (float64, error) {
	if !(p >= 0 && p <= 1) {
		return math.NaN(), fmt.Errorf("diag: quantile probability %v outside [0, 1]", p)
	}
	if _, _, err := check(x, 1); err != nil {
		return math.NaN(), err
	}
	sorted := pooled(x)
	slices.Sort(sorted)
	return quantileSorted(sorted, p), nil
}

// quantileSorted is the type 7 p-quantile of sorted, which must be non-empty.
func quantileSorted(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// MCSEMean returns the Monte Carlo standard error of the mean of x,
// sd(x)/√ESS(x).
func MCSEMean(x [][]float64) (float64, error) {
	ess, err := ESS(x)
	if err != nil {
		return math.NaN(), err
	}
	_, v := meanVar(pooled(x))
	return math.Sqrt(v / ess), nil
}

// MCSEQuantile returns the Monte Carlo standard error of the p-quantile of
// x. It inverts the Beta(ESS·p + 1, ESS·(1−p) + 1) posterior of the
// probability mass below the quantile at ±1 standard deviation, and takes
// half the distance between the corresponding order statistics (Vehtari et
// al. 2021 §4.3), so it needs no density estimate.
func MCSEQuantile(x [][]float64, p float64) (float64, error) {
	sorted, err := quantileDraws(x, p)
	if err != nil {
		return math.NaN(), err
	}
	ess, err := essQuantile(x, sorted, p)
	if err != nil {
		return math.NaN(), err
	}
	b := distuv.Beta{Alpha: ess*p + 1, Beta: ess*(1-p) + 1}
	lo := b.Quantile(distuv.UnitNormal.CDF(-1))
	hi := b.Quantile(distuv.UnitNormal.CDF(1))
	s := len(sorted)
	i := max(int(math.Floor(lo*float64(s))), 1) - 1
	j := min(int(math.Ceil(hi*float64(s))), s) - 1
	return (sorted[j] - sorted[i]) / 2, nil
}
