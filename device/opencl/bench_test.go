package opencl_test

import (
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/clraw"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/require"
)

// BenchmarkEmptyKernel compares one empty-kernel launch and sync through
// the plugin with the same work through the binding alone (enqueue of an
// empty kernel and clFinish).
func BenchmarkEmptyKernel(b *testing.B) {
	d := devices(b)[0]
	b.Run("plugin", func(b *testing.B) {
		f, err := d.Load(kernels.Empty)
		require.NoError(b, err)
		q, err := d.NewQueue()
		require.NoError(b, err)
		defer q.Release()
		shape := device.Shape{Size: [3]int{1}}
		args := []device.Arg{{Bits: 1}}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			require.NoError(b, q.Launch(f, shape, args))
			require.NoError(b, q.Sync())
		}
	})
	b.Run("raw", func(b *testing.B) {
		_, err := clraw.EmptyKernel(d, 1)
		require.NoError(b, err)
		b.ResetTimer()
		dt, err := clraw.EmptyKernel(d, b.N)
		require.NoError(b, err)
		b.ReportMetric(float64(dt.Nanoseconds())/float64(b.N), "raw-ns/op")
	})
}

const copyBytes = 64 << 20

// BenchmarkCopy64MiB compares 64 MiB copies each way through the plugin
// (non-blocking copy then Sync; staged through pinned buffers where the
// device stages, see GOMPT_OPENCL_STAGING) with blocking copies through the
// binding alone, from Go memory (raw) and from pinned memory (raw-pinned).
func BenchmarkCopy64MiB(b *testing.B) {
	d := devices(b)[0]
	for _, dir := range []struct {
		name     string
		toDevice bool
	}{{"h2d", true}, {"d2h", false}} {
		b.Run(dir.name+"/plugin", func(b *testing.B) {
			q, err := d.NewQueue()
			require.NoError(b, err)
			defer q.Release()
			buf, err := d.Alloc(copyBytes)
			require.NoError(b, err)
			defer d.Free(buf.Ptr)
			host := make([]byte, copyBytes)
			require.NoError(b, q.CopyIn(buf.Ptr, host)) // first touch
			require.NoError(b, q.Sync())
			b.SetBytes(copyBytes)
			b.ResetTimer()
			for b.Loop() {
				if dir.toDevice {
					err = q.CopyIn(buf.Ptr, host)
				} else {
					err = q.CopyOut(host, buf.Ptr)
				}
				require.NoError(b, err)
				require.NoError(b, q.Sync())
			}
		})
		for _, raw := range []struct {
			name string
			fn   func(device.Device, int, bool, int) (time.Duration, error)
		}{{"raw", clraw.Copy}, {"raw-pinned", clraw.CopyPinned}} {
			b.Run(dir.name+"/"+raw.name, func(b *testing.B) {
				b.SetBytes(copyBytes)
				// One call of b.N copies; raw-ns/op leaves out its setup.
				dt, err := raw.fn(d, copyBytes, dir.toDevice, b.N)
				require.NoError(b, err)
				b.ReportMetric(float64(dt.Nanoseconds())/float64(b.N), "raw-ns/op")
			})
		}
	}
}

// BenchmarkNow is the cost of one device clock reading.
func BenchmarkNow(b *testing.B) {
	d := devices(b)[0]
	for b.Loop() {
		_, err := d.Now()
		require.NoError(b, err)
	}
}
