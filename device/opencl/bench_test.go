package opencl_test

import (
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/rawbench"
	"github.com/gompt/gompt/kernels"
)

// BenchmarkEmptyKernel compares one empty-kernel launch and sync through
// the plugin with the same work through the binding alone (enqueue of an
// empty kernel and clFinish).
func BenchmarkEmptyKernel(b *testing.B) {
	d := devices(b)[0]
	b.Run("plugin", func(b *testing.B) {
		f, err := d.Load(kernels.Empty)
		if err != nil {
			b.Fatal(err)
		}
		q, err := d.NewQueue()
		if err != nil {
			b.Fatal(err)
		}
		defer q.Release()
		shape := device.Shape{Size: [3]int{1}}
		args := []device.Arg{{Bits: 1}}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if err := q.Launch(f, shape, args); err != nil {
				b.Fatal(err)
			}
			if err := q.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		if _, err := rawbench.CLEmptyKernel(d, 1); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		dt, err := rawbench.CLEmptyKernel(d, b.N)
		if err != nil {
			b.Fatal(err)
		}
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
			if err != nil {
				b.Fatal(err)
			}
			defer q.Release()
			buf, err := d.Alloc(copyBytes)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Free(buf.Ptr)
			host := make([]byte, copyBytes)
			if err := q.CopyIn(buf.Ptr, host); err != nil { // first touch
				b.Fatal(err)
			}
			if err := q.Sync(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(copyBytes)
			b.ResetTimer()
			for b.Loop() {
				if dir.toDevice {
					err = q.CopyIn(buf.Ptr, host)
				} else {
					err = q.CopyOut(host, buf.Ptr)
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := q.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, raw := range []struct {
			name string
			fn   func(device.Device, int, bool, int) (time.Duration, error)
		}{{"raw", rawbench.CLCopy}, {"raw-pinned", rawbench.CLCopyPinned}} {
			b.Run(dir.name+"/"+raw.name, func(b *testing.B) {
				b.SetBytes(copyBytes)
				// One call of b.N copies; raw-ns/op leaves out its setup.
				dt, err := raw.fn(d, copyBytes, dir.toDevice, b.N)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(dt.Nanoseconds())/float64(b.N), "raw-ns/op")
			})
		}
	}
}

// BenchmarkNow is the cost of one device clock reading.
func BenchmarkNow(b *testing.B) {
	d := devices(b)[0]
	for b.Loop() {
		if _, err := d.Now(); err != nil {
			b.Fatal(err)
		}
	}
}
