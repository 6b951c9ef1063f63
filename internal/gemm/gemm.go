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
// documentation, four columns at a time.
func dgemmGo(transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	// bAt returns the index of op(B)[l, j] and the steps in l and j.
	rsB, csB := ldb, 1
	if transB {
		rsB, csB = 1, ldb
	}
	for i := 0; i < m; i++ {
		ai := a[i*rsA:]
		ci := c[i*ldc : i*ldc+n]
		j := 0
		for ; j+4 <= n; j += 4 {
			var s0, s1, s2, s3 float64
			ib := j * csB
			ia := 0
			for l := 0; l < k; l++ {
				v := ai[ia]
				s0 = math.FMA(v, b[ib], s0)
				s1 = math.FMA(v, b[ib+csB], s1)
				s2 = math.FMA(v, b[ib+2*csB], s2)
				s3 = math.FMA(v, b[ib+3*csB], s3)
				ia += csA
				ib += rsB
			}
			ci[j] = combine(alpha, s0, beta, ci[j])
			ci[j+1] = combine(alpha, s1, beta, ci[j+1])
			ci[j+2] = combine(alpha, s2, beta, ci[j+2])
			ci[j+3] = combine(alpha, s3, beta, ci[j+3])
		}
		for ; j < n; j++ {
			var s float64
			ib := j * csB
			ia := 0
			for l := 0; l < k; l++ {
				s = math.FMA(ai[ia], b[ib], s)
				ia += csA
				ib += rsB
			}
			ci[j] = combine(alpha, s, beta, ci[j])
		}
	}
}

// dgemmTiles runs the product tile by tile with the 4×8 micro-kernel,
// the assembly one if asm is set, else kern4x8Go. Full tiles of op(B) without transposition are
// read in place; others, and the last rows of op(A) when m is not a
// multiple of 4, are packed into work, zero-padded; their tiles are
// written to a buffer first and copied into C.
func dgemmTiles(asm bool, transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	mFull := m &^ (mr - 1)
	need := 0
	if transB || n%nr != 0 {
		need = k * nr
	}
	if m > mFull {
		need = k * (mr + nr)
	}
	if len(work) < need {
		work = make([]float64, need)
	}
	var bPanel, aEdge []float64
	if need > 0 {
		bPanel = work[: k*nr : k*nr]
	}
	if m > mFull {
		// The last m−mFull rows of op(A) as a k×4 panel.
		aEdge = work[k*nr : k*(nr+mr) : k*(nr+mr)]
		for l := 0; l < k; l++ {
			p := aEdge[l*mr : l*mr+mr]
			for i := range p {
				if mFull+i < m {
					p[i] = a[(mFull+i)*rsA+l*csA]
				} else {
					p[i] = 0
				}
			}
		}
	}
	betaNonZero := 0
	if beta != 0 {
		betaNonZero = 1
	}
	var tile [mr * nr]float64
	for j0 := 0; j0 < n; j0 += nr {
		w := min(nr, n-j0)
		var bp []float64
		var bStride int
		if !transB && w == nr {
			bp, bStride = b[j0:], ldb
		} else {
			for l := 0; l < k; l++ {
				p := bPanel[l*nr : l*nr+nr]
				for j := range p {
					switch {
					case j >= w:
						p[j] = 0
					case transB:
						p[j] = b[(j0+j)*ldb+l]
					default:
						p[j] = b[l*ldb+j0+j]
					}
				}
			}
			bp, bStride = bPanel, nr
		}
		for i0 := 0; i0 < mFull; i0 += mr {
			if w == nr {
				kern(asm, k, a[i0*rsA:], rsA, csA, bp, bStride, c[i0*ldc+j0:], ldc, alpha, beta, betaNonZero)
				continue
			}
			kern(asm, k, a[i0*rsA:], rsA, csA, bp, bStride, tile[:], nr, alpha, 0, 0)
			for i := 0; i < mr; i++ {
				ci := c[(i0+i)*ldc+j0 : (i0+i)*ldc+j0+w]
				for j := range ci {
					ci[j] = combine(1, tile[i*nr+j], beta, ci[j])
				}
			}
		}
		if m > mFull {
			kern(asm, k, aEdge, 1, mr, bp, bStride, tile[:], nr, alpha, 0, 0)
			for i := 0; i < m-mFull; i++ {
				ci := c[(mFull+i)*ldc+j0 : (mFull+i)*ldc+j0+w]
				for j := range ci {
					ci[j] = combine(1, tile[i*nr+j], beta, ci[j])
				}
			}
		}
	}
}

// kern runs the assembly micro-kernel if asm is set, else kern4x8Go.
func kern(asm bool, k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, alpha, beta float64, betaNonZero int) {
	if asm {
		kern4x8Asm(k, a, rsA, csA, b, ldb, c, ldc, alpha, beta, betaNonZero)
		return
	}
	kern4x8Go(k, a, rsA, csA, b, ldb, c, ldc, alpha, beta, betaNonZero)
}

// kern4x8Go computes a 4×8 tile: with acc[i][j] = Σ_l a[i·rsA + l·csA]·
// b[l·ldb + j] by fused multiply-add in order of l, it sets
// c[i·ldc + j] = alpha·acc[i][j], plus beta·c[i·ldc + j] when betaNonZero
// is 1. The caller guarantees that every element read or written exists.
// It is the assembly micro-kernel's definition, used by tests.
func kern4x8Go(k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, alpha, beta float64, betaNonZero int) {
	var acc [mr][nr]float64
	for l := 0; l < k; l++ {
		bl := b[l*ldb : l*ldb+nr]
		for i := range acc {
			v := a[i*rsA+l*csA]
			for j, x := range bl {
				acc[i][j] = math.FMA(v, x, acc[i][j])
			}
		}
	}
	if betaNonZero == 0 {
		beta = 0
	}
	for i := range acc {
		ci := c[i*ldc : i*ldc+nr]
		for j := range ci {
			ci[j] = combine(alpha, acc[i][j], beta, ci[j])
		}
	}
}
