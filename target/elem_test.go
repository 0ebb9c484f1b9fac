package target

import (
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
)

type (
	celsius   float32
	plain     struct{ a, b float64 }
	withPtr   struct{ p *int }
	nested    struct{ x [3]plain }
	nestedPtr struct{ x [2]struct{ s string } }
	noElems   struct{ _ [0]*int }
)

func TestElemOf(t *testing.T) {
	for _, c := range []struct {
		et       *elemType
		name     string
		kind     device.ParamKind
		pointers bool
	}{
		{elemOf[float32](), "float32", device.ParamFloat32, false},
		{elemOf[float64](), "float64", device.ParamFloat64, false},
		{elemOf[int32](), "int32", device.ParamInt32, false},
		{elemOf[uint32](), "uint32", device.ParamUint32, false},
		{elemOf[int64](), "int64", device.ParamInt64, false},
		{elemOf[byte](), "uint8", 0, false},
		{elemOf[int](), "int", 0, false},
		{elemOf[uint64](), "uint64", 0, false},
		{elemOf[int16](), "int16", 0, false},
		{elemOf[complex64](), "complex64", 0, false},
		{elemOf[uintptr](), "uintptr", 0, false},
		{elemOf[celsius](), "target.celsius", device.ParamFloat32, false},
		{elemOf[plain](), "target.plain", 0, false},
		{elemOf[nested](), "target.nested", 0, false},
		{elemOf[[4]int32](), "[4]int32", 0, false},
		{elemOf[noElems](), "target.noElems", 0, false},
		{elemOf[*int](), "*int", 0, true},
		{elemOf[unsafe.Pointer](), "unsafe.Pointer", 0, true},
		{elemOf[string](), "string", 0, true},
		{elemOf[[]int](), "[]int", 0, true},
		{elemOf[map[int]int](), "map[int]int", 0, true},
		{elemOf[chan int](), "chan int", 0, true},
		{elemOf[func()](), "func()", 0, true},
		{elemOf[any](), "interface {}", 0, true},
		{elemOf[error](), "error", 0, true},
		{elemOf[withPtr](), "target.withPtr", 0, true},
		{elemOf[nestedPtr](), "target.nestedPtr", 0, true},
		{elemOf[[1]*int](), "[1]*int", 0, true},
	} {
		if c.et.name != c.name || c.et.kind != c.kind || c.et.pointers != c.pointers {
			t.Errorf("%s: got %+v, want kind %v pointers %v", c.name, *c.et, c.kind, c.pointers)
		}
	}
	if elemOf[celsius]() != elemOf[celsius]() {
		t.Error("a type described twice: want one cached description")
	}
	if badElem[float32]() != nil || badElem[*int]() == nil {
		t.Error("badElem: want nil for float32, the description for *int")
	}
}

// The constructors of the hot path stay free of allocation.
func TestConstructorsAllocateNothing(t *testing.T) {
	x, c := make([]float32, 8), make([]celsius, 8)
	var sink Arg
	var m Map
	if n := testing.AllocsPerRun(100, func() { sink, m = Slice(x), To(x) }); n != 0 {
		t.Errorf("Slice and To of []float32: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink, m = Slice(c), ToFrom(c) }); n != 0 {
		t.Errorf("Slice and ToFrom of a defined type: %v allocations", n)
	}
	_, _ = sink, m
}
