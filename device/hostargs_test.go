package device

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHostArgsByName(t *testing.T) {
	k := &Kernel{Name: "k", Params: []Param{
		ScalarParam("i32", ParamInt32), ScalarParam("u32", ParamUint32), ScalarParam("i64", ParamInt64),
		ScalarParam("f32", ParamFloat32), ScalarParam("f64", ParamFloat64),
		BufferParam("x", ParamFloat32, "i64"), BufferParam("raw", 0, "i64"),
	}}
	x := []float32{1, 2, 3}
	a := &HostArgs{Kernel: k,
		Bufs: [][]byte{nil, nil, nil, nil, nil, Bytes(x), Bytes(x)},
		Args: []Arg{{Bits: uint64(0xffffffff)}, {Bits: uint64(0xffffffff)}, {Bits: uint64(1 << 40)},
			{Bits: uint64(math.Float32bits(1.5))}, {Bits: math.Float64bits(-2.25)}, {}, {}},
	}
	assert.EqualValues(t, -1, Value[int](a, "i32"), "int32 0xffffffff")
	assert.EqualValues(t, 0xffffffff, Value[int](a, "u32"), "uint32 0xffffffff")
	assert.EqualValues(t, 1<<40, Value[int64](a, "i64"), "int64")
	assert.EqualValues(t, 1.5, Value[float32](a, "f32"), "float32")
	assert.EqualValues(t, -2.25, Value[float64](a, "f64"), "float64")
	assert.EqualValues(t, 1.5, Value[float64](a, "f32"), "float32 read as float64")
	if s := Slice[float32](a, "x"); assert.Len(t, s, 3, "Slice[float32](x) = %v, want x itself", s) {
		assert.Same(t, &x[0], &s[0], "Slice[float32](x) = %v, want x itself", s)
	}
	assert.Len(t, Slice[byte](a, "raw"), 12, "Slice[byte] of an untyped buffer")
	assert.Len(t, Slice[uint32](a, "x"), 3, "Slice[uint32] of a float32 buffer (same size)")
	panics := func(name string, f func(), want string) {
		t.Helper()
		defer func() {
			r := recover()
			s, _ := r.(string)
			assert.Equal(t, want, s, "%s: panic %v", name, r)
		}()
		f()
	}
	panics("missing", func() { Value[int](a, "nope") }, `kernel k has no parameter "nope" (its parameters: i32 int32, u32 uint32, i64 int64, f32 float32, f64 float64, x buffer, raw buffer)`)
	panics("no kernel", func() { Value[int](&HostArgs{}, "n") }, "device: HostArgs has no Kernel: cannot find parameter n by name")
	panics("wrong size", func() { Slice[float64](a, "x") }, "kernel k: buffer x holds float32 elements (4 bytes), not float64 (8 bytes)")
}

func TestRangeClampAndImages(t *testing.T) {
	r := Range{Lo: [3]int{-5, 0, 0}, Hi: [3]int{50, 1, 1}}
	for _, c := range []struct{ n, lo, hi int }{{10, 0, 10}, {100, 0, 50}, {-3, 0, 0}, {0, 0, 0}} {
		if lo, hi := r.Clamp(0, c.n); assert.Equal(t, c.lo, lo, "Clamp(0, %d) = [%d, %d), want [%d, %d)", c.n, lo, hi, c.lo, c.hi) {
			assert.Equal(t, c.hi, hi, "Clamp(0, %d) = [%d, %d), want [%d, %d)", c.n, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := (Range{Lo: [3]int{20}, Hi: [3]int{10}}).Clamp(0, 100); assert.EqualValues(t, 20, lo, "an empty range clamps to [%d, %d), want [20, 20)", lo, hi) {
		assert.EqualValues(t, 20, hi, "an empty range clamps to [%d, %d), want [20, 20)", lo, hi)
	}
}
