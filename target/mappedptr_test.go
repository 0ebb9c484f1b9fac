package target

import "testing"

// TestMappedPtrOfUnmappedIsZero: MappedPtr of a slice with no device copy
// returns the null device pointer with its error, as omp_get_mapped_ptr
// returns NULL, so a program that checks the pointer, not the error, does
// not use a bogus address.
func TestMappedPtrOfUnmappedIsZero(t *testing.T) {
	hostRuntime(t)
	x := make([]float32, 4)
	if p, err := MappedPtr(x, 0); p != 0 || err == nil {
		t.Fatalf("MappedPtr of an unmapped slice: %v, %v; want 0 and an error", p, err)
	}
	if p, err := MappedPtr(x, 7); p != 0 || err == nil {
		t.Fatalf("MappedPtr on device 7 of 1: %v, %v; want 0 and an error", p, err)
	}
}
