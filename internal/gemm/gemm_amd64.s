//go:build !purego

#include "textflag.h"

// func kern4x8AVX2(k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, betaNonZero int)
//
// The 4×8 tile of C lives in Y0..Y7, two registers a row; each step of l
// loads a row of eight elements of B and broadcasts the four elements of
// A's column l.
TEXT ·kern4x8AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rsA+16(FP), R8
	MOVQ csA+24(FP), R9
	MOVQ b+32(FP), DX
	MOVQ ldb+40(FP), R10
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R11
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, R10
	SHLQ $3, R11
	LEAQ (R8)(R8*2), R12 // three rows of A, in bytes
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JZ   store

loop:
	VMOVUPD (DX), Y8
	VMOVUPD 32(DX), Y9
	VBROADCASTSD (SI), Y10
	VBROADCASTSD (SI)(R8*1), Y11
	VFMADD231PD Y8, Y10, Y0
	VFMADD231PD Y9, Y10, Y1
	VBROADCASTSD (SI)(R8*2), Y12
	VFMADD231PD Y8, Y11, Y2
	VFMADD231PD Y9, Y11, Y3
	VBROADCASTSD (SI)(R12*1), Y13
	VFMADD231PD Y8, Y12, Y4
	VFMADD231PD Y9, Y12, Y5
	VFMADD231PD Y8, Y13, Y6
	VFMADD231PD Y9, Y13, Y7
	ADDQ R9, SI
	ADDQ R10, DX
	DECQ CX
	JNZ  loop

store:
	VBROADCASTSD alpha+64(FP), Y14
	VMULPD Y14, Y0, Y0
	VMULPD Y14, Y1, Y1
	VMULPD Y14, Y2, Y2
	VMULPD Y14, Y3, Y3
	VMULPD Y14, Y4, Y4
	VMULPD Y14, Y5, Y5
	VMULPD Y14, Y6, Y6
	VMULPD Y14, Y7, Y7
	LEAQ (R11)(R11*2), R12 // three rows of C, in bytes
	MOVQ betaNonZero+80(FP), AX
	TESTQ AX, AX
	JZ   write

	// C = beta·C + alpha·acc, the product rounded before the sum.
	VBROADCASTSD beta+72(FP), Y15
	VMULPD (DI), Y15, Y8
	VMULPD 32(DI), Y15, Y9
	VADDPD Y8, Y0, Y0
	VADDPD Y9, Y1, Y1
	VMULPD (DI)(R11*1), Y15, Y8
	VMULPD 32(DI)(R11*1), Y15, Y9
	VADDPD Y8, Y2, Y2
	VADDPD Y9, Y3, Y3
	VMULPD (DI)(R11*2), Y15, Y8
	VMULPD 32(DI)(R11*2), Y15, Y9
	VADDPD Y8, Y4, Y4
	VADDPD Y9, Y5, Y5
	VMULPD (DI)(R12*1), Y15, Y8
	VMULPD 32(DI)(R12*1), Y15, Y9
	VADDPD Y8, Y6, Y6
	VADDPD Y9, Y7, Y7

write:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, (DI)(R11*1)
	VMOVUPD Y3, 32(DI)(R11*1)
	VMOVUPD Y4, (DI)(R11*2)
	VMOVUPD Y5, 32(DI)(R11*2)
	VMOVUPD Y6, (DI)(R12*1)
	VMOVUPD Y7, 32(DI)(R12*1)
	VZEROUPPER
	RET

// func kern4x8MaskAVX2(k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, betaNonZero int, mask *int64)
//
// kern4x8AVX2 for a tile narrower than eight columns: mask points at
// eight lanes, all ones for the columns of the tile and zero beyond. Rows
// of B and C are read and C written only in those columns (VMASKMOVPD
// neither reads nor faults on the others), so B and C need no padding and
// the tile is written into C in place.
TEXT ·kern4x8MaskAVX2(SB), NOSPLIT, $0-96
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rsA+16(FP), R8
	MOVQ csA+24(FP), R9
	MOVQ b+32(FP), DX
	MOVQ ldb+40(FP), R10
	MOVQ c+48(FP), DI
	MOVQ ldc+56(FP), R11
	MOVQ mask+88(FP), AX
	VMOVDQU (AX), Y14
	VMOVDQU 32(AX), Y15
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, R10
	SHLQ $3, R11
	LEAQ (R8)(R8*2), R12 // three rows of A, in bytes
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JZ   mstore

