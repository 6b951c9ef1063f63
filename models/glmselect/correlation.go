package glmselect

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// corr is the correlation of the columns of terms i and j
// (ppl.WithTermCorrelation): their standardised Gram entry over n − 1.
// Above fullGramMaxP terms it is one inner product of the centred
// columns (n multiplications), not a row of the Gram matrix: a caller
// such as the credible sets reads a lead against every term, and a row
// per term would cost n p each. It is safe for concurrent use.
func (g *gram) corr(i, j int) float64 {
	if g.c == nil {
		if i == j {
			return 1
		}
		return floats.Dot(g.cols[i], g.cols[j]) * g.inv[i] * g.inv[j] / math.Sqrt(g.diag[i]*g.diag[j])
	}
	return g.c[i*g.p+j] / math.Sqrt(g.diag[i]*g.diag[j])
}
