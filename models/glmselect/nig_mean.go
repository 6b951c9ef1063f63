package glmselect

import (
	"fmt"

	"github.com/trjgo/trj/ppl"
)

// PosteriorMean returns E[(α, β_γ) | y, γ] = (ZᵀZ + I/G)⁻¹ Zᵀy of the model
// with terms t (intercept first, then the active coefficients in
// increasing term index), on the coefficients' scale of Gaussian: with
// the model probabilities it gives the exact model-averaged coefficients
// and predictions that sampled runs are checked against.
func (e *NIG) PosteriorMean(t ppl.Terms) ([]float64, error) {
	if t.P() != e.p {
		return nil, fmt.Errorf("glmselect: a term set over %d terms for %d predictors", t.P(), e.p)
	}
	cols := []int{0}
	for _, i := range t.Indices() {
		cols = append(cols, i+1)
	}
	if _, err := e.logEvidence(cols); err != nil {
		return nil, err
	}
	out := make([]float64, len(cols))
	for i := range out {
		out[i] = e.sol[len(cols)].AtVec(i)
	}
	return out, nil
}
