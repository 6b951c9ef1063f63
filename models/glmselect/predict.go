package glmselect

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// predictions returns the quantities option of new rows X (data units):
// mean[i] = link(α + Σ_j β_j z_ij), with z the new rows on the training
// columns' scale (the design's means and scales), for each active term j.
func (d *design) predictions(X mat.Matrix, link func(float64) float64) (ppl.SelectionOption, error) {
	m, p := X.Dims()
	if p != d.p {
		return nil, fmt.Errorf("%w: Settings.Predict has %d columns, the predictors %d", ErrData, p, d.p)
	}
	if m < 1 {
		return nil, fmt.Errorf("%w: Settings.Predict has no rows", ErrData)
	}
	z := make([]float64, m*p) // row-major, on the coefficients' scale
	for i := range m {
		for j := range p {
			v := X.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: Settings.Predict row %d, predictor %s is %v", ErrData, i+1, d.names[j], v)
			}
			z[i*p+j] = (v - d.means[j]) / d.scales[j]
		}
	}
	names := make([]string, m)
	for i := range names {
		names[i] = "mean[" + strconv.Itoa(i+1) + "]"
	}
	f := func(t ppl.Terms, x []float64, dst []float64) error {
		idx := t.Indices()
		if len(x) < 1+len(idx) || len(dst) != m {
			return fmt.Errorf("glmselect: predictions: point of %d coordinates for %d terms, %d outputs for %d rows", len(x), len(idx), len(dst), m)
		}
		for i := range m {
			eta := x[0]
			row := z[i*p : (i+1)*p]
			for k, j := range idx {
				eta += x[1+k] * row[j]
			}
			dst[i] = link(eta)
		}
		return nil
	}
	return ppl.WithQuantities(names, f), nil
}

func identity(v float64) float64 { return v }

// logistic is 1/(1+e^−v), computed without overflow on either side.
func logistic(v float64) float64 {
	if v >= 0 {
		return 1 / (1 + math.Exp(-v))
	}
	e := math.Exp(v)
	return e / (1 + e)
}
