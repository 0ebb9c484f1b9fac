//go:build linux && (amd64 || arm64)

package ompt

import (
	"syscall"
	"unsafe"
)

// procID is ompt_get_proc_id: the processor the calling goroutine's thread
// is running on at the moment of the call (getcpu), -1 if unknown.
func procID() int {
	var cpu uint32
	_, _, e := syscall.RawSyscall(sysGetcpu, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	if e != 0 {
		return -1
	}
	return int(cpu)
}
