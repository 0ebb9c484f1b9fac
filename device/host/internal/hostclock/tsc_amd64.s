#include "textflag.h"

// func rdtsc() uint64
// RDTSC without a fence: the read may execute a few dozen cycles before
// or after its neighbours in program order (RDTSCP or LFENCE would order
// it, at 7 ns more per read on a KVM guest, four reads per traced
// construct). Trace timestamps are ns; that skew is below what they
// resolve, and ompt keeps every record's end at or after its begin.
TEXT ·rdtsc(SB),NOSPLIT,$0-8
	RDTSC
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
