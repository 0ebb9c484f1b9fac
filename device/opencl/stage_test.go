//go:build cgo

package opencl_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/internal/cl"
	"github.com/gompt/gompt/kernels"
)

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesf32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestPretendAlignment: on a device pretending a larger base address
// alignment than the real one, a buffer argument at an offset aligned for
// the real device but not for the pretended one is staged and computes the
// right result; the real device passes it as a sub-buffer.
func TestPretendAlignment(t *testing.T) {
	for _, real := range devices(t) {
		ra := baseAlign(t, real)
		pretend := opencl.PretendAlign(t, real, 4*ra)
		if got := baseAlign(t, pretend); got != 4*ra {
			t.Fatalf("pretend device reports alignment %d, want %d", got, 4*ra)
		}
		for _, c := range []struct {
			d      device.Device
			staged bool
		}{{real, false}, {pretend, true}} {
			f, err := c.d.Load(kernels.Saxpy)
			if err != nil {
				t.Fatal(err)
			}
			q, err := c.d.NewQueue()
			if err != nil {
				t.Fatal(err)
			}
			n := 8 * ra / 4
			buf, err := c.d.Alloc(8 * ra)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i)
			}
			if err := q.CopyIn(buf.Ptr, f32bytes(x)); err != nil {
				t.Fatal(err)
			}
			// y = x[ra/4:], x = x[5*ra/4:] (byte offsets ra and 5*ra:
			// aligned for the real device, not for the pretended one).
			m := 2 * ra / 4
			before := opencl.StagedLaunches(c.d)
			args := []device.Arg{{Bits: uint64(m)}, {Bits: uint64(math.Float32bits(3))},
				{Ptr: buf.Ptr + device.DevicePtr(5*ra)}, {Ptr: buf.Ptr + device.DevicePtr(ra)}}
			if err := q.Launch(f, device.Shape{Size: [3]int{m}}, args); err != nil {
				t.Fatal(err)
			}
			out := make([]byte, 8*ra)
			if err := q.CopyOut(out, buf.Ptr); err != nil {
				t.Fatal(err)
			}
			if err := q.Sync(); err != nil {
				t.Fatal(err)
			}
			if got := opencl.StagedLaunches(c.d) - before; (got == 1) != c.staged || got > 1 {
				t.Errorf("%s: %d staged launches at offsets %d and %d (alignment %d), want staged %v",
					c.d.Info().Name, got, ra, 5*ra, baseAlign(t, c.d), c.staged)
			}
			for i, v := range bytesf32(out) {
				want := x[i]
				if i >= ra/4 && i < ra/4+m {
					want = 3*x[i+ra] + x[i] // x[i-ra/4+5*ra/4]
				}
				if v != want {
					t.Fatalf("%s: element %d = %g, want %g", c.d.Info().Name, i, v, want)
				}
			}
			c.d.Free(buf.Ptr)
			q.Release()
		}
	}
}

