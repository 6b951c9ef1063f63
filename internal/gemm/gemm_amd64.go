//go:build !purego

package gemm

import "github.com/trjgo/trj/internal/cpufeat"

// kern4x8AVX2 is the micro-kernel in AVX2 and FMA assembly: with
// acc[i][j] = Σ_l a[i·rsA + l·csA]·b[l·ldb + j] by fused multiply-add in
// order of l, it sets c[i·ldc + j] = alpha·acc[i][j], plus
// beta·c[i·ldc + j] when betaNonZero is 1; a, b and c point at the first
// elements, and the caller guarantees that every element read or written
// exists.
//
//go:noescape
func kern4x8AVX2(k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, betaNonZero int)

// kern4x8MaskAVX2 is kern4x8AVX2 for a tile of fewer than eight columns:
// mask points at eight lanes, −1 for the tile's columns and 0 beyond, and
// rows of b and c are read and c written only in those columns.
//
//go:noescape
func kern4x8MaskAVX2(k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, betaNonZero int, mask *int64)

// laneMasks[w] selects the first w of the eight lanes of a tile's row.
var laneMasks = func() (m [nr + 1][nr]int64) {
	for w := range m {
		for i := 0; i < w; i++ {
			m[w][i] = -1
		}
	}
	return m
}()

func kern4x8MaskAsm(k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, alpha, beta float64, betaNonZero int, w int) {
	kern4x8MaskAVX2(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta, betaNonZero, &laneMasks[w][0])
}

// haveAVX2FMA reports whether the micro-kernel of the assembly file can run.
var haveAVX2FMA = cpufeat.AVX2FMA()

func kern4x8Asm(k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, alpha, beta float64, betaNonZero int) {
	kern4x8AVX2(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta, betaNonZero)
}

// dgemmAsm runs the product tile by tile with the 4×8 assembly
// micro-kernel. Full tiles of op(B) without transposition are read in
// place; so are the last columns of a wider op(B) and the last rows of an
// op(A) of at least 4 rows, by a tile overlapping the previous one whose
// new part alone is kept. An op(B) without transposition narrower than a
// tile is read in place too, and its tiles written into C in place, by the
// masked kernel (with beta zero, the rows of C that an overlapping tile
// computes again are rewritten with the same bits). Other panels are
// packed into work,
// zero-padded; the other tiles of the edges are written to a buffer first
// and copied into C.
func dgemmAsm(transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	mFull := m &^ (mr - 1)
	packRows := m > mFull && m < mr
	packCols := transB
	need := 0
	if packCols {
		need = k * nr
	}
	if packRows {
		need = k * (mr + nr)
	}
	if len(work) < need {
		work = make([]float64, need)
	}
	var bPanel, aEdge []float64
	if need > 0 {
		bPanel = work[: k*nr : k*nr]
	}
	if packRows {
		// The m rows of op(A) as a k×4 panel.
		aEdge = work[k*nr : k*(nr+mr) : k*(nr+mr)]
		packA(aEdge, a, rsA, csA, m, k)
	}
	betaNonZero := 0
	if beta != 0 {
		betaNonZero = 1
	}
	var tile [mr * nr]float64
	// keep copies rows [i0, i0+rows) and columns [j0, j0+w) of C from the
	// tile, whose row 0 is row t0 and column 0 column jt.
	keep := func(i0, rows, t0, j0, w, jt int) {
		for i := 0; i < rows; i++ {
			ci := c[(i0+i)*ldc+j0 : (i0+i)*ldc+j0+w]
			ti := tile[(i0-t0+i)*nr+j0-jt:]
			if beta == 0 {
				// combine(1, t, 0, c) is t.
				copy(ci, ti)
				continue
			}
			for j := range ci {
				ci[j] = combine(1, ti[j], beta, ci[j])
			}
		}
	}
	for j0 := 0; j0 < n; j0 += nr {
		w := min(nr, n-j0)
		var bp []float64
		var bStride int
		jt := j0 // op(B)'s column in the tile's first column
		// A masked store costs about what a copy from the tile does
		// (AMD Zen 4), so the mask pays only where it saves packing.
		masked := w < nr && !transB
		switch {
		case !transB && w == nr:
			bp, bStride = b[j0:], ldb
		case !transB && n >= nr:
			jt = n - nr
			bp, bStride = b[jt:], ldb
			masked = false
		case !transB:
			bp, bStride = b[j0:], ldb
		default:
			packB(bPanel, b, ldb, transB, j0, w, k)
			bp, bStride = bPanel, nr
		}
		for i0 := 0; i0 < mFull; i0 += mr {
			switch {
			case w == nr:
				kern4x8Asm(k, a[i0*rsA:], rsA, csA, bp, bStride, c[i0*ldc+j0:], ldc, alpha, beta, betaNonZero)
			case masked:
				kern4x8MaskAsm(k, a[i0*rsA:], rsA, csA, bp, bStride, c[i0*ldc+j0:], ldc, alpha, beta, betaNonZero, w)
			default:
				kern4x8Asm(k, a[i0*rsA:], rsA, csA, bp, bStride, tile[:], nr, alpha, 0, 0)
				keep(i0, mr, i0, j0, w, jt)
			}
		}
		switch {
		case packRows && masked:
			kern4x8MaskAsm(k, aEdge, 1, mr, bp, bStride, tile[:], nr, alpha, 0, 0, w)
			keep(0, m, 0, j0, w, jt)
		case packRows:
			kern4x8Asm(k, aEdge, 1, mr, bp, bStride, tile[:], nr, alpha, 0, 0)
			keep(0, m, 0, j0, w, jt)
		case m > mFull && masked && beta == 0:
			kern4x8MaskAsm(k, a[(m-mr)*rsA:], rsA, csA, bp, bStride, c[(m-mr)*ldc+j0:], ldc, alpha, 0, 0, w)
		case m > mFull && masked:
			kern4x8MaskAsm(k, a[(m-mr)*rsA:], rsA, csA, bp, bStride, tile[:], nr, alpha, 0, 0, w)
			keep(mFull, m-mFull, m-mr, j0, w, jt)
		case m > mFull:
			kern4x8Asm(k, a[(m-mr)*rsA:], rsA, csA, bp, bStride, tile[:], nr, alpha, 0, 0)
			keep(mFull, m-mFull, m-mr, j0, w, jt)
		}
	}
}

// packA writes the first rows rows (fewer than mr) of op(A) into the k×mr
// panel p, column-major by row of op(A), zero beyond them.
func packA(p, a []float64, rsA, csA, rows, k int) {
	p = p[:k*mr]
	if rows < mr {
		clear(p)
	}
	for i := 0; i < rows; i++ {
		ai := a[i*rsA:]
		for l := 0; l < k; l++ {
			p[l*mr+i] = ai[l*csA]
		}
	}
}

// packB writes columns j0 to j0+w (w ≤ nr) of op(B) into the k×nr panel
// p, zero beyond them.
func packB(p, b []float64, ldb int, transB bool, j0, w, k int) {
	p = p[:k*nr]
	if w < nr {
		clear(p)
	}
	if transB {
		// Row j of B is column j of op(B): read it in order.
		for j := 0; j < w; j++ {
			bj := b[(j0+j)*ldb : (j0+j)*ldb+k]
			for l, v := range bj {
				p[l*nr+j] = v
			}
		}
		return
	}
	for l := 0; l < k; l++ {
		copy(p[l*nr:l*nr+w], b[l*ldb+j0:l*ldb+j0+w])
	}
}
