// Package gemm computes small and medium double-precision matrix products
// C = alpha·op(A)·op(B) + beta·C on the calling goroutine, for the kernels
// of package ad and ad/ops.
//
// gonum's Dgemm is written for generality: its serial path runs as
// vector updates without fused multiply-add, and large products spread over
// goroutines, which allocates. The products of a flow's training step are
// small (a batch of 64 rows, inner and outer sizes from 2 to a few
// hundred), so gemm multiplies them with a register-blocked micro-kernel of
// 4×8 elements in AVX2 and FMA assembly where the processor has them, and
// elsewhere with one Go kernel in tiles of 4×4.
//
// Every element of the product is computed the same way whatever the
// path, the processor or the shape: an accumulator starts at zero and takes
// the terms a[i,l]·b[l,j] for l = 0, 1, …, k−1 by fused multiply-add;
// the element is then alpha·acc when beta is zero and beta·c + alpha·acc
// otherwise, each product rounded. So the assembly and the Go kernels give
// the same bits, and results do not depend on the processor. The price is
// paid where the assembly does not run: the Go kernel's fused multiply-adds
// are single instructions on arm64, but on amd64 without AVX2 and FMA (or
// built with the purego tag) math.FMA checks the processor at every call
// and the kernel runs at 20 to 40 % of the speed of gonum's serial Dgemm.
package gemm
