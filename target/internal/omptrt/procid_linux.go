//go:build linux

package omptrt

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// procID is ompt_get_proc_id: the processor the calling goroutine's thread
// is running on at the moment of the call (getcpu), -1 if unknown.
func procID() int {
	var cpu uint32
	_, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	if e != 0 {
		return -1
	}
	return int(cpu)
}

// threadID is the thread_id of trace records: the OS thread id (gettid)
// of the thread the calling goroutine runs on. Where the runtime's own
// copy of it can be read (tid_linux_fast.go) that is one load; otherwise
// a system call.
func threadID() uint64 {
	if tid, ok := fastTID(); ok {
		return tid
	}
	return gettid()
}

func gettid() uint64 { return uint64(unix.Gettid()) }
