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

// Constants of bernoulliLogit4AVX2, four copies each so that they can be
// memory operands: 1, ½, the sign bit, −700, 1/ln2, the shift 1.5·2^52
// that rounds to an integer, ln2 split in a high and a low part, the
// exponent bias, and 1/k! for k = 2…13.
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

DATA blInvLn2<>+0(SB)/8, $0x3ff71547652b82fe
DATA blInvLn2<>+8(SB)/8, $0x3ff71547652b82fe
DATA blInvLn2<>+16(SB)/8, $0x3ff71547652b82fe
DATA blInvLn2<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL blInvLn2<>(SB), RODATA|NOPTR, $32

DATA blShift<>+0(SB)/8, $0x4338000000000000
DATA blShift<>+8(SB)/8, $0x4338000000000000
DATA blShift<>+16(SB)/8, $0x4338000000000000
DATA blShift<>+24(SB)/8, $0x4338000000000000
GLOBL blShift<>(SB), RODATA|NOPTR, $32

DATA blLn2Hi<>+0(SB)/8, $0x3fe62e42fefa39ef
DATA blLn2Hi<>+8(SB)/8, $0x3fe62e42fefa39ef
DATA blLn2Hi<>+16(SB)/8, $0x3fe62e42fefa39ef
DATA blLn2Hi<>+24(SB)/8, $0x3fe62e42fefa39ef
GLOBL blLn2Hi<>(SB), RODATA|NOPTR, $32

DATA blLn2Lo<>+0(SB)/8, $0x3c7abc9e3b39803f
DATA blLn2Lo<>+8(SB)/8, $0x3c7abc9e3b39803f
DATA blLn2Lo<>+16(SB)/8, $0x3c7abc9e3b39803f
DATA blLn2Lo<>+24(SB)/8, $0x3c7abc9e3b39803f
GLOBL blLn2Lo<>(SB), RODATA|NOPTR, $32

DATA blBias<>+0(SB)/8, $0x00000000000003ff
DATA blBias<>+8(SB)/8, $0x00000000000003ff
DATA blBias<>+16(SB)/8, $0x00000000000003ff
DATA blBias<>+24(SB)/8, $0x00000000000003ff
GLOBL blBias<>(SB), RODATA|NOPTR, $32

DATA blC2<>+0(SB)/8, $0x3fe0000000000000
DATA blC2<>+8(SB)/8, $0x3fe0000000000000
DATA blC2<>+16(SB)/8, $0x3fe0000000000000
DATA blC2<>+24(SB)/8, $0x3fe0000000000000
GLOBL blC2<>(SB), RODATA|NOPTR, $32

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

DATA blC6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA blC6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA blC6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA blC6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL blC6<>(SB), RODATA|NOPTR, $32

DATA blC7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA blC7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA blC7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA blC7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL blC7<>(SB), RODATA|NOPTR, $32

DATA blC8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA blC8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA blC8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA blC8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL blC8<>(SB), RODATA|NOPTR, $32

DATA blC9<>+0(SB)/8, $0x3ec71de3a556c734
DATA blC9<>+8(SB)/8, $0x3ec71de3a556c734
DATA blC9<>+16(SB)/8, $0x3ec71de3a556c734
DATA blC9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL blC9<>(SB), RODATA|NOPTR, $32

DATA blC10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA blC10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA blC10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA blC10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL blC10<>(SB), RODATA|NOPTR, $32

DATA blC11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA blC11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA blC11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA blC11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL blC11<>(SB), RODATA|NOPTR, $32

DATA blC12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA blC12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA blC12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA blC12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL blC12<>(SB), RODATA|NOPTR, $32

DATA blC13<>+0(SB)/8, $0x3de6124613a86d09
DATA blC13<>+8(SB)/8, $0x3de6124613a86d09
DATA blC13<>+16(SB)/8, $0x3de6124613a86d09
DATA blC13<>+24(SB)/8, $0x3de6124613a86d09
GLOBL blC13<>(SB), RODATA|NOPTR, $32

