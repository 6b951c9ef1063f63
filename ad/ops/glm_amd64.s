//go:build !purego

#include "textflag.h"

// Row kernels of the fused GLM ops, AVX2 and FMA. The row products take
// rows in groups of four (n is the number of groups) so that every load of
// β or of the gradient serves four rows; the caller handles the remaining
// rows. The Bernoulli-logit and Poisson-log kernels, at the end, do the
// per-row work of a block four rows per vector.

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

// Constants of bernoulliLogit4AVX2, four copies each so that they can be
// memory operands: 1, ½, the sign bit, −700, and fastExp's 64/ln2, shift,
// ln2/64 in two parts, 1/6, 1/24, 1/120, the mask of the table index and
// the exponent bias.
DATA blOne<>+0(SB)/8, $0x3ff0000000000000
DATA blOne<>+8(SB)/8, $0x3ff0000000000000
DATA blOne<>+16(SB)/8, $0x3ff0000000000000
DATA blOne<>+24(SB)/8, $0x3ff0000000000000
GLOBL blOne<>(SB), RODATA|NOPTR, $32

DATA blHalf<>+0(SB)/8, $0x3fe0000000000000
DATA blHalf<>+8(SB)/8, $0x3fe0000000000000
DATA blHalf<>+16(SB)/8, $0x3fe0000000000000
DATA blHalf<>+24(SB)/8, $0x3fe0000000000000
GLOBL blHalf<>(SB), RODATA|NOPTR, $32

DATA blSign<>+0(SB)/8, $0x8000000000000000
DATA blSign<>+8(SB)/8, $0x8000000000000000
DATA blSign<>+16(SB)/8, $0x8000000000000000
DATA blSign<>+24(SB)/8, $0x8000000000000000
GLOBL blSign<>(SB), RODATA|NOPTR, $32

DATA blMin<>+0(SB)/8, $0xc085e00000000000
DATA blMin<>+8(SB)/8, $0xc085e00000000000
DATA blMin<>+16(SB)/8, $0xc085e00000000000
DATA blMin<>+24(SB)/8, $0xc085e00000000000
GLOBL blMin<>(SB), RODATA|NOPTR, $32

DATA blInvL<>+0(SB)/8, $0x40571547652b82fe
DATA blInvL<>+8(SB)/8, $0x40571547652b82fe
DATA blInvL<>+16(SB)/8, $0x40571547652b82fe
DATA blInvL<>+24(SB)/8, $0x40571547652b82fe
GLOBL blInvL<>(SB), RODATA|NOPTR, $32

DATA blShift<>+0(SB)/8, $0x4338000000000000
DATA blShift<>+8(SB)/8, $0x4338000000000000
DATA blShift<>+16(SB)/8, $0x4338000000000000
DATA blShift<>+24(SB)/8, $0x4338000000000000
GLOBL blShift<>(SB), RODATA|NOPTR, $32

DATA blL1<>+0(SB)/8, $0x3f862e42fefa0000
DATA blL1<>+8(SB)/8, $0x3f862e42fefa0000
DATA blL1<>+16(SB)/8, $0x3f862e42fefa0000
DATA blL1<>+24(SB)/8, $0x3f862e42fefa0000
GLOBL blL1<>(SB), RODATA|NOPTR, $32

DATA blL2<>+0(SB)/8, $0x3d1cf79abc9e3b3a
DATA blL2<>+8(SB)/8, $0x3d1cf79abc9e3b3a
DATA blL2<>+16(SB)/8, $0x3d1cf79abc9e3b3a
DATA blL2<>+24(SB)/8, $0x3d1cf79abc9e3b3a
GLOBL blL2<>(SB), RODATA|NOPTR, $32

DATA blC3<>+0(SB)/8, $0x3fc5555555555555
DATA blC3<>+8(SB)/8, $0x3fc5555555555555
DATA blC3<>+16(SB)/8, $0x3fc5555555555555
DATA blC3<>+24(SB)/8, $0x3fc5555555555555
GLOBL blC3<>(SB), RODATA|NOPTR, $32

DATA blC4<>+0(SB)/8, $0x3fa5555555555555
DATA blC4<>+8(SB)/8, $0x3fa5555555555555
DATA blC4<>+16(SB)/8, $0x3fa5555555555555
DATA blC4<>+24(SB)/8, $0x3fa5555555555555
GLOBL blC4<>(SB), RODATA|NOPTR, $32

DATA blC5<>+0(SB)/8, $0x3f81111111111111
DATA blC5<>+8(SB)/8, $0x3f81111111111111
DATA blC5<>+16(SB)/8, $0x3f81111111111111
DATA blC5<>+24(SB)/8, $0x3f81111111111111
GLOBL blC5<>(SB), RODATA|NOPTR, $32

DATA blMask63<>+0(SB)/8, $0x000000000000003f
DATA blMask63<>+8(SB)/8, $0x000000000000003f
DATA blMask63<>+16(SB)/8, $0x000000000000003f
DATA blMask63<>+24(SB)/8, $0x000000000000003f
GLOBL blMask63<>(SB), RODATA|NOPTR, $32

