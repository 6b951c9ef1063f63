//go:build !purego

package gemm

// kern4x8AVX2 is the micro-kernel of kernFunc in AVX2 and FMA assembly;
// a, b and c point at the first elements.
//
//go:noescape
func kern4x8AVX2(k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, betaNonZero int)

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// haveAVX2FMA reports whether the processor and the operating system
// support the AVX2 and FMA instructions of the micro-kernel. It is set
// once, at package initialisation, and never changes.
var haveAVX2FMA = detectAVX2FMA()

func detectAVX2FMA() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	// The operating system must save the XMM and YMM registers.
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}

func kern4x8Asm(k int, a []float64, rsA, csA int, b []float64, ldb int, c []float64, ldc int, alpha, beta float64, betaNonZero int) {
	kern4x8AVX2(k, &a[0], rsA, csA, &b[0], ldb, &c[0], ldc, alpha, beta, betaNonZero)
}

func dgemmAsm(transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	dgemmTiles(true, transB, m, n, k, alpha, a, rsA, csA, b, ldb, beta, c, ldc, work)
}
