package target

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMappedPtrOfUnmappedIsZero: MappedPtr of a slice with no device copy
// returns the null device pointer with its error, as omp_get_mapped_ptr
// returns NULL, so a program that checks the pointer, not the error, does
// not use a bogus address.
func TestMappedPtrOfUnmappedIsZero(t *testing.T) {
	hostRuntime(t)
	x := make([]float32, 4)
	p, err := MappedPtr(x, 0)
	assert.Zero(t, p, "MappedPtr of an unmapped slice")
	assert.Error(t, err, "MappedPtr of an unmapped slice")
	p, err = MappedPtr(x, 7)
	assert.Zero(t, p, "MappedPtr on device 7 of 1")
	assert.Error(t, err, "MappedPtr on device 7 of 1")
}
