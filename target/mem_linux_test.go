package target

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err, "MappedPtr of mmap'd memory")
	require.Equal(t, DevicePtr(addr(m)), p, "MappedPtr of mmap'd memory: want its address")
	err = Memcpy(On(InitialDevice, p), Host(make([]byte, 8)), 8)
	require.ErrorContains(t, err, "nor in a slice of Go memory", "Memcpy to mmap'd memory through On")
	// Host names it directly.
	require.NoError(t, Memcpy(Host(m), Host([]byte{7}), 1), "Memcpy to Host(mmap'd memory)")
	assert.Equal(t, byte(7), m[0], "Memcpy to Host(mmap'd memory)")
}
