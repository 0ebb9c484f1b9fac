package devicetest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
)

func (s *suite) testAlloc(t *testing.T) {
	info := s.dev.Info()
	mi, hasMI := s.dev.(device.MemInfo)
	var b0 int64
	var n0 int
	if hasMI {
		b0, n0 = mi.MemInUse()
	}
	q := newQueue(t, s.dev)
	sizes := []int{1, 3, 4096, 1<<20 + 7}
	bufs := make([]device.Buffer, len(sizes))
	var total int64
	for i, n := range sizes {
		b, err := s.dev.Alloc(n)
		if err != nil {
			t.Fatalf("Alloc(%d): %v", n, err)
		}
		if b.Ptr == 0 || b.Size != n {
			t.Fatalf("Alloc(%d) = %v, %d bytes; want a non-zero pointer to %d bytes", n, b.Ptr, b.Size, n)
		}
		for _, o := range bufs[:i] {
			if b.Ptr < o.Ptr+device.DevicePtr(o.Size) && o.Ptr < b.Ptr+device.DevicePtr(b.Size) {
				t.Errorf("Alloc(%d) = [%v,+%d) overlaps live [%v,+%d)", n, b.Ptr, b.Size, o.Ptr, o.Size)
			}
		}
		bufs[i] = b
		total += int64(n)
	}
	if hasMI {
		if b, n := mi.MemInUse(); b != b0+total || n != n0+len(sizes) {
			t.Errorf("MemInUse with %d more allocations of %d bytes = %d bytes in %d, want %d in %d",
				len(sizes), total, b, n, b0+total, n0+len(sizes))
		}
	}
	// Every byte of every allocation is usable.
	for i, b := range bufs {
		in := pattern(b.Size, uint64(i))
		out := make([]byte, b.Size)
		if err := q.CopyIn(b.Ptr, in); err != nil {
			t.Fatalf("CopyIn(%v, %d bytes): %v", b.Ptr, b.Size, err)
		}
		if err := q.CopyOut(out, b.Ptr); err != nil {
			t.Fatalf("CopyOut(%d bytes, %v): %v", b.Size, b.Ptr, err)
		}
		if err := q.Sync(); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		sameBytes(t, fmt.Sprintf("allocation of %d bytes read back", b.Size), out, in)
	}

	wantCode(t, "Alloc(0)", allocErr(s.dev, 0), device.CodeInvalidArgument)
	wantCode(t, "Alloc(-1)", allocErr(s.dev, -1), device.CodeInvalidArgument)
	if info.MaxAlloc < math.MaxInt {
		wantCode(t, fmt.Sprintf("Alloc(MaxAlloc+1 = %d)", info.MaxAlloc+1), allocErr(s.dev, int(info.MaxAlloc+1)), device.CodeInvalidArgument)
	}
	wantCode(t, "Free(0)", s.dev.Free(0), device.CodeInvalidArgument)
	wantCode(t, "Free of an interior pointer never allocated", s.dev.Free(bufs[2].Ptr+1), device.CodeInvalidArgument)
	for _, b := range bufs {
		if err := s.dev.Free(b.Ptr); err != nil {
			t.Errorf("Free(%v): %v", b.Ptr, err)
		}
	}
	wantCode(t, "second Free of a buffer", s.dev.Free(bufs[0].Ptr), device.CodeInvalidArgument)
	if hasMI {
		if b, n := mi.MemInUse(); b != b0 || n != n0 {
			t.Errorf("MemInUse after freeing = %d bytes in %d, want %d in %d", b, n, b0, n0)
		}
	}
}

func allocErr(dev device.Device, n int) error {
	b, err := dev.Alloc(n)
	if err == nil {
		dev.Free(b.Ptr)
	}
	return err
}

