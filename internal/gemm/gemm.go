package gemm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
)

// Register tile of the micro-kernel: mr rows by nr columns of C.
const (
	mr = 4
	nr = 8
)

// WorkLen returns the length of work that Dgemm needs for an inner
// dimension k so that it does not allocate: room to pack one panel of
// op(B) (k×8) and one of op(A) (4×k).
func WorkLen(k int) int { return k * (mr + nr) }

// Dgemm computes C = alpha·op(A)·op(B) + beta·C, where op(A) is m×k,
// op(B) is k×n and C is m×n, all row-major with strides lda, ldb and ldc.
// op(X) is X or its transpose as tX is blas.NoTrans or blas.Trans. When
// beta is zero C is only written (NaNs in it do not propagate); when alpha
// is zero or k is zero A and B are not read. work is scratch for packing
// panels; Dgemm allocates when it is shorter than WorkLen(k) and a panel
// needs packing. The result does not depend on work's contents or on the
// processor (see the package documentation).
//
// Dgemm panics if a slice is too short for its matrix or a stride is
// smaller than its row.
func Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	checkMatrix("C", m, n, c, ldc)
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	// rsA and csA step op(A) by a row and by a column.
	rsA, csA := lda, 1
	if tA == blas.Trans {
		checkMatrix("A", k, m, a, lda)
		rsA, csA = 1, lda
	} else {
		checkMatrix("A", m, k, a, lda)
	}
	if tB == blas.Trans {
		checkMatrix("B", n, k, b, ldb)
	} else {
		checkMatrix("B", k, n, b, ldb)
	}
	if !haveAVX2FMA {
		dgemmGo(tB == blas.Trans, m, n, k, alpha, a, rsA, csA, b, ldb, beta, c, ldc)
		return
	}
	dgemmAsm(tB == blas.Trans, m, n, k, alpha, a, rsA, csA, b, ldb, beta, c, ldc, work)
}

func checkMatrix(name string, rows, cols int, x []float64, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: stride of %s %d below its %d columns", name, ld, cols))
	}
	if rows > 0 && cols > 0 && len(x) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("gemm: %s of %d elements is too short for %d×%d with stride %d", name, len(x), rows, cols, ld))
	}
}

// scale sets C = beta·C, writing zeros when beta is zero.
func scale(m, n int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// combine returns the element of C from its accumulator acc and its old
// value c. The conversion keeps beta·c rounded on its own: Go may fuse
// x·y + z otherwise, and the assembly does not.
func combine(alpha, acc, beta, c float64) float64 {
	t := alpha * acc
	if beta == 0 {
		return t
	}
	return float64(beta*c) + t
}

// dgemmGo is the Go kernel: every element by the order of the package
// documentation, in tiles of 4×4 held in sixteen accumulators, and the
// remaining rows and columns one element at a time.
func dgemmGo(transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	// op(B)[l, j] is b[l·rsB + j·csB].
	rsB, csB := ldb, 1
	if transB {
		rsB, csB = 1, ldb
	}
	i := 0
	for ; i+4 <= m; i += 4 {
		j := 0
		for ; j+4 <= n; j += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float64
			ia, ib := i*rsA, j*csB
			for l := 0; l < k; l++ {
				a0, a1, a2, a3 := a[ia], a[ia+rsA], a[ia+2*rsA], a[ia+3*rsA]
				b0, b1, b2, b3 := b[ib], b[ib+csB], b[ib+2*csB], b[ib+3*csB]
				c00 = math.FMA(a0, b0, c00)
				c01 = math.FMA(a0, b1, c01)
				c02 = math.FMA(a0, b2, c02)
				c03 = math.FMA(a0, b3, c03)
				c10 = math.FMA(a1, b0, c10)
				c11 = math.FMA(a1, b1, c11)
				c12 = math.FMA(a1, b2, c12)
				c13 = math.FMA(a1, b3, c13)
				c20 = math.FMA(a2, b0, c20)
				c21 = math.FMA(a2, b1, c21)
				c22 = math.FMA(a2, b2, c22)
				c23 = math.FMA(a2, b3, c23)
				c30 = math.FMA(a3, b0, c30)
				c31 = math.FMA(a3, b1, c31)
				c32 = math.FMA(a3, b2, c32)
				c33 = math.FMA(a3, b3, c33)
				ia += csA
				ib += rsB
			}
			for r, acc := range [4][4]float64{{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}} {
				ci := c[(i+r)*ldc+j : (i+r)*ldc+j+4]
				for q := range ci {
					ci[q] = combine(alpha, acc[q], beta, ci[q])
				}
			}
		}
		for ; j < n; j++ {
			for r := i; r < i+4; r++ {
				c[r*ldc+j] = combine(alpha, dotGo(k, a[r*rsA:], csA, b[j*csB:], rsB), beta, c[r*ldc+j])
			}
		}
	}
	for ; i < m; i++ {
		for j := 0; j < n; j++ {
			c[i*ldc+j] = combine(alpha, dotGo(k, a[i*rsA:], csA, b[j*csB:], rsB), beta, c[i*ldc+j])
		}
	}
}

// dotGo returns the accumulator Σ_l x[l·incX]·y[l·incY] of one element,
// by fused multiply-add in order of l.
func dotGo(k int, x []float64, incX int, y []float64, incY int) float64 {
	var s float64
	ix, iy := 0, 0
	for l := 0; l < k; l++ {
		s = math.FMA(x[ix], y[iy], s)
		ix += incX
		iy += incY
	}
	return s
}