// func bernoulliLogit4AVX2(eta *float64, y *float64, n int) (s, prod float64, ok bool)
//
// The rows 0…4n−1 of bernoulliLogitBlockGo, four per vector: with
// t = e^−|η| (η clamped to ±700 as there), it replaces η_i by
// y_i − σ(η_i) = y_i − (½ + copysign(½, η_i)·(1 − t)/(1 + t)) and returns
// the sum of y_i·η_i − max(η_i, 0) and the product of 1 + t over the rows,
// each summed per lane and the lanes combined as (0+2)+(1+3). ok is false
// if some y_i is not 0 or 1 (then η is partly overwritten). NaN passes
// through: the clamp returns it and the polynomial keeps it.
//
// e^x for x ∈ [−700, 0] is 2^k·e^r with k = round(x/ln2),
// r = x − k·ln2 (|r| ≤ ln2/2, two FMAs with ln2 split) and e^r from its
// Taylor polynomial of degree 13 (truncation below 5e-18 relative);
// 2^k is built in the exponent bits, normal since k ≥ −1010.
TEXT ·bernoulliLogit4AVX2(SB), NOSPLIT, $0-41
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VMOVUPD blOne<>(SB), Y8
	VMOVUPD blHalf<>(SB), Y9
	VMOVUPD blSign<>(SB), Y10
	VMOVUPD blMin<>(SB), Y11
	VXORPD Y12, Y12, Y12 // lanes with an invalid y
	VMOVUPD Y8, Y13      // product of 1 + t
	VXORPD Y14, Y14, Y14 // sum of y·η − max(η, 0)
	TESTQ CX, CX
	JZ   blreduce

blloop:
	VMOVUPD (SI), Y0 // η
	VMOVUPD (DI), Y1 // y
	// y·(1 − y) ≠ 0 (or NaN) marks an invalid outcome.
	VSUBPD Y1, Y8, Y2
	VMULPD Y1, Y2, Y2
	VXORPD Y3, Y3, Y3
	VCMPPD $4, Y3, Y2, Y2 // NEQ_UQ
	VORPD Y2, Y12, Y12
	// x = max(−|η|, −700); MAXPD returns its second source, −|η|, if NaN.
	VORPD Y10, Y0, Y2
	VSUBPD Y2, Y0, Y7     // w = η + |η| = 2·max(η, 0)
	VMAXPD Y2, Y11, Y2
	// k = round(x/ln2) in the low bits of Y3, as a float in Y4.
	VMOVUPD blShift<>(SB), Y3
	VFMADD231PD blInvLn2<>(SB), Y2, Y3
	VSUBPD blShift<>(SB), Y3, Y4
	VFNMADD231PD blLn2Hi<>(SB), Y4, Y2
	VFNMADD231PD blLn2Lo<>(SB), Y4, Y2 // r
	VPADDQ blBias<>(SB), Y3, Y3
	VPSLLQ $52, Y3, Y3                 // 2^k
	// The sum's term y·η − ½w, meanwhile.
	VMULPD Y1, Y0, Y4
	VFNMADD231PD Y9, Y7, Y4
	VADDPD Y4, Y14, Y14
	// e^r by Estrin's scheme (shorter dependency chains than Horner's).
	VMULPD Y2, Y2, Y4                  // r²
	VMOVUPD Y8, Y5
	VFMADD213PD Y8, Y2, Y5             // 1 + r
	VMOVUPD blC3<>(SB), Y6
	VFMADD213PD blC2<>(SB), Y2, Y6
	VMOVUPD blC5<>(SB), Y7
	VFMADD213PD blC4<>(SB), Y2, Y7
	VMOVUPD blC7<>(SB), Y15
	VFMADD213PD blC6<>(SB), Y2, Y15
	VFMADD231PD Y6, Y4, Y5             // c0…c3
	VFMADD231PD Y15, Y4, Y7            // c4…c7
	VMOVUPD blC9<>(SB), Y6
	VFMADD213PD blC8<>(SB), Y2, Y6
	VMOVUPD blC11<>(SB), Y15
	VFMADD213PD blC10<>(SB), Y2, Y15
	VFMADD231PD Y15, Y4, Y6            // c8…c11
	VMOVUPD blC13<>(SB), Y15
	VFMADD213PD blC12<>(SB), Y2, Y15   // c12, c13
	VMULPD Y4, Y4, Y4                  // r⁴
	VFMADD231PD Y15, Y4, Y6            // c8…c13
	VFMADD231PD Y7, Y4, Y5             // c0…c7
	VMULPD Y4, Y4, Y4                  // r⁸
	VFMADD231PD Y6, Y4, Y5             // e^r
	VMULPD Y3, Y5, Y5 // t
	VADDPD Y8, Y5, Y6 // u = 1 + t
	VMULPD Y6, Y13, Y13
	// y − (½ + copysign(½, η)·(1 − t)/u); the product by ±½ is exact, so
	// the FMA rounds as the separate operations do.
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

blreduce:
	VEXTRACTF128 $1, Y14, X0
	VADDPD X0, X14, X0
	VUNPCKHPD X0, X0, X1
	VADDSD X1, X0, X0
	VMOVSD X0, s+24(FP)
	VEXTRACTF128 $1, Y13, X0
	VMULPD X0, X13, X0
	VUNPCKHPD X0, X0, X1
	VMULSD X1, X0, X0
	VMOVSD X0, prod+32(FP)
	VMOVMSKPD Y12, AX
	TESTQ AX, AX
	SETEQ ok+40(FP)
	VZEROUPPER
	RET
