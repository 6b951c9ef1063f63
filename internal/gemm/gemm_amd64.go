//go:build !purego

package gemm

import "github.com/trjgo/trj/internal/cpufeat"

// kern4x8AVX2 is the micro-kernel of kernFunc in AVX2 and FMA assembly;
// a, b and c point at the first elements.
//
//go:noescape
func kern4x8AVX2(k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, betaNonZero int)

// haveAVX2FMA reports whether the micro-kernel of the assembly file can run.
var haveAVX2FMA = cpufeat.AVX2FMA()

func kern4x8Asm(k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, alpha, beta float64, betaNonZero int) {
	kern4x8AVX2(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta, betaNonZero)
}

func dgemmAsm(transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	dgemmTiles(true, transB, m, n, k, alpha, a, rsA, csA, b, ldb, beta, c, ldc, work)
}
