//go:build !purego

#include "textflag.h"

// Row kernels of the fused GLM ops, AVX2 and FMA. Both take rows in groups
// of four (n is the number of groups) so that every load of β or of the
// gradient serves four rows; the caller handles the remaining rows.

// Masks for the last 1..3 columns of a row: entry k (32 bytes at 32k)
// enables the first k lanes.
DATA glmTailMask<>+0(SB)/8, $0
DATA glmTailMask<>+8(SB)/8, $0
DATA glmTailMask<>+16(SB)/8, $0
DATA glmTailMask<>+24(SB)/8, $0
DATA glmTailMask<>+32(SB)/8, $-1
DATA glmTailMask<>+40(SB)/8, $0
DATA glmTailMask<>+48(SB)/8, $0
DATA glmTailMask<>+56(SB)/8, $0
DATA glmTailMask<>+64(SB)/8, $-1
DATA glmTailMask<>+72(SB)/8, $-1
DATA glmTailMask<>+80(SB)/8, $0
DATA glmTailMask<>+88(SB)/8, $0
DATA glmTailMask<>+96(SB)/8, $-1
DATA glmTailMask<>+104(SB)/8, $-1
DATA glmTailMask<>+112(SB)/8, $-1
DATA glmTailMask<>+120(SB)/8, $0
GLOBL glmTailMask<>(SB), RODATA|NOPTR, $128

// func dotRows4AVX2(x *float64, d int, beta *float64, out *float64, n int)
//
// out[i] = Σ_j x[i*d+j]·beta[j] for i < 4n.
TEXT ·dotRows4AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ d+8(FP), BX
	MOVQ beta+16(FP), DX
	MOVQ out+24(FP), DI
	MOVQ n+32(FP), CX
	MOVQ BX, R8
	SHLQ $3, R8          // row stride in bytes
	MOVQ BX, R9
	ANDQ $-4, R9         // columns handled four at a time
	MOVQ BX, R10
	ANDQ $3, R10         // remaining columns
	SHLQ $5, R10
	LEAQ glmTailMask<>(SB), R11
	VMOVUPD (R11)(R10*1), Y14
	MOVQ BX, R11
	SUBQ $8, R11         // last start of an eight-column step

group:
	TESTQ CX, CX
	JZ   done
	LEAQ (SI)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R10
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ AX, AX

loop8:
	CMPQ AX, R11
	JGT  loop4
	VMOVUPD (DX)(AX*8), Y8
	VMOVUPD 32(DX)(AX*8), Y9
	VFMADD231PD (SI)(AX*8), Y8, Y0
	VFMADD231PD (R12)(AX*8), Y8, Y1
	VFMADD231PD (R13)(AX*8), Y8, Y2
	VFMADD231PD (R10)(AX*8), Y8, Y3
	VFMADD231PD 32(SI)(AX*8), Y9, Y4
	VFMADD231PD 32(R12)(AX*8), Y9, Y5
	VFMADD231PD 32(R13)(AX*8), Y9, Y6
	VFMADD231PD 32(R10)(AX*8), Y9, Y7
	ADDQ $8, AX
	JMP  loop8

loop4:
	CMPQ AX, R9
	JGE  tail
	VMOVUPD (DX)(AX*8), Y8
	VFMADD231PD (SI)(AX*8), Y8, Y0
	VFMADD231PD (R12)(AX*8), Y8, Y1
	VFMADD231PD (R13)(AX*8), Y8, Y2
	VFMADD231PD (R10)(AX*8), Y8, Y3
	ADDQ $4, AX

tail:
	CMPQ AX, BX
	JGE  reduce
	VMASKMOVPD (DX)(AX*8), Y14, Y8
	VMASKMOVPD (SI)(AX*8), Y14, Y9
	VFMADD231PD Y9, Y8, Y4
	VMASKMOVPD (R12)(AX*8), Y14, Y9
	VFMADD231PD Y9, Y8, Y5
	VMASKMOVPD (R13)(AX*8), Y14, Y9
	VFMADD231PD Y9, Y8, Y6
	VMASKMOVPD (R10)(AX*8), Y14, Y9
	VFMADD231PD Y9, Y8, Y7

reduce:
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	VHADDPD Y1, Y0, Y0   // a01 b01 a23 b23
	VHADDPD Y3, Y2, Y2   // c01 d01 c23 d23
	VPERM2F128 $0x21, Y2, Y0, Y1  // a23 b23 c01 d01
	VBLENDPD $12, Y2, Y0, Y0      // a01 b01 c23 d23
	VADDPD Y1, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	LEAQ (R10)(R8*1), SI
	DECQ CX
	JMP  group

done:
	VZEROUPPER
	RET

// func axpyRows4AVX2(x *float64, d int, r *float64, grad *float64, n int)
//
// grad[j] += Σ_i r[i]·x[i*d+j] for i < 4n.
TEXT ·axpyRows4AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ d+8(FP), BX
	MOVQ r+16(FP), DX
	MOVQ grad+24(FP), DI
	MOVQ n+32(FP), CX
	MOVQ BX, R8
	SHLQ $3, R8
	MOVQ BX, R9
	ANDQ $-4, R9

agroup:
	TESTQ CX, CX
	JZ   adone
	LEAQ (SI)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), R10
	VBROADCASTSD (DX), Y4
	VBROADCASTSD 8(DX), Y5
	VBROADCASTSD 16(DX), Y6
	VBROADCASTSD 24(DX), Y7
	XORQ AX, AX

aloop4:
	CMPQ AX, R9
	JGE  atail
	VMOVUPD (DI)(AX*8), Y0
	VMULPD (R13)(AX*8), Y6, Y1
	VFMADD231PD (SI)(AX*8), Y4, Y0
	VFMADD231PD (R10)(AX*8), Y7, Y1
	VFMADD231PD (R12)(AX*8), Y5, Y0
	VADDPD Y1, Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ $4, AX
	JMP  aloop4

atail:
	CMPQ AX, BX
	JGE  anext
	VMOVSD (DI)(AX*8), X0
	VMULSD (R13)(AX*8), X6, X1
	VFMADD231SD (SI)(AX*8), X4, X0
	VFMADD231SD (R10)(AX*8), X7, X1
	VFMADD231SD (R12)(AX*8), X5, X0
	VADDSD X1, X0, X0
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	JMP  atail

anext:
	ADDQ $32, DX
	LEAQ (R10)(R8*1), SI
	DECQ CX
	JMP  agroup

adone:
	VZEROUPPER
	RET
