//go:build linux && gc

#include "textflag.h"

// func mWord(off uintptr) uint64
// Loads the 8 bytes at offset off of the runtime's m (OS thread) that the
// calling goroutine runs on: g.m is at offset 48 of g on every Go release
// this is enabled for (see tid_linux_fast.go, which validates the result).
TEXT ·mWord(SB),NOSPLIT,$0-16
	MOVQ (TLS), AX
	MOVQ 48(AX), AX
	MOVQ off+0(FP), BX
	MOVQ (AX)(BX*1), AX
	MOVQ AX, ret+8(FP)
	RET

// func gWord(off uintptr) uint64
// Loads the 8 bytes at offset off of the calling goroutine's g (see
// threadLivesKnown in tid_linux_fast.go, which validates the offset
// it is used with).
TEXT ·gWord(SB),NOSPLIT,$0-16
	MOVQ (TLS), AX
	MOVQ off+0(FP), BX
	MOVQ (AX)(BX*1), AX
	MOVQ AX, ret+8(FP)
	RET
