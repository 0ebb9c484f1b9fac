package target

import (
	"strings"
	"syscall"
	"testing"
)

// MappedPtr of memory Go does not manage returns its address without
// crashing; On cannot bound it and says so.
func TestMappedPtrOfForeignMemory(t *testing.T) {
	hostRuntime(t)
	m, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(m)
	p, err := MappedPtr(m, InitialDevice)
	if err != nil || p != DevicePtr(addr(m)) {
		t.Fatalf("MappedPtr of mmap'd memory = %v, %v; want its address %#x", p, err, addr(m))
	}
	err = Memcpy(On(InitialDevice, p), Host(make([]byte, 8)), 8)
	if err == nil || !strings.Contains(err.Error(), "nor in a slice of Go memory") {
		t.Fatalf("Memcpy to mmap'd memory through On: %v", err)
	}
	// Host names it directly.
	if err := Memcpy(Host(m), Host([]byte{7}), 1); err != nil || m[0] != 7 {
		t.Fatalf("Memcpy to Host(mmap'd memory): %v %v", err, m[0])
	}
}
