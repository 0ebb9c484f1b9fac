//go:build cgo

#include <stdint.h>
#include "_cgo_export.h"

// gompt_cl_event_cb is passed to clSetEventCallback (event.go): user is a
// cgo.Handle of the Go function to call with the event's status.
void gompt_cl_event_cb(void *ev, int32_t status, void *user) {
	(void)ev;
	gomptEventDone((uintptr_t)user, status);
}
