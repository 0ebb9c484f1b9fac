//go:build linux && gc

#include "textflag.h"

// func mWord(off uintptr) uint64
// Loads the 8 bytes at offset off of the runtime's m (OS thread) that the
// calling goroutine runs on: g.m is at offset 48 of g on every Go release
// this is enabled for (see tid_linux_fast.go, which validates the result).
TEXT ·mWord(SB),NOSPLIT,$0-16
	MOVD 48(g), R0
	MOVD off+0(FP), R1
	MOVD (R0)(R1), R0
	MOVD R0, ret+8(FP)
	RET

// func gWord(off uintptr) uint64
// Loads the 8 bytes at offset off of the calling goroutine's g (see
// threadLivesKnown in tid_linux_fast.go, which validates the offset
// it is used with).
TEXT ·gWord(SB),NOSPLIT,$0-16
	MOVD off+0(FP), R1
	MOVD (g)(R1), R0
	MOVD R0, ret+8(FP)
	RET