// Saxpy on sub-slices at element offsets whose byte offsets are not
// multiples of the base alignment: right results, nothing written outside
// the sub-slices, no OpenCL object left behind; aligned offsets still go
// as sub-buffers without staging.
func TestUnalignedBufferArguments(t *testing.T) {
	for _, d := range withPretend(t, devices(t)) {
		align := baseAlign(t, d)
		f, err := d.Load(kernels.Saxpy)
		if err != nil {
			t.Fatal(err)
		}
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		before := cl.Live()
		const n = 1000
		x0, y0 := make([]float32, n), make([]float32, n)
		for i := range x0 {
			x0[i], y0[i] = float32(i), float32(3*i+1)
		}
		// run copies x0 and y0 to fresh buffers, runs saxpy with a=2 on
		// m elements from element xo of x and yo of y, and returns y.
		run := func(xo, yo, m int) []float32 {
			t.Helper()
			xb, err := d.Alloc(4 * n)
			if err != nil {
				t.Fatal(err)
			}
			yb, err := d.Alloc(4 * n)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(xb.Ptr)
			defer d.Free(yb.Ptr)
			if err := q.CopyIn(xb.Ptr, f32bytes(x0)); err != nil {
				t.Fatal(err)
			}
			if err := q.CopyIn(yb.Ptr, f32bytes(y0)); err != nil {
				t.Fatal(err)
			}
			args := []device.Arg{{Bits: uint64(m)}, {Bits: uint64(math.Float32bits(2))},
				{Ptr: xb.Ptr + device.DevicePtr(4*xo)}, {Ptr: yb.Ptr + device.DevicePtr(4*yo)}}
			if err := q.Launch(f, device.Shape{Size: [3]int{m}}, args); err != nil {
				t.Fatalf("saxpy of %d elements at x[%d], y[%d]: %v", m, xo, yo, err)
			}
			out := make([]byte, 4*n)
			if err := q.CopyOut(out, yb.Ptr); err != nil {
				t.Fatal(err)
			}
			if err := q.Sync(); err != nil {
				t.Fatal(err)
			}
			return bytesf32(out)
		}
		check := func(what string, y []float32, xo, yo, m int) {
			t.Helper()
			for i := range y {
				want := y0[i]
				if i >= yo && i < yo+m {
					want = 2*x0[xo+i-yo] + y0[i]
				}
				if y[i] != want {
					t.Fatalf("%s: y[%d] = %g, want %g", what, i, y[i], want)
				}
			}
		}
		el := align / 4 // elements per alignment unit
		staged := opencl.StagedLaunches(d)
		check("aligned sub-slices", run(el, 2*el, 300), el, 2*el, 300)
		if got := opencl.StagedLaunches(d); got != staged {
			t.Errorf("a launch at aligned offsets staged its arguments (%d staged launches, was %d)", got, staged)
		}
		for _, c := range []struct{ xo, yo, m int }{{3, 3, 500}, {1, 0, 999}, {0, 7, 993}, {el + 5, 2*el + 9, 400}, {n - 1, n - 1, 1}} {
			staged := opencl.StagedLaunches(d)
			check("unaligned sub-slices", run(c.xo, c.yo, c.m), c.xo, c.yo, c.m)
			if got := opencl.StagedLaunches(d); got != staged+1 {
				t.Errorf("saxpy at x[%d], y[%d]: %d staged launches, want %d", c.xo, c.yo, got, staged+1)
			}
		}

		// Two arguments into one buffer at offsets equal modulo the
		// alignment move together: y = 2*y' + y where y' overlaps y.
		buf, err := d.Alloc(8 * n)
		if err != nil {
			t.Fatal(err)
		}
		all := make([]float32, 2*n)
		for i := range all {
			all[i] = float32(i)
		}
		if err := q.CopyIn(buf.Ptr, f32bytes(all)); err != nil {
			t.Fatal(err)
		}
		xo, yo := 1, 1+el // x = all[1:], y = all[1+el:]
		args := []device.Arg{{Bits: n}, {Bits: uint64(math.Float32bits(2))},
			{Ptr: buf.Ptr + device.DevicePtr(4*xo)}, {Ptr: buf.Ptr + device.DevicePtr(4*yo)}}
		if err := q.Launch(f, device.Shape{Size: [3]int{n}, Threads: 1, Teams: 1}, args); err != nil {
			t.Fatalf("saxpy on two sub-slices of one buffer: %v", err)
		}
		out := make([]byte, 8*n)
		if err := q.CopyOut(out, buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		// One work-item in order: element yo+i reads x[xo+i] after any
		// earlier write to it (xo+i < yo+i).
		want := append([]float32(nil), all...)
		for i := 0; i < n; i++ {
			want[yo+i] = 2*want[xo+i] + want[yo+i]
		}
		for i, v := range bytesf32(out) {
			if v != want[i] {
				t.Fatalf("two sub-slices of one buffer: element %d = %g, want %g", i, v, want[i])
			}
		}
		// At offsets that differ modulo the alignment (y aligned, x not;
		// then both unaligned, in different classes), each class moves on
		// its own and only the bytes the kernel changed go back.
		for _, c := range []struct{ xo, yo int }{{n, 0}, {1, n + 2}, {n + 3, 2}} {
			if err := q.CopyIn(buf.Ptr, f32bytes(all)); err != nil {
				t.Fatal(err)
			}
			m := n - 3
			args[2].Ptr = buf.Ptr + device.DevicePtr(4*c.xo)
			args[3].Ptr = buf.Ptr + device.DevicePtr(4*c.yo)
			args[0].Bits = uint64(m)
			staged := opencl.StagedLaunches(d)
			if err := q.Launch(f, device.Shape{Size: [3]int{m}}, args); err != nil {
				t.Fatalf("saxpy at x[%d], y[%d] of one buffer: %v", c.xo, c.yo, err)
			}
			if err := q.CopyOut(out, buf.Ptr); err != nil {
				t.Fatal(err)
			}
			if err := q.Sync(); err != nil {
				t.Fatal(err)
			}
			if got := opencl.StagedLaunches(d); got != staged+1 {
				t.Errorf("saxpy at x[%d], y[%d]: %d staged launches, want %d", c.xo, c.yo, got, staged+1)
			}
			for i, v := range bytesf32(out) {
				want := all[i]
				if i >= c.yo && i < c.yo+m {
					want = 2*all[c.xo+i-c.yo] + all[i]
				}
				if v != want {
					t.Fatalf("saxpy at x[%d], y[%d] of one buffer: element %d = %g, want %g", c.xo, c.yo, i, v, want)
				}
			}
		}
		// Profiled, a staged launch's timing is its kernel's.
		prof := q.(device.Profiler)
		prof.Profile(true)
		if err := q.Launch(f, device.Shape{Size: [3]int{n - 3}}, args); err != nil {
			t.Fatal(err)
		}
		if _, _, native, err := prof.Last().Times(); err != nil || native.Type != "opencl kernel" {
			t.Errorf("timing of a staged launch: %q, %v; want the kernel's", native.Type, err)
		}
		prof.Profile(false)
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := d.Free(buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
		if after := cl.Live(); after.Mems != before.Mems {
			t.Errorf("OpenCL memory objects: %d before, %d after", before.Mems, after.Mems)
		}
	}
}
