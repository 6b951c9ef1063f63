//go:build !amd64 || purego

package gemm

// haveAVX2FMA is false where the assembly micro-kernel does not exist.
const haveAVX2FMA = false

func dgemmAsm(transB bool, m, n, k int, alpha float64, a []float64, rsA, csA int, b []float64, ldb int, beta float64, c []float64, ldc int, work []float64) {
	panic("gemm: no assembly kernel")
}
