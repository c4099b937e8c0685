#include "textflag.h"

// The weight of each byte of a 16-byte block in s2: 16 for the first,
// 1 for the last, as 16-bit words for PMADDWL (pmaddwd).
DATA adlerWeights<>+0(SB)/8, $0x000d000e000f0010
DATA adlerWeights<>+8(SB)/8, $0x0009000a000b000c
DATA adlerWeights<>+16(SB)/8, $0x0005000600070008
DATA adlerWeights<>+24(SB)/8, $0x0001000200030004
GLOBL adlerWeights<>(SB), RODATA|NOPTR, $32

// func adlerSSE2(p []byte) (sum, before, weighted uint64)
// len(p) is a non-zero multiple of 16, at most adlerRunMax.
TEXT ·adlerSSE2(SB), NOSPLIT, $0-48
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	SHRQ $4, CX
	PXOR X0, X0                  // zero
	PXOR X1, X1                  // byte sums: bytes 0-7 in lane 0, 8-15 in lane 2 (u32)
	PXOR X2, X2                  // X1 as it was before each block, summed
	PXOR X3, X3                  // weighted sums (4 × u32)
	MOVOU adlerWeights<>+0(SB), X6
	MOVOU adlerWeights<>+16(SB), X7

loop:
	MOVOU (SI), X4
	PADDD X1, X2
	MOVO X4, X5
	PSADBW X0, X5
	PADDD X5, X1
	MOVO X4, X5
	PUNPCKLBW X0, X4
	PUNPCKHBW X0, X5
	PMADDWL X6, X4
	PMADDWL X7, X5
	PADDD X4, X3
	PADDD X5, X3
	ADDQ $16, SI
	DECQ CX
	JNZ loop

	// sum: the two 64-bit lanes of X1 (each holds a u32 below 2^32).
	MOVQ X1, AX
	PSRLO $8, X1
	MOVQ X1, BX
	ADDQ BX, AX
	MOVQ AX, sum+24(FP)
	MOVQ X2, AX
	PSRLO $8, X2
	MOVQ X2, BX
	ADDQ BX, AX
	MOVQ AX, before+32(FP)
	// weighted: the four u32 lanes of X3.
	PSHUFD $0x4E, X3, X4
	PADDD X4, X3
	PSHUFD $0xB1, X3, X4
	PADDD X4, X3
	MOVQ X3, AX
	MOVL AX, AX
	MOVQ AX, weighted+40(FP)
	RET
