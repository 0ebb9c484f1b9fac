package host

import (
	"testing"

	"github.com/gompt/gompt/device"
)

func benchDevice(b *testing.B) (*Device, device.Queue) {
	d := newDevice(0)
	q, err := d.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Release() })
	return d, q
}

func BenchmarkAllocFree4K(b *testing.B) {
	d, _ := benchDevice(b)
	b.ReportAllocs()
	for b.Loop() {
		buf, err := d.Alloc(4096)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Free(buf.Ptr); err != nil {
			b.Fatal(err)
		}
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
		if err := q.CopyIn(buf.Ptr, src); err != nil {
			b.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			b.Fatal(err)
		}
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
		if err := q.Launch(f, s, nil); err != nil {
			b.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			b.Fatal(err)
		}
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
			if err := q.Launch(f, s, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := q.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordWait(b *testing.B) {
	_, q := benchDevice(b)
	b.ReportAllocs()
	for b.Loop() {
		e, err := q.Record()
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Wait(); err != nil {
			b.Fatal(err)
		}
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
		if _, err := d.Resolve(last.Ptr+100, 100); err != nil {
			b.Fatal(err)
		}
	}
}