DATA blBias<>+0(SB)/8, $0x00000000000003ff
DATA blBias<>+8(SB)/8, $0x00000000000003ff
DATA blBias<>+16(SB)/8, $0x00000000000003ff
DATA blBias<>+24(SB)/8, $0x00000000000003ff
GLOBL blBias<>(SB), RODATA|NOPTR, $32

// 700, the upper end of poissonLog4AVX2's range.
DATA blMax<>+0(SB)/8, $0x4085e00000000000
DATA blMax<>+8(SB)/8, $0x4085e00000000000
DATA blMax<>+16(SB)/8, $0x4085e00000000000
DATA blMax<>+24(SB)/8, $0x4085e00000000000
GLOBL blMax<>(SB), RODATA|NOPTR, $32

// func bernoulliLogit4AVX2(eta *float64, y *float64, n int, s, prod float64) (sum, product float64, ok bool)
//
// The rows 0…4n−1 of bernoulliLogitRowsGo, four per vector, bit for bit:
// the same operations in the same order, each rounded once (the one FMA
// adds an exact product), and the sum and the product carried through the
// rows in order. ok is false if some y_i is not 0 or 1 (then η is partly
// overwritten). NaN passes through: the clamp returns it and the
// polynomial keeps it.
TEXT ·bernoulliLogit4AVX2(SB), NOSPLIT, $0-57
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VMOVSD s+24(FP), X14
	VMOVSD prod+32(FP), X13
	LEAQ ·expTable(SB), R8
	VMOVUPD blOne<>(SB), Y8
	VMOVUPD blHalf<>(SB), Y9
	VMOVUPD blSign<>(SB), Y10
	VMOVUPD blMin<>(SB), Y11
	VXORPD Y12, Y12, Y12 // lanes with an invalid y
	TESTQ CX, CX
	JZ   bldone

blloop:
	VMOVUPD (SI), Y0 // η
	VMOVUPD (DI), Y1 // y
	// y·(1 − y) ≠ 0 (or NaN) marks an invalid outcome.
	VSUBPD Y1, Y8, Y2
	VMULPD Y1, Y2, Y2
	VXORPD Y3, Y3, Y3
	VCMPPD $4, Y3, Y2, Y2 // NEQ_UQ
	VORPD Y2, Y12, Y12
	// x = −min(|η|, 700); MAXPD returns its second source, −|η|, if NaN.
	VORPD Y10, Y0, Y2
	VSUBPD Y2, Y0, Y7 // w = η + |η|
	VMAXPD Y2, Y11, Y2
	// The terms y·η − ½w (½w is exact, so the FMA rounds once, as the
	// subtraction does), added to s row by row.
	VMULPD Y1, Y0, Y4
	VFNMADD231PD Y9, Y7, Y4
	VADDSD X4, X14, X14
	VUNPCKHPD X4, X4, X5
	VADDSD X5, X14, X14
	VEXTRACTF128 $1, Y4, X4
	VADDSD X4, X14, X14
	VUNPCKHPD X4, X4, X5
	VADDSD X5, X14, X14
	// fastExp(x): k = round(64x/ln2) in the low bits of Y3 and as a float
	// in Y4, r = (x − k·L1) − k·L2, 2^(j/64) from the table (j = k mod 64;
	// four scalar loads: as fast as VGATHERQPD on the AMD EPYC measured, and
	// not slowed as gathers are by Intel's Downfall mitigation) and 2^(k>>6) in the
	// exponent bits.
	VMULPD blInvL<>(SB), Y2, Y3
	VADDPD blShift<>(SB), Y3, Y3
	VSUBPD blShift<>(SB), Y3, Y4
	VMULPD blL1<>(SB), Y4, Y5
	VSUBPD Y5, Y2, Y2
	VMULPD blL2<>(SB), Y4, Y5
	VSUBPD Y5, Y2, Y2 // r
	VPAND blMask63<>(SB), Y3, Y6
	VMOVQ X6, AX
	VPEXTRQ $1, X6, BX
	VEXTRACTI128 $1, Y6, X7
	VMOVQ X7, R10
	VPEXTRQ $1, X7, R11
	VMOVSD (R8)(AX*8), X15
	VMOVHPD (R8)(BX*8), X15, X15
	VMOVSD (R8)(R10*8), X7
	VMOVHPD (R8)(R11*8), X7, X7
	VINSERTF128 $1, X7, Y15, Y15
	VPSRLQ $6, Y3, Y3
	VPADDQ blBias<>(SB), Y3, Y3
	VPSLLQ $52, Y3, Y3
	// p = ((1 + r) + r²·(½ + r/6)) + r⁴·(1/24 + r/120)
	VMULPD Y2, Y2, Y4
	VMULPD blC3<>(SB), Y2, Y5
	VADDPD Y9, Y5, Y5
	VMULPD Y4, Y5, Y5
	VADDPD Y8, Y2, Y6
	VADDPD Y5, Y6, Y6
	VMULPD blC5<>(SB), Y2, Y5
	VADDPD blC4<>(SB), Y5, Y5
	VMULPD Y4, Y4, Y4
	VMULPD Y4, Y5, Y5
	VADDPD Y5, Y6, Y6
	VMULPD Y6, Y15, Y6
	VMULPD Y3, Y6, Y5 // t
	VADDPD Y8, Y5, Y6 // u = 1 + t
	// prod times u, row by row.
	VMULSD X6, X13, X13
	VUNPCKHPD X6, X6, X4
	VMULSD X4, X13, X13
	VEXTRACTF128 $1, Y6, X4
	VMULSD X4, X13, X13
	VUNPCKHPD X4, X4, X4
	VMULSD X4, X13, X13
	// y − (½ + copysign(½, η)·(1 − t)/u); the products by ±½ are exact,
	// so the order of product and quotient and the FMA change no bit.
	VSUBPD Y5, Y8, Y7
	VDIVPD Y6, Y7, Y7
	VANDPD Y10, Y0, Y4
	VORPD Y9, Y4, Y4
	VFMADD213PD Y9, Y4, Y7
	VSUBPD Y7, Y1, Y7
	VMOVUPD Y7, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  blloop

