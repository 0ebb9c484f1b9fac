package target

import (
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
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
		{elemOf[byte](), "uint8", device.ParamUint8, false},
		{elemOf[int](), "int", device.ParamInt64, false},
		{elemOf[uint64](), "uint64", device.ParamUint64, false},
		{elemOf[int16](), "int16", device.ParamInt16, false},
		{elemOf[uint16](), "uint16", device.ParamUint16, false},
		{elemOf[int8](), "int8", device.ParamInt8, false},
		{elemOf[uint](), "uint", device.ParamUint64, false},
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
		assert.Equal(t, c.name, c.et.name, "name")
		assert.Equal(t, c.kind, c.et.kind, "%s: kind", c.name)
		assert.Equal(t, c.pointers, c.et.pointers, "%s: pointers", c.name)
	}
	assert.Same(t, elemOf[celsius](), elemOf[celsius](), "a type described twice: want one cached description")
	assert.Nil(t, badElem[float32](), "badElem of float32")
	assert.Same(t, elemOf[*int](), badElem[*int](), "badElem of *int: want its description")
}

// The constructors of the hot path stay free of allocation.
func TestConstructorsAllocateNothing(t *testing.T) {
	x, c := make([]float32, 8), make([]celsius, 8)
	var sink Arg
	var m Map
	assert.Zero(t, testing.AllocsPerRun(100, func() { sink, m = Slice(x), To(x) }), "Slice and To of []float32: allocations")
	assert.Zero(t, testing.AllocsPerRun(100, func() { sink, m = Slice(c), ToFrom(c) }), "Slice and ToFrom of a defined type: allocations")
	_, _ = sink, m
}
