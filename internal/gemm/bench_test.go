package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BenchmarkDgemm compares Dgemm with gonum's serial Dgemm at the sizes of
// a flow's training step: a batch of 64 rows times layers of a few dozen
// to a few hundred units, in the three variants of package ad/ops.
func BenchmarkDgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range [][3]int{{64, 64, 64}, {64, 192, 192}, {64, 62, 64}, {64, 2, 64}, {64, 64, 2}, {64, 21, 256}} {
		for _, v := range []struct {
			name   string
			tA, tB blas.Transpose
		}{{"NN", blas.NoTrans, blas.NoTrans}, {"NT", blas.NoTrans, blas.Trans}, {"TN", blas.Trans, blas.NoTrans}} {
			m, n, k := s[0], s[1], s[2]
			if v.tA == blas.Trans {
				// gᵀ·x: the batch is the inner dimension.
				m, k = s[1], s[0]
				n = s[2]
			}
			p := newProblem(rng, v.tA, v.tB, m, n, k, 1, 1)
			// Unit strides, as ad/ops has them.
			p.lda, p.ldb, p.ldc = k, n, n
			if v.tA == blas.Trans {
				p.lda = m
			}
			if v.tB == blas.Trans {
				p.ldb = k
			}
			work := make([]float64, WorkLen(k))
			flops := float64(2 * m * n * k)
			name := fmt.Sprintf("%s/m=%d/n=%d/k=%d", v.name, m, n, k)
			b.Run(name+"/gemm", func(b *testing.B) {
				for b.Loop() {
					Dgemm(v.tA, v.tB, m, n, k, 1, p.a, p.lda, p.b, p.ldb, 1, p.c, p.ldc, work)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run(name+"/gonum", func(b *testing.B) {
				ar, ac := m, k
				if v.tA == blas.Trans {
					ar, ac = k, m
				}
				br, bc := k, n
				if v.tB == blas.Trans {
					br, bc = n, k
				}
				ga := blas64.General{Rows: ar, Cols: ac, Stride: p.lda, Data: p.a}
				gb := blas64.General{Rows: br, Cols: bc, Stride: p.ldb, Data: p.b}
				gc := blas64.General{Rows: m, Cols: n, Stride: p.ldc, Data: p.c}
				for b.Loop() {
					blas64.Gemm(v.tA, v.tB, 1, ga, gb, 1, gc)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
