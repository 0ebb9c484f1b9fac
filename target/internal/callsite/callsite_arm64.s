#include "textflag.h"

// func Parent() uintptr
// On arm64 the frame record at R29 holds the caller's saved frame pointer
// and, above it, the return address into the caller's caller.
TEXT ·Parent(SB), NOSPLIT|NOFRAME, $0-8
	MOVD 8(R29), R0
	MOVD R0, ret+0(FP)
	RET