bldone:
	VMOVSD X14, sum+40(FP)
	VMOVSD X13, product+48(FP)
	VMOVMSKPD Y12, AX
	TESTQ AX, AX
	SETEQ ok+56(FP)
	VZEROUPPER
	RET

// func poissonLog4AVX2(eta *float64, y *float64, n int, s float64) (sum float64, done int)
//
// The rows 0…4n−1 of poissonLogRowsGo, four per vector, bit for bit (the
// same operations as bernoulliLogit4AVX2's exp), while every η of a group
// is in (−700, 700); done is the number of groups done.
TEXT ·poissonLog4AVX2(SB), NOSPLIT, $0-48
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VMOVSD s+24(FP), X14
	LEAQ ·expTable(SB), R8
	XORQ DX, DX
	VMOVUPD blOne<>(SB), Y8
	VMOVUPD blHalf<>(SB), Y9
	VMOVUPD blMin<>(SB), Y11
	VMOVUPD blMax<>(SB), Y10

plloop:
	CMPQ DX, CX
	JGE  pldone
	VMOVUPD (SI), Y0 // η
	// −700 < η < 700 in every lane (false for NaN), else stop.
	VCMPPD $0x1e, Y11, Y0, Y2 // GT_OQ
	VCMPPD $0x11, Y10, Y0, Y3 // LT_OQ
	VANDPD Y3, Y2, Y2
	VMOVMSKPD Y2, AX
	CMPQ AX, $15
	JNE  pldone
	VMOVUPD (DI), Y1 // y
	// fastExp(η) as in bernoulliLogit4AVX2.
	VMULPD blInvL<>(SB), Y0, Y3
	VADDPD blShift<>(SB), Y3, Y3
	VSUBPD blShift<>(SB), Y3, Y4
	VMULPD blL1<>(SB), Y4, Y5
	VSUBPD Y5, Y0, Y2
	VMULPD blL2<>(SB), Y4, Y5
	VSUBPD Y5, Y2, Y2 // r
	VPAND blMask63<>(SB), Y3, Y6
	VMOVQ X6, AX
	VPEXTRQ $1, X6, BX
	VEXTRACTI128 $1, Y6, X7
	VMOVQ X7, R10
	VPEXTRQ $1, X7, R11
	VMOVSD (R8)(AX*8), X15
	VMOVHPD (R8)(BX*8), X15, X15
	VMOVSD (R8)(R10*8), X7
	VMOVHPD (R8)(R11*8), X7, X7
	VINSERTF128 $1, X7, Y15, Y15
	VPSRLQ $6, Y3, Y3
	VPADDQ blBias<>(SB), Y3, Y3
	VPSLLQ $52, Y3, Y3
	VMULPD Y2, Y2, Y4
	VMULPD blC3<>(SB), Y2, Y5
	VADDPD Y9, Y5, Y5
	VMULPD Y4, Y5, Y5
	VADDPD Y8, Y2, Y6
	VADDPD Y5, Y6, Y6
	VMULPD blC5<>(SB), Y2, Y5
	VADDPD blC4<>(SB), Y5, Y5
	VMULPD Y4, Y4, Y4
	VMULPD Y4, Y5, Y5
	VADDPD Y5, Y6, Y6
	VMULPD Y6, Y15, Y6
	VMULPD Y3, Y6, Y5 // μ
	// s += y·η − μ row by row; η becomes y − μ.
	VMULPD Y1, Y0, Y4
	VSUBPD Y5, Y4, Y4
	VADDSD X4, X14, X14
	VUNPCKHPD X4, X4, X6
	VADDSD X6, X14, X14
	VEXTRACTF128 $1, Y4, X4
	VADDSD X4, X14, X14
	VUNPCKHPD X4, X4, X6
	VADDSD X6, X14, X14
	VSUBPD Y5, Y1, Y1
	VMOVUPD Y1, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	INCQ DX
	JMP  plloop

pldone:
	VMOVSD X14, sum+32(FP)
	MOVQ DX, done+40(FP)
	VZEROUPPER
	RET
