#include "textflag.h"

// func Parent() uintptr
// With a zero-size frame, BP is still the caller's frame pointer; the
// caller's return address sits just above its saved frame pointer.
TEXT ·Parent(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ 8(BP), AX
	MOVQ AX, ret+0(FP)
	RET