mloop:
	VMASKMOVPD (DX), Y14, Y8
	VMASKMOVPD 32(DX), Y15, Y9
	VBROADCASTSD (SI), Y10
	VBROADCASTSD (SI)(R8*1), Y11
	VFMADD231PD Y8, Y10, Y0
	VFMADD231PD Y9, Y10, Y1
	VBROADCASTSD (SI)(R8*2), Y12
	VFMADD231PD Y8, Y11, Y2
	VFMADD231PD Y9, Y11, Y3
	VBROADCASTSD (SI)(R12*1), Y13
	VFMADD231PD Y8, Y12, Y4
	VFMADD231PD Y9, Y12, Y5
	VFMADD231PD Y8, Y13, Y6
	VFMADD231PD Y9, Y13, Y7
	ADDQ R9, SI
	ADDQ R10, DX
	DECQ CX
	JNZ  mloop

mstore:
	VBROADCASTSD alpha+64(FP), Y12
	VMULPD Y12, Y0, Y0
	VMULPD Y12, Y1, Y1
	VMULPD Y12, Y2, Y2
	VMULPD Y12, Y3, Y3
	VMULPD Y12, Y4, Y4
	VMULPD Y12, Y5, Y5
	VMULPD Y12, Y6, Y6
	VMULPD Y12, Y7, Y7
	LEAQ (R11)(R11*2), R12 // three rows of C, in bytes
	MOVQ betaNonZero+80(FP), AX
	TESTQ AX, AX
	JZ   mwrite

	// C = beta·C + alpha·acc, the product rounded before the sum.
	VBROADCASTSD beta+72(FP), Y13
	VMASKMOVPD (DI), Y14, Y8
	VMASKMOVPD 32(DI), Y15, Y9
	VMULPD Y8, Y13, Y8
	VMULPD Y9, Y13, Y9
	VADDPD Y8, Y0, Y0
	VADDPD Y9, Y1, Y1
	VMASKMOVPD (DI)(R11*1), Y14, Y8
	VMASKMOVPD 32(DI)(R11*1), Y15, Y9
	VMULPD Y8, Y13, Y8
	VMULPD Y9, Y13, Y9
	VADDPD Y8, Y2, Y2
	VADDPD Y9, Y3, Y3
	VMASKMOVPD (DI)(R11*2), Y14, Y8
	VMASKMOVPD 32(DI)(R11*2), Y15, Y9
	VMULPD Y8, Y13, Y8
	VMULPD Y9, Y13, Y9
	VADDPD Y8, Y4, Y4
	VADDPD Y9, Y5, Y5
	VMASKMOVPD (DI)(R12*1), Y14, Y8
	VMASKMOVPD 32(DI)(R12*1), Y15, Y9
	VMULPD Y8, Y13, Y8
	VMULPD Y9, Y13, Y9
	VADDPD Y8, Y6, Y6
	VADDPD Y9, Y7, Y7

mwrite:
	VMASKMOVPD Y0, Y14, (DI)
	VMASKMOVPD Y1, Y15, 32(DI)
	VMASKMOVPD Y2, Y14, (DI)(R11*1)
	VMASKMOVPD Y3, Y15, 32(DI)(R11*1)
	VMASKMOVPD Y4, Y14, (DI)(R11*2)
	VMASKMOVPD Y5, Y15, 32(DI)(R11*2)
	VMASKMOVPD Y6, Y14, (DI)(R12*1)
	VMASKMOVPD Y7, Y15, 32(DI)(R12*1)
	VZEROUPPER
	RET
