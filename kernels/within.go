package kernels

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// RandomWalkCovariances returns the proposal covariances of
// NewModelRandomWalk fitted to draws: Σ_k = scale/n_k · Cov(draws[k]), the
// classic scaling being scale = 2.38² (Roberts, Gelman and Gilks 1997).
// A model of dimension 0 gets nil. It fails for a model with no more draws
// than dimensions or whose draws' covariance is singular.
func RandomWalkCovariances(draws [][][]float64, scale float64) ([]mat.Symmetric, error) {
	out := make([]mat.Symmetric, len(draws))
	for k, x := range draws {
		if len(x) == 0 {
			return nil, fmt.Errorf("kernels: model %d has no training draws for the random walk's covariance", k)
		}
		n := len(x[0])
		if n == 0 {
			continue // a model of dimension 0 never moves
		}
		if len(x) <= n {
			return nil, fmt.Errorf("kernels: model %d: %d training draws cannot give the random walk a %d×%d covariance", k, len(x), n, n)
		}
		m := mat.NewDense(len(x), n, nil)
		for i, row := range x {
			m.SetRow(i, row)
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, m, nil)
		cov.ScaleSym(scale/float64(n), &cov)
		var ch mat.Cholesky
		if !ch.Factorize(&cov) || ch.Cond() > 1e12 {
			return nil, fmt.Errorf("kernels: model %d: the covariance of its training draws is singular: the random walk cannot use it", k)
		}
		out[k] = &cov
	}
	return out, nil
}
