//go:build cgo

package cl

/*
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

// gomptEventDone runs the function OnComplete registered, once, on the
// driver's thread.
//
//export gomptEventDone
func gomptEventDone(user C.uintptr_t, status C.int32_t) {
	h := cgo.Handle(user)
	fn := h.Value().(func(int32))
	h.Delete()
	fn(int32(status))
}
