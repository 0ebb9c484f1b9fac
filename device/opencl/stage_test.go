//go:build cgo

package opencl_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		got := baseAlign(t, pretend)
		require.Equal(t, 4*ra, got, "pretend device reports alignment %d", got)
		for _, c := range []struct {
			d      device.Device
			staged bool
		}{{real, false}, {pretend, true}} {
			f, err := c.d.Load(kernels.Saxpy)
			require.NoError(t, err)
			q, err := c.d.NewQueue()
			require.NoError(t, err)
			n := 8 * ra / 4
			buf, err := c.d.Alloc(8 * ra)
			require.NoError(t, err)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i)
			}
			require.NoError(t, q.CopyIn(buf.Ptr, f32bytes(x)))
			// y = x[ra/4:], x = x[5*ra/4:] (byte offsets ra and 5*ra:
			// aligned for the real device, not for the pretended one).
			m := 2 * ra / 4
			before := opencl.StagedLaunches(c.d)
			args := []device.Arg{{Bits: uint64(m)}, {Bits: uint64(math.Float32bits(3))},
				{Ptr: buf.Ptr + device.DevicePtr(5*ra)}, {Ptr: buf.Ptr + device.DevicePtr(ra)}}
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{m}}, args))
			out := make([]byte, 8*ra)
			require.NoError(t, q.CopyOut(out, buf.Ptr))
			require.NoError(t, q.Sync())
			got := opencl.StagedLaunches(c.d) - before
			msg := fmt.Sprintf("%s: %d staged launches at offsets %d and %d (alignment %d), want staged %v",
				c.d.Info().Name, got, ra, 5*ra, baseAlign(t, c.d), c.staged)
			assert.Equal(t, c.staged, got == 1, msg)
			assert.LessOrEqual(t, got, uint64(1), msg)
			for i, v := range bytesf32(out) {
				want := x[i]
				if i >= ra/4 && i < ra/4+m {
					want = 3*x[i+ra] + x[i] // x[i-ra/4+5*ra/4]
				}
				require.Equal(t, want, v, "%s: element %d", c.d.Info().Name, i)
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
		require.NoError(t, err)
		q, err := d.NewQueue()
		require.NoError(t, err)
		trimCache(t, d)
		before := cl.Live()
		// The buffers hold the sub-slices below at offsets of up to two
		// alignment units and a few elements, whatever the alignment
		// (rusticl's 512 bytes, pretending 2048).
		el := align / 4 // elements per alignment unit
		n := max(1000, 2*el+500)
		x0, y0 := make([]float32, n), make([]float32, n)
		for i := range x0 {
			x0[i], y0[i] = float32(i), float32(3*i+1)
		}
		// run copies x0 and y0 to fresh buffers, runs saxpy with a=2 on
		// m elements from element xo of x and yo of y, and returns y.
		run := func(xo, yo, m int) []float32 {
			t.Helper()
			xb, err := d.Alloc(4 * n)
			require.NoError(t, err)
			yb, err := d.Alloc(4 * n)
			require.NoError(t, err)
			defer d.Free(xb.Ptr)
			defer d.Free(yb.Ptr)
			require.NoError(t, q.CopyIn(xb.Ptr, f32bytes(x0)))
			require.NoError(t, q.CopyIn(yb.Ptr, f32bytes(y0)))
			args := []device.Arg{{Bits: uint64(m)}, {Bits: uint64(math.Float32bits(2))},
				{Ptr: xb.Ptr + device.DevicePtr(4*xo)}, {Ptr: yb.Ptr + device.DevicePtr(4*yo)}}
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{m}}, args), "saxpy of %d elements at x[%d], y[%d]", m, xo, yo)
			out := make([]byte, 4*n)
			require.NoError(t, q.CopyOut(out, yb.Ptr))
			require.NoError(t, q.Sync())
			return bytesf32(out)
		}
		check := func(what string, y []float32, xo, yo, m int) {
			t.Helper()
			for i := range y {
				want := y0[i]
				if i >= yo && i < yo+m {
					want = 2*x0[xo+i-yo] + y0[i]
				}
				require.Equal(t, want, y[i], "%s: y[%d]", what, i)
			}
		}
		staged := opencl.StagedLaunches(d)
		check("aligned sub-slices", run(el, 2*el, 300), el, 2*el, 300)
		got := opencl.StagedLaunches(d)
		assert.Equal(t, staged, got, "a launch at aligned offsets staged its arguments (%d staged launches, was %d)", got, staged)
		for _, c := range []struct{ xo, yo, m int }{{3, 3, 500}, {1, 0, 999}, {0, 7, 993}, {el + 5, 2*el + 9, 400}, {n - 1, n - 1, 1}} {
			staged := opencl.StagedLaunches(d)
			check("unaligned sub-slices", run(c.xo, c.yo, c.m), c.xo, c.yo, c.m)
			got := opencl.StagedLaunches(d)
			assert.Equal(t, staged+1, got, "saxpy at x[%d], y[%d]: %d staged launches", c.xo, c.yo, got)
		}

		// Two arguments into one buffer at offsets equal modulo the
		// alignment move together: y = 2*y' + y where y' overlaps y.
		buf, err := d.Alloc(8 * n)
		require.NoError(t, err)
		all := make([]float32, 2*n)
		for i := range all {
			all[i] = float32(i)
		}
		require.NoError(t, q.CopyIn(buf.Ptr, f32bytes(all)))
		xo, yo := 1, 1+el // x = all[1:], y = all[1+el:]
		args := []device.Arg{{Bits: uint64(n)}, {Bits: uint64(math.Float32bits(2))},
			{Ptr: buf.Ptr + device.DevicePtr(4*xo)}, {Ptr: buf.Ptr + device.DevicePtr(4*yo)}}
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n}, Threads: 1, Teams: 1}, args), "saxpy on two sub-slices of one buffer")
		out := make([]byte, 8*n)
		require.NoError(t, q.CopyOut(out, buf.Ptr))
		require.NoError(t, q.Sync())
		// One work-item in order: element yo+i reads x[xo+i] after any
		// earlier write to it (xo+i < yo+i).
		want := append([]float32(nil), all...)
		for i := 0; i < n; i++ {
			want[yo+i] = 2*want[xo+i] + want[yo+i]
		}
		for i, v := range bytesf32(out) {
			require.Equal(t, want[i], v, "two sub-slices of one buffer: element %d", i)
		}
		// At offsets that differ modulo the alignment (y aligned, x not;
		// then both unaligned, in different classes), each class moves on
		// its own and only the bytes the kernel changed go back.
		for _, c := range []struct{ xo, yo int }{{n, 0}, {1, n + 2}, {n + 3, 2}} {
			require.NoError(t, q.CopyIn(buf.Ptr, f32bytes(all)))
			m := n - 3
			args[2].Ptr = buf.Ptr + device.DevicePtr(4*c.xo)
			args[3].Ptr = buf.Ptr + device.DevicePtr(4*c.yo)
			args[0].Bits = uint64(m)
			staged := opencl.StagedLaunches(d)
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{m}}, args), "saxpy at x[%d], y[%d] of one buffer", c.xo, c.yo)
			require.NoError(t, q.CopyOut(out, buf.Ptr))
			require.NoError(t, q.Sync())
			got := opencl.StagedLaunches(d)
			assert.Equal(t, staged+1, got, "saxpy at x[%d], y[%d]: %d staged launches", c.xo, c.yo, got)
			for i, v := range bytesf32(out) {
				want := all[i]
				if i >= c.yo && i < c.yo+m {
					want = 2*all[c.xo+i-c.yo] + all[i]
				}
				require.Equal(t, want, v, "saxpy at x[%d], y[%d] of one buffer: element %d", c.xo, c.yo, i)
			}
		}
		// Profiled, a staged launch's timing is its kernel's.
		prof := q.(device.Profiler)
		prof.Profile(true)
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n - 3}}, args))
		if _, _, native, err := prof.Last().Times(); assert.NoError(t, err, "timing of a staged launch: %q, %v; want the kernel's", native.Type, err) {
			assert.Equal(t, "opencl kernel", native.Type, "timing of a staged launch: %q, %v; want the kernel's", native.Type, err)
		}
		prof.Profile(false)
		require.NoError(t, q.Sync())
		require.NoError(t, d.Free(buf.Ptr))
		require.NoError(t, q.Release())
		trimCache(t, d)
		after := cl.Live()
		assert.Equal(t, before.Mems, after.Mems, "OpenCL memory objects: %d before, %d after", before.Mems, after.Mems)
	}
}
