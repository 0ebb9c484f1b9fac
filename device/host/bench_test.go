package host

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/require"
)

func benchDevice(b *testing.B) (*Device, device.Queue) {
	d := newDevice(0)
	q, err := d.NewQueue()
	require.NoError(b, err)
	b.Cleanup(func() { q.Release() })
	return d, q
}

func BenchmarkAllocFree4K(b *testing.B) {
	d, _ := benchDevice(b)
	b.ReportAllocs()
	for b.Loop() {
		buf, err := d.Alloc(4096)
		require.NoError(b, err)
		require.NoError(b, d.Free(buf.Ptr))
	}
}

func benchCopyIn(b *testing.B, n int) {
	d, q := benchDevice(b)
	buf, _ := d.Alloc(n)
	defer d.Free(buf.Ptr)
	src := make([]byte, n)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, q.CopyIn(buf.Ptr, src))
		require.NoError(b, q.Sync())
	}
}

// CopyIn+Sync of 4 KiB: inline on an idle queue.
func BenchmarkCopyIn4K(b *testing.B) { benchCopyIn(b, 4096) }

// CopyIn+Sync of 16 MiB: through the queue's goroutine.
func BenchmarkCopyIn16M(b *testing.B) { benchCopyIn(b, 16<<20) }

func BenchmarkLaunchEmptySync(b *testing.B) {
	d, q := benchDevice(b)
	f, _ := d.Load(testEmpty)
	s := device.Shape{Size: [3]int{1}}
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, q.Launch(f, s, nil))
		require.NoError(b, q.Sync())
	}
}

// Launches queued behind an asynchronous copy go through the queue's
// goroutine: the cost of the asynchronous path.
func BenchmarkLaunchEmptyQueued(b *testing.B) {
	d, q := benchDevice(b)
	f, _ := d.Load(testEmpty)
	buf, _ := d.Alloc(1 << 20)
	defer d.Free(buf.Ptr)
	src := make([]byte, 1<<20)
	s := device.Shape{Size: [3]int{1}}
	const batch = 64
	b.ReportAllocs()
	for b.Loop() {
		q.CopyIn(buf.Ptr, src)
		for range batch {
			require.NoError(b, q.Launch(f, s, nil))
		}
		require.NoError(b, q.Sync())
	}
}

func BenchmarkRecordWait(b *testing.B) {
	_, q := benchDevice(b)
	b.ReportAllocs()
	for b.Loop() {
		e, err := q.Record()
		require.NoError(b, err)
		require.NoError(b, e.Wait())
	}
}

func BenchmarkResolve(b *testing.B) {
	d, _ := benchDevice(b)
	var last device.Buffer
	for range 1000 {
		last, _ = d.Alloc(4096)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, err := d.Resolve(last.Ptr+100, 100)
		require.NoError(b, err)
	}
}