func (s *suite) testCopy(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4095, 4096, 1<<20 + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			q := newQueue(t, s.dev)
			const offA, offB, pad = 13, 7, 29
			sa, sb := n+offA+pad, n+offB+pad
			a, b := alloc(t, s.dev, sa), alloc(t, s.dev, sb)
			bgA, bgB := pattern(sa, 1), pattern(sb, 2)
			data := pattern(n, 3)
			must(t, "CopyIn background A", q.CopyIn(a, bgA))
			must(t, "CopyIn background B", q.CopyIn(b, bgB))
			must(t, "CopyIn at offset", q.CopyIn(a+offA, data))
			must(t, "Copy device to device", q.Copy(b+offB, a+offA, n))
			gotA, gotB, part := make([]byte, sa), make([]byte, sb), make([]byte, n)
			must(t, "CopyOut A", q.CopyOut(gotA, a))
			must(t, "CopyOut B", q.CopyOut(gotB, b))
			must(t, "CopyOut at offset", q.CopyOut(part, b+offB))
			must(t, "Sync", q.Sync())
			wantA, wantB := slices.Clone(bgA), slices.Clone(bgB)
			copy(wantA[offA:], data)
			copy(wantB[offB:], data)
			sameBytes(t, "buffer A after CopyIn at offset", gotA, wantA)
			sameBytes(t, "buffer B after Copy at offset", gotB, wantB)
			sameBytes(t, "CopyOut at offset", part, data)
		})
	}
	t.Run("zero length", func(t *testing.T) {
		q := newQueue(t, s.dev)
		p := alloc(t, s.dev, 16)
		must(t, "CopyIn of nothing", q.CopyIn(p, nil))
		must(t, "CopyOut of nothing", q.CopyOut([]byte{}, p))
		must(t, "Copy of nothing", q.Copy(p, p+8, 0))
		must(t, "Sync", q.Sync())
	})
	t.Run("overlap", func(t *testing.T) { TestOverlap(t, s.dev) })
}

// TestOverlap checks Queue.Copy within one allocation: a copy onto itself
// (src == dst) succeeds and leaves the bytes alone, and overlapping ranges
// copy as memmove would (Go's copy), forwards and backwards, a distance
// apart from 1 byte (the plugin may need a temporary buffer) to most of
// the range (a few pieces), queued without a Sync in between and read back
// once; memory in use is back to its value afterwards. TestDevice runs it
// under Copy/overlap; a plugin whose kernels cannot run (a fake driver)
// can call it alone.
func TestOverlap(t *testing.T, dev device.Device) {
	t.Helper()
	mi, hasMI := dev.(device.MemInfo)
	var b0 int64
	var n0 int
	if hasMI {
		b0, n0 = mi.MemInUse()
	}
	const size = 3<<16 + 11
	q := newQueue(t, dev)
	p := alloc(t, dev, size)
	model := pattern(size, 4)
	must(t, "CopyIn", q.CopyIn(p, model))
	model = slices.Clone(model)
	cases := []struct{ dst, src, n int }{
		{0, 0, size},                     // onto itself, whole buffer
		{17, 17, 1000},                   // onto itself, inside
		{1, 0, 4096},                     // forwards by one byte
		{100, 101, 65536 + 3},            // backwards by one byte
		{5000, 1000, 9000},               // forwards, a few pieces
		{3, 4003, 10000},                 // backwards, a few pieces
		{0, 7, 8},                        // backwards, 2 pieces, one short
		{64, 0, 1<<16 + 1},               // forwards by 64: through a temporary
		{size - 3000, size - 3001, 3000}, // to the very end
		{2, 1, 1},                        // adjacent, no overlap
	}
	for _, c := range cases {
		must(t, fmt.Sprintf("Copy(p+%d, p+%d, %d)", c.dst, c.src, c.n), q.Copy(p+device.DevicePtr(c.dst), p+device.DevicePtr(c.src), c.n))
		copy(model[c.dst:c.dst+c.n], model[c.src:c.src+c.n])
	}
	got := make([]byte, size)
	must(t, "CopyOut", q.CopyOut(got, p))
	must(t, "Sync", q.Sync())
	sameBytes(t, "buffer after overlapping copies (model: Go's copy)", got, model)
	// One case at a time, each read back at once, to name the one at fault.
	if t.Failed() {
		for _, c := range cases {
			before := make([]byte, size)
			must(t, "CopyOut", q.CopyOut(before, p))
			must(t, "Copy", q.Copy(p+device.DevicePtr(c.dst), p+device.DevicePtr(c.src), c.n))
			must(t, "CopyOut", q.CopyOut(got, p))
			must(t, "Sync", q.Sync())
			copy(before[c.dst:c.dst+c.n], before[c.src:c.src+c.n])
			sameBytes(t, fmt.Sprintf("Copy(p+%d, p+%d, %d)", c.dst, c.src, c.n), got, before)
		}
	}
	if hasMI {
		if b, n := mi.MemInUse(); b != b0+size || n != n0+1 {
			t.Errorf("MemInUse after overlapping copies = %d bytes in %d, want %d in %d (a temporary buffer left behind?)", b, n, b0+size, n0+1)
		}
	}
}
