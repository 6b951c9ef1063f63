package glmselect

import "math"

// corr is the correlation of the columns of terms i and j
// (ppl.WithTermCorrelation): their standardised Gram entry over n − 1. It
// is safe for concurrent use.
func (g *gram) corr(i, j int) float64 {
	return g.c[i*g.p+j] / math.Sqrt(g.diag[i]*g.diag[j])
}
