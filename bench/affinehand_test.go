package bench

// This file is a frozen copy of flows.Affine's hand-written Forward and
// Inverse from before they ran compiled ad programs (main c5032a6):
// BenchmarkAffineEval measures the graph path against it, as
// flowhand_test.go keeps the hand RQMA. Nothing outside the benchmarks
// uses it.

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/scalar"
)

var errHandAffineNonFinite = errors.New("bench: hand affine: non-finite value")

// handAffine is z = L⁻¹(θ − μ).
type handAffine struct {
	mean   []float64
	l      blas64.Triangular // lower, row-major
	logDet float64           // Σ log L_ii = log|det J_T⁻¹|
}

// newHandAffine is the hand affine of mean μ and lower factor L.
func newHandAffine(mean []float64, l *mat.TriDense) *handAffine {
	n := len(mean)
	a := &handAffine{mean: append([]float64(nil), mean...)}
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			data[i*n+j] = l.At(i, j)
		}
		a.logDet += math.Log(data[i*n+i])
	}
	a.l = blas64.Triangular{N: n, Stride: n, Data: data, Uplo: blas.Lower, Diag: blas.NonUnit}
	return a
}

func (a *handAffine) Forward(theta, z []float64) (float64, error) {
	n := len(a.mean)
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("flows: Forward on %d→%d values, flow dimension %d", len(theta), len(z), n)
	}
	for i := range z {
		z[i] = theta[i] - a.mean[i]
	}
	blas64.Trsv(blas.NoTrans, a.l, blas64.Vector{N: len(z), Inc: 1, Data: z})
	if !scalar.AllFinite(z) {
		return -a.logDet, errHandAffineNonFinite
	}
	return -a.logDet, nil
}

func (a *handAffine) Inverse(z, theta []float64) (float64, error) {
	n := len(a.mean)
	if len(theta) != n || len(z) != n {
		return 0, fmt.Errorf("flows: Inverse on %d→%d values, flow dimension %d", len(z), len(theta), n)
	}
	copy(theta, z)
	blas64.Trmv(blas.NoTrans, a.l, blas64.Vector{N: len(theta), Inc: 1, Data: theta})
	for i := range theta {
		theta[i] += a.mean[i]
	}
	if !scalar.AllFinite(theta) {
		return a.logDet, errHandAffineNonFinite
	}
	return a.logDet, nil
}
