package device

import (
	"math"
	"testing"
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
	if v := Value[int](a, "i32"); v != -1 {
		t.Errorf("int32 0xffffffff = %d, want -1", v)
	}
	if v := Value[int](a, "u32"); v != 0xffffffff {
		t.Errorf("uint32 0xffffffff = %d", v)
	}
	if v := Value[int64](a, "i64"); v != 1<<40 {
		t.Errorf("int64 = %d", v)
	}
	if v := Value[float32](a, "f32"); v != 1.5 {
		t.Errorf("float32 = %v", v)
	}
	if v := Value[float64](a, "f64"); v != -2.25 {
		t.Errorf("float64 = %v", v)
	}
	if v := Value[float64](a, "f32"); v != 1.5 {
		t.Errorf("float32 read as float64 = %v", v)
	}
	if s := Slice[float32](a, "x"); len(s) != 3 || &s[0] != &x[0] {
		t.Errorf("Slice[float32](x) = %v, want x itself", s)
	}
	if s := Slice[byte](a, "raw"); len(s) != 12 {
		t.Errorf("Slice[byte] of an untyped buffer has %d elements, want 12", len(s))
	}
	if s := Slice[uint32](a, "x"); len(s) != 3 {
		t.Errorf("Slice[uint32] of a float32 buffer (same size) has %d elements", len(s))
	}
	panics := func(name string, f func(), want string) {
		t.Helper()
		defer func() {
			r := recover()
			if s, _ := r.(string); s != want {
				t.Errorf("%s: panic %v, want %q", name, r, want)
			}
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
		if lo, hi := r.Clamp(0, c.n); lo != c.lo || hi != c.hi {
			t.Errorf("Clamp(0, %d) = [%d, %d), want [%d, %d)", c.n, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := (Range{Lo: [3]int{20}, Hi: [3]int{10}}).Clamp(0, 100); lo != 20 || hi != 20 {
		t.Errorf("an empty range clamps to [%d, %d), want [20, 20)", lo, hi)
	}
	imgs := Images("e", nil, "cl", "")
	if len(imgs) != 1 || imgs[0].Kind != ImageOpenCL || imgs[0].Entry != "e" || imgs[0].Source != "cl" {
		t.Errorf("Images(e, nil, cl, \"\") = %+v", imgs)
	}
	if imgs := Images("e", func(*HostArgs, Range, int, int) {}, "cl", "ptx"); len(imgs) != 3 || imgs[0].Kind != ImageHost || imgs[2].Kind != ImagePTX {
		t.Errorf("Images with all three = %+v", imgs)
	}
}
