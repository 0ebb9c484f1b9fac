#include "textflag.h"

// func rdtscp() uint64
// RDTSCP waits for every earlier instruction to execute before it reads
// the counter, so a reading is not taken early.
TEXT ·rdtscp(SB),NOSPLIT,$0-8
	RDTSCP
	SHLQ $32, DX
	ORQ DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB),NOSPLIT,$0-24
	MOVL leaf+0(FP), AX
	XORL CX, CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
