// Package devicetest is the conformance suite of device plugins, in the
// manner of testing/fstest: every plugin's tests call TestDevice with a live
// device, and the host device (device/host) is the reference.
package devicetest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/hostexec"
)

// TestDevice checks that dev keeps the device.Device contract, as subtests:
//
//   - Info: the description is sane and stable, with capabilities (Caps)
//     and, from Describe where the device implements device.Describer,
//     where its times come from; the clock is monotonic.
//   - Alloc: allocations of several sizes are distinct, usable and
//     accounted; bad sizes, double frees and frees of pointers never
//     allocated give CodeInvalidArgument.
//   - Copy: host to device, device to host and device to device, at offsets
//     inside buffers, of sizes 0 to 1 MiB+7, verified byte for byte,
//     including the bytes around the range; copies within one allocation
//     onto themselves and over overlapping ranges, as memmove (TestOverlap).
//   - Order: long chains of dependent copies and launches on one queue with
//     no sync in between give the result of running them in order.
//   - Events: event times are non-decreasing in queue order and lie between
//     clock readings taken before the work and after waiting for it.
//   - Kernels: each kernel loads or gives CodeInvalidBinary; each one with a
//     Sample runs on dev and, as its Go image, on host copies of the same
//     buffers (internal/hostexec, the Sample's shape), and every buffer is
//     compared: float elements (per Param.Elem) within the Sample's relative
//     tolerance, magnitudes below 1 counted as 1, other bytes exactly; a
//     kernel with no image gives CodeInvalidBinary, and one that needs
//     what Info.Caps lacks (Kernel.Needs) a *device.NeedError naming it,
//     the need's position and what the device lacks, before its images are
//     looked at; launches with the wrong number of arguments or bad shapes
//     give CodeInvalidArgument and leave the queue usable.
//   - Profile: if dev's queues implement device.Profiler, a small and a
//     large copy in, a copy on the device, a launch and a copy out timed
//     with profiling on each report 0 < begin <= end within clock
//     readings taken before the work and after the Sync, in queue order
//     (each begin not before the previous end; on a device whose times
//     bracket operations, Info.BracketTimes, begins and ends each in
//     order),
//     with a native record of a kind the plugin registered
//     (device.RegisterNative) whose Start and End are the times and which
//     passes its plugin's check (device.NativeType.Check), a type name,
//     and teams > 0 for the launch only; Times gives the same answer twice (and, for a device.ReadyTiming
//     that says Ready right after the operation was enqueued, already
//     then, before the Sync); with profiling off, Last does not change.
//   - Concurrent: 16 goroutines, each with its own queue, allocate, copy,
//     launch, verify and free at once.
//   - NoLeak: if dev implements device.MemInfo, memory in use is back to its
//     value before the suite.
//
// A kernel whose results depend on the number of teams (one partial result
// per team) must fix Shape.Teams in its Sample. The suite must have the
// device to itself: other users of dev while it runs would upset the memory
// accounting checks.
func TestDevice(t *testing.T, dev device.Device, kernels ...*device.Kernel) {
	t.Helper()
	mi, hasMI := dev.(device.MemInfo)
	var startBytes int64
	var startN int
	if hasMI {
		startBytes, startN = mi.MemInUse()
	}
	s := &suite{dev: dev, kernels: kernels}
	t.Run("Info", s.testInfo)
	t.Run("Alloc", s.testAlloc)
	t.Run("Copy", s.testCopy)
	t.Run("Kernels", s.testKernels) // finds the runnable kernels the later tests use
	t.Run("Order", s.testOrder)
	t.Run("Events", s.testEvents)
	t.Run("Profile", s.testProfile)
	t.Run("Concurrent", s.testConcurrent)
	t.Run("WaitEvent", s.testWaitEvent)
	if hasMI {
		t.Run("NoLeak", func(t *testing.T) {
			b, n := mi.MemInUse()
			if b != startBytes || n != startN {
				t.Errorf("MemInUse after the suite = %d bytes in %d allocations, want %d bytes in %d as before",
					b, n, startBytes, startN)
			}
		})
	}
}

type suite struct {
	dev     device.Device
	kernels []*device.Kernel

	mu       sync.Mutex
	runnable []runnable // kernels with a Sample that load and pass on dev

	brackets bool // the device's times bracket operations (Info.BracketTimes, from Describe)
}

// runnable is a kernel that loads on the device, with a sample problem and
// the result of its Go image.
type runnable struct {
	k   *device.Kernel
	f   device.Function
	smp device.Sample // the largest sample, for Order and Events

	small device.Sample // a small sample and its Go image's result, for Concurrent
	want  [][]byte
}

// newQueue returns a queue released when the test ends.
func newQueue(t *testing.T, dev device.Device) device.Queue {
	t.Helper()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	return q
}

// alloc allocates n bytes, freed when the test ends.
func alloc(t *testing.T, dev device.Device, n int) device.DevicePtr {
	t.Helper()
	b, err := dev.Alloc(n)
	if err != nil {
		t.Fatalf("Alloc(%d): %v", n, err)
	}
	if b.Ptr == 0 || b.Size != n {
		t.Fatalf("Alloc(%d) = %v, %d bytes; want a non-zero pointer to %d bytes", n, b.Ptr, b.Size, n)
	}
	t.Cleanup(func() {
		if err := dev.Free(b.Ptr); err != nil {
			t.Errorf("Free(%v): %v", b.Ptr, err)
		}
	})
	return b.Ptr
}

// pattern returns n deterministic pseudo-random bytes.
func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// sameBytes reports the first difference between got and want.
func sameBytes(t *testing.T, what string, got, want []byte) bool {
	t.Helper()
	if bytes.Equal(got, want) {
		return true
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d bytes, want %d", what, len(got), len(want))
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: byte %d of %d is %#02x, want %#02x", what, i, len(got), got[i], want[i])
			break
		}
	}
	return false
}

func wantCode(t *testing.T, what string, err error, code device.Code) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, code)
	} else if c := device.CodeOf(err); c != code {
		t.Errorf("%s: %v (code %v), want code %v", what, err, c, code)
	}
}

func (s *suite) testInfo(t *testing.T) {
	info := s.dev.Info()
	if info.Name == "" || info.Backend == "" {
		t.Errorf("Info: Name %q, Backend %q: both must be set", info.Name, info.Backend)
	}
	switch info.Type {
	case "", "gpu", "cpu", "accelerator":
	default:
		t.Errorf("Info.Type = %q, want gpu, cpu, accelerator or empty", info.Type)
	}
	if info.MaxAlloc == 0 {
		t.Errorf("Info.MaxAlloc = 0, want the largest allocation")
	}
	if info.GlobalMem != 0 && info.MaxAlloc > info.GlobalMem {
		t.Errorf("Info.MaxAlloc %d > GlobalMem %d", info.MaxAlloc, info.GlobalMem)
	}
	if info.ComputeUnits <= 0 || info.MaxThreadsPerTeam <= 0 {
		t.Errorf("Info: ComputeUnits %d, MaxThreadsPerTeam %d: want both > 0", info.ComputeUnits, info.MaxThreadsPerTeam)
	}
	if info.MaxTeams < 0 || info.ClockMHz < 0 || info.TimerResolutionNS < 0 {
		t.Errorf("Info: MaxTeams %d, ClockMHz %d, TimerResolutionNS %v: want none negative", info.MaxTeams, info.ClockMHz, info.TimerResolutionNS)
	}
	for i, a := range info.Extra {
		if a.Key == "" {
			t.Errorf("Info.Extra[%d] has an empty key (value %q)", i, a.Value)
		}
	}
	if again := s.dev.Info(); !reflect.DeepEqual(info, again) {
		t.Errorf("Info changed between calls:\n%+v\n%+v", info, again)
	}
	c := info.Caps
	if c.TeamSize.N <= 0 || c.TeamSize.N > int64(info.MaxThreadsPerTeam) || c.LocalMem.N < 0 {
		t.Errorf("Info.Caps: TeamSize %d, LocalMem %d: want 0 < TeamSize <= MaxThreadsPerTeam %d, LocalMem >= 0",
			c.TeamSize.N, c.LocalMem.N, info.MaxThreadsPerTeam)
	}
	for _, f := range []device.Feature{c.FP64, c.Int64Atomics} {
		if f.Name == "" {
			t.Errorf("Info.Caps: a feature has no name (%+v): messages name what a device lacks", c)
		}
	}
	if ds, ok := s.dev.(device.Describer); ok {
		desc, err := ds.Describe()
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		if desc.TimeSource == "" || desc.Name != info.Name || !reflect.DeepEqual(desc.Caps, info.Caps) {
			t.Errorf("Describe: TimeSource %q, Name %q, Caps %+v; want a time source and Info's name and capabilities (%q, %+v)",
				desc.TimeSource, desc.Name, desc.Caps, info.Name, info.Caps)
		}
		s.brackets = desc.BracketTimes
	} else {
		if info.TimeSource == "" {
			t.Errorf("Info.TimeSource is empty and the device does not implement device.Describer")
		}
		s.brackets = info.BracketTimes
	}
	t0, err := s.dev.Now()
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	for range 100 {
		t1, err := s.dev.Now()
		if err != nil || t1 < t0 {
			t.Fatalf("Now went from %d to %d (err %v): want monotonic", t0, t1, err)
		}
		t0 = t1
	}
}

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

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// testOrder enqueues a long chain of dependent operations without syncing
// and compares the result with the same chain applied to host memory.
func (s *suite) testOrder(t *testing.T) {
	t.Run("copies", func(t *testing.T) {
		q := newQueue(t, s.dev)
		const n = 1<<20 + 5 // whole-buffer copies large enough to be asynchronous anywhere
		x, y := alloc(t, s.dev, n), alloc(t, s.dev, n)
		hx, hy := pattern(n, 10), make([]byte, n)
		must(t, "CopyIn", q.CopyIn(x, slices.Clone(hx))) // hx is the model; the copy must stay unmodified
		r := rand.New(rand.NewPCG(11, 12))
		for i := range 64 {
			// A small write into x, x copied whole to y, a piece of y copied
			// back into x at another place: each step reads the last.
			k := 1 + r.IntN(5000)
			off := r.IntN(n - k)
			chunk := pattern(k, uint64(100+i))
			must(t, "CopyIn", q.CopyIn(x+device.DevicePtr(off), chunk))
			copy(hx[off:], chunk)
			must(t, "Copy x to y", q.Copy(y, x, n))
			copy(hy, hx)
			src, dst := r.IntN(n-k), r.IntN(n-k)
			must(t, "Copy y to x", q.Copy(x+device.DevicePtr(dst), y+device.DevicePtr(src), k))
			copy(hx[dst:], hy[src:src+k])
		}
		gx, gy := make([]byte, n), make([]byte, n)
		must(t, "CopyOut", q.CopyOut(gx, x))
		must(t, "CopyOut", q.CopyOut(gy, y))
		must(t, "Sync", q.Sync())
		sameBytes(t, "x after the chain", gx, hx)
		sameBytes(t, "y after the chain", gy, hy)
	})
	for _, rk := range s.runnable {
		t.Run("launches/"+rk.k.Name, func(t *testing.T) {
			const rounds = 3
			q := newQueue(t, s.dev)
			ptrs, args := s.upload(t, q, rk.k, rk.smp)
			scratch := make([]device.DevicePtr, len(ptrs))
			for i, b := range rk.smp.Bufs {
				if ptrs[i] != 0 {
					scratch[i] = alloc(t, s.dev, max(len(b), 1))
				}
			}
			for range rounds {
				must(t, "Launch", q.Launch(rk.f, rk.smp.Shape, args))
				// Bounce every buffer through scratch: the next launch
				// must see the result of the copies after this one.
				for i, b := range rk.smp.Bufs {
					if ptrs[i] != 0 && len(b) > 0 {
						must(t, "Copy to scratch", q.Copy(scratch[i], ptrs[i], len(b)))
						must(t, "Copy from scratch", q.Copy(ptrs[i], scratch[i], len(b)))
					}
				}
			}
			got := download(t, q, rk.smp, ptrs)
			want := reference(rk.k, rk.smp, rounds)
			compareBufs(t, rk.k, rk.smp, got, want, rounds)
		})
	}
}

// foreignEvent is an event of no plugin: a Waiter must decline it.
type foreignEvent struct{}

func (foreignEvent) Wait() error          { return nil }
func (foreignEvent) Time() (int64, error) { return 0, nil }

// TestWaitEvent runs TestDevice's WaitEvent check alone on dev, for a
// plugin whose kernels cannot run (a fake driver): a queue that
// implements device.Waiter declines an event of no plugin, and its copy
// after WaitEvent of another queue's event reads what that queue wrote.
// It skips where the queues are no Waiter.
func TestWaitEvent(t *testing.T, dev device.Device) {
	t.Helper()
	(&suite{dev: dev}).testWaitEvent(t)
}

// testWaitEvent: a queue that implements device.Waiter runs its work
// after another queue's event, without its caller waiting: a small copy
// out of a buffer that a large copy on another queue is still filling
// reads the filled bytes.
func (s *suite) testWaitEvent(t *testing.T) {
	q1 := newQueue(t, s.dev)
	w, ok := newQueue(t, s.dev).(device.Waiter)
	if !ok {
		t.Skip("the queues do not implement device.Waiter")
	}
	q2 := w.(device.Queue)
	if ok, err := w.WaitEvent(foreignEvent{}); ok || err != nil {
		t.Fatalf("WaitEvent(an event of no plugin) = %v, %v; want false, nil", ok, err)
	}
	const n = 32 << 20
	a := alloc(t, s.dev, n)
	src := pattern(n, 30)
	for round := range 3 {
		must(t, "CopyIn", q1.CopyIn(a, src))
		ev, err := q1.Record()
		must(t, "Record", err)
		ok, err := w.WaitEvent(ev)
		if !ok || err != nil {
			t.Fatalf("WaitEvent(an event of another queue of the device) = %v, %v; want true, nil", ok, err)
		}
		tail := make([]byte, 64)
		must(t, "CopyOut", q2.CopyOut(tail, a+device.DevicePtr(n-len(tail))))
		must(t, "Sync", q2.Sync())
		if !bytes.Equal(tail, src[n-len(tail):]) {
			t.Fatalf("round %d: the copy out after WaitEvent read bytes the other queue had not yet written", round)
		}
		must(t, "Sync", q1.Sync())
		src = pattern(n, uint64(31+round))
	}
}

func (s *suite) testEvents(t *testing.T) {
	q := newQueue(t, s.dev)
	const n = 4 << 20
	a, b := alloc(t, s.dev, n), alloc(t, s.dev, n)
	src := pattern(n, 20)
	t0, err := s.dev.Now()
	must(t, "Now", err)
	var events []device.Event
	for i := range 8 {
		must(t, "CopyIn", q.CopyIn(a, src))
		must(t, "Copy", q.Copy(b, a, n))
		if i%2 == 1 && len(s.runnable) > 0 {
			rk := s.runnable[0]
			_, args := s.upload(t, q, rk.k, rk.smp)
			must(t, "Launch", q.Launch(rk.f, rk.smp.Shape, args))
		}
		e, err := q.Record()
		must(t, "Record", err)
		events = append(events, e)
	}
	last := events[len(events)-1]
	must(t, "Wait", last.Wait())
	t1, err := s.dev.Now()
	must(t, "Now", err)
	prev := t0
	for i, e := range events {
		must(t, "Wait", e.Wait())
		et, err := e.Time()
		must(t, "Time", err)
		if et < prev {
			t.Errorf("event %d time %d is before %d (the previous event, or Now before the work)", i, et, prev)
		}
		if et > t1 {
			t.Errorf("event %d time %d is after Now %d read after waiting for the last event", i, et, t1)
		}
		if again, err := e.Time(); err != nil || again != et {
			t.Errorf("event %d: Time gave %d, then %d (err %v)", i, et, again, err)
		}
		prev = et
	}
	// An event recorded on an idle queue.
	must(t, "Sync", q.Sync())
	t2, _ := s.dev.Now()
	e, err := q.Record()
	must(t, "Record", err)
	et, err := e.Time()
	must(t, "Time", err)
	t3, _ := s.dev.Now()
	if et < t2 || et > t3 || et < prev {
		t.Errorf("event on an idle queue at %d, want within [%d, %d] and not before the previous event %d", et, t2, t3, prev)
	}
}

func (s *suite) testProfile(t *testing.T) {
	q := newQueue(t, s.dev)
	p, ok := q.(device.Profiler)
	if !ok {
		t.Skipf("queue %T does not implement device.Profiler", q)
	}
	const n = 1 << 20 // above a host queue's inline limit: the large copies are queued
	a, b := alloc(t, s.dev, n), alloc(t, s.dev, n)
	src, got := pattern(n, 30), make([]byte, n)
	p.Profile(true)
	t0, err := s.dev.Now()
	must(t, "Now", err)
	type timed struct {
		what   string
		launch bool
		tm     device.Timing
	}
	var ops []timed
	step := func(what string, launch bool, err error) {
		t.Helper()
		must(t, what, err)
		tm := p.Last()
		if tm == nil {
			t.Fatalf("Last after %s with profiling on = nil", what)
		}
		if r, ok := tm.(device.ReadyTiming); ok && r.Ready() {
			// Ready: the operation is over, so it ended before now.
			now, err := s.dev.Now()
			must(t, "Now", err)
			begin, end, _, err := tm.Times()
			must(t, what+" Times when Ready", err)
			if begin <= 0 || end < begin || end > now {
				t.Errorf("%s: Ready, but Times = [%d, %d]; want 0 < begin <= end <= Now %d read after Ready", what, begin, end, now)
			}
		}
		ops = append(ops, timed{what, launch, tm})
	}
	step("small CopyIn", false, q.CopyIn(a, src[:64])) // a host queue runs it inline: Ready
	step("CopyIn", false, q.CopyIn(a, src))
	step("Copy", false, q.Copy(b, a, n))
	if len(s.runnable) > 0 {
		rk := s.runnable[0]
		_, args := s.upload(t, q, rk.k, rk.smp)
		step("Launch "+rk.k.Name, true, q.Launch(rk.f, rk.smp.Shape, args))
	}
	step("CopyOut", false, q.CopyOut(got, b))
	must(t, "Sync", q.Sync())
	t1, err := s.dev.Now()
	must(t, "Now", err)
	sameBytes(t, "copied out", got, src)
	prev, prevBegin := t0, t0
	for _, o := range ops {
		begin, end, nat, err := o.tm.Times()
		must(t, o.what+" Times", err)
		switch {
		case s.brackets:
			// Host readings that bracket each operation: begins and ends
			// each in queue order, within the readings around the work.
			if begin <= 0 || end < begin || begin < prevBegin || end < prev || end > t1 {
				t.Errorf("%s: [%d, %d] (bracketing times), want 0 < begin <= end, begin not before %d (Now before the work, or the previous operation's begin), end not before %d (the previous operation's end) nor after Now %d after the Sync",
					o.what, begin, end, prevBegin, prev, t1)
			}
		case begin <= 0 || end < begin || begin < prev || end > t1:
			t.Errorf("%s: [%d, %d], want 0 < begin <= end, begin not before %d (Now before the work, or the previous operation's end), end not after Now %d after the Sync",
				o.what, begin, end, prev, t1)
		}
		prev, prevBegin = max(prev, end), max(prevBegin, begin)
		if why := nativeAgrees(nat, begin, end); why != "" || nat.Type == "" {
			t.Errorf("%s: native record %+v does not agree with the times [%d, %d] for its kind (%s), or has no type", o.what, nat, begin, end, why)
		}
		if (nat.Teams > 0) != o.launch {
			t.Errorf("%s: native record reports %d teams; want > 0 for a launch, 0 for a copy", o.what, nat.Teams)
		}
		b2, e2, nat2, err := o.tm.Times()
		if err != nil || b2 != begin || e2 != end || nat2 != nat {
			t.Errorf("%s: second Times = %d, %d, %+v, %v; want the first's", o.what, b2, e2, nat2, err)
		}
	}
	last := p.Last()
	p.Profile(false)
	must(t, "CopyIn", q.CopyIn(a, src))
	must(t, "Sync", q.Sync())
	if p.Last() != last {
		t.Errorf("Last changed after an operation with profiling off")
	}
}

// nativeAgrees says why native record n of an operation timed [begin,
// end] is wrong, or "": its kind must be registered (device.NativeTypeOf),
// its Start and End fields the times, and its plugin's own check
// (NativeType.Check) must pass.
func nativeAgrees(n device.Native, begin, end int64) string {
	nt, ok := device.NativeTypeOf(n.Kind)
	if !ok {
		return fmt.Sprintf("kind %d is not registered", n.Kind)
	}
	b := n.Bytes()
	if len(b) != nt.Size {
		return fmt.Sprintf("%d bytes, want %d (%v)", len(b), nt.Size, nt)
	}
	if s, _ := nt.Field(b, "Start"); int64(s) != begin {
		return fmt.Sprintf("Start %d", int64(s))
	}
	if e, _ := nt.Field(b, "End"); int64(e) != end {
		return fmt.Sprintf("End %d", int64(e))
	}
	if err := nt.Check(n); err != nil {
		return err.Error()
	}
	return ""
}

// upload allocates the sample's buffers (freed when the test ends), copies
// their contents in, and returns the pointers (0 for scalars) and the launch
// arguments.
func (s *suite) upload(t *testing.T, q device.Queue, k *device.Kernel, smp device.Sample) ([]device.DevicePtr, []device.Arg) {
	t.Helper()
	ptrs := make([]device.DevicePtr, len(k.Params))
	args := make([]device.Arg, len(k.Params))
	copy(args, smp.Args)
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer {
			continue
		}
		var b []byte
		if i < len(smp.Bufs) {
			b = smp.Bufs[i]
		}
		ptrs[i] = alloc(t, s.dev, max(len(b), 1))
		args[i] = device.Arg{Ptr: ptrs[i]}
		must(t, "CopyIn "+p.Name, q.CopyIn(ptrs[i], b))
	}
	return ptrs, args
}

// download copies the sample's buffers out and syncs.
func download(t *testing.T, q device.Queue, smp device.Sample, ptrs []device.DevicePtr) [][]byte {
	t.Helper()
	got := make([][]byte, len(ptrs))
	for i, p := range ptrs {
		if p != 0 && i < len(smp.Bufs) {
			got[i] = make([]byte, len(smp.Bufs[i]))
			must(t, "CopyOut", q.CopyOut(got[i], p))
		}
	}
	must(t, "Sync", q.Sync())
	return got
}

// reference runs k's Go image rounds times on copies of the sample's
// buffers.
func reference(k *device.Kernel, smp device.Sample, rounds int) [][]byte {
	ha := &device.HostArgs{Bufs: make([][]byte, len(k.Params)), Args: make([]device.Arg, len(k.Params)), Kernel: k}
	copy(ha.Args, smp.Args)
	for i, p := range k.Params {
		if p.Kind == device.ParamBuffer && i < len(smp.Bufs) {
			ha.Bufs[i] = slices.Clone(smp.Bufs[i])
			if ha.Bufs[i] == nil {
				ha.Bufs[i] = []byte{}
			}
		}
	}
	for range rounds {
		hostexec.Default().Run(k.Host(), ha, smp.Shape)
	}
	return ha.Bufs
}

// compareBufs compares every buffer of a run with the reference.
func compareBufs(t *testing.T, k *device.Kernel, smp device.Sample, got, want [][]byte, rounds int) {
	t.Helper()
	tol := smp.Tol * float64(rounds)
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer || i >= len(got) {
			continue
		}
		what := fmt.Sprintf("kernel %s buffer %d (%s)", k.Name, i, p.Name)
		g, w := got[i], want[i]
		switch p.Elem {
		case device.ParamFloat32:
			n := len(g) / 4 * 4
			gf, wf := view32(g[:n]), view32(w[:n])
			bad := 0
			for j := range gf {
				if !near(float64(gf[j]), float64(wf[j]), tol) {
					if bad < 5 {
						t.Errorf("%s: element %d = %v, want %v (tolerance %g)", what, j, gf[j], wf[j], tol)
					}
					bad++
				}
			}
			if bad > 5 {
				t.Errorf("%s: %d of %d elements differ", what, bad, len(gf))
			}
			sameBytes(t, what+" trailing bytes", g[n:], w[n:])
		case device.ParamFloat64:
			n := len(g) / 8 * 8
			gf, wf := view64(g[:n]), view64(w[:n])
			bad := 0
			for j := range gf {
				if !near(gf[j], wf[j], tol) {
					if bad < 5 {
						t.Errorf("%s: element %d = %v, want %v (tolerance %g)", what, j, gf[j], wf[j], tol)
					}
					bad++
				}
			}
			if bad > 5 {
				t.Errorf("%s: %d of %d elements differ", what, bad, len(gf))
			}
			sameBytes(t, what+" trailing bytes", g[n:], w[n:])
		default:
			sameBytes(t, what, g, w)
		}
	}
}

// near reports whether a and b agree within relative tolerance tol, with
// magnitudes below 1 counted as 1; NaNs agree with NaNs.
func near(a, b, tol float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	scale := max(math.Abs(a), math.Abs(b), 1)
	return math.Abs(a-b) <= tol*scale
}

func view32(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return f
}

func view64(b []byte) []float64 {
	f := make([]float64, len(b)/8)
	for i := range f {
		var v uint64
		for j := 7; j >= 0; j-- {
			v = v<<8 | uint64(b[8*i+j])
		}
		f[i] = math.Float64frombits(v)
	}
	return f
}

// sampleSizes are the problem sizes each kernel's Sample is run at.
var sampleSizes = []int{1, 257, 100_003}

// checkSample reports a kernel whose declaration is wrong (Kernel.Check),
// or a Sample that does not give one buffer and one argument per parameter
// (nil buffers and zero arguments where they do not apply), which the rest
// of the suite relies on, or that the runtime would refuse: a shape with
// more dimensions than the kernel's Dims, a buffer shorter than its
// parameter's Len.
func checkSample(k *device.Kernel, smp device.Sample) error {
	if err := k.Check(); err != nil {
		return err
	}
	if len(smp.Bufs) != len(k.Params) || len(smp.Args) != len(k.Params) {
		return fmt.Errorf("kernel %s: Sample has %d buffers and %d arguments; want one of each per parameter (%d: nil buffers for scalars, zero arguments for buffers)",
			k.Name, len(smp.Bufs), len(smp.Args), len(k.Params))
	}
	if err := smp.Shape.Check(); err != nil {
		return fmt.Errorf("kernel %s: Sample: %v", k.Name, err)
	}
	if dims := smp.Shape.Dims(); dims > k.IterationDims() {
		return fmt.Errorf("kernel %s: Sample shape %v uses %d dimensions; the kernel declares %d (Kernel.Dims)", k.Name, smp.Shape.Size, dims, k.IterationDims())
	}
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer {
			continue
		}
		need, err := k.NeedLen(i, smp.Shape, func(j int) uint64 { return smp.Args[j].Bits })
		if err != nil {
			return fmt.Errorf("kernel %s: Sample: parameter %s: %v", k.Name, p.Name, err)
		}
		if have := len(smp.Bufs[i]) / p.ElemSize(); have < need {
			return fmt.Errorf("kernel %s: Sample: buffer %s has %d elements; its Len %q needs %d", k.Name, p.Name, have, p.Len, need)
		}
	}
	return nil
}

func (s *suite) testKernels(t *testing.T) {
	t.Run("no image", func(t *testing.T) {
		k := &device.Kernel{Name: "devicetest_no_image", Params: []device.Param{{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
		_, err := s.dev.Load(k)
		wantCode(t, "Load of a kernel with no image", err, device.CodeInvalidBinary)
	})
	t.Run("needs", s.testNeeds)
	for _, k := range s.kernels {
		t.Run(k.Name, func(t *testing.T) {
			f, err := s.dev.Load(k)
			var ne *device.NeedError
			switch {
			case err == nil:
			case errors.As(err, &ne) && errors.Is(err, device.ErrUnsupported) && s.dev.Info().Caps.Lacks(ne.Need) != "":
				t.Skipf("Load(%s): %v", k.Name, err) // it needs what the device lacks
			case device.CodeOf(err) != device.CodeInvalidBinary:
				t.Fatalf("Load(%s): %v (code %v), want success, CodeInvalidBinary or a *device.NeedError for what Info.Caps lacks", k.Name, err, device.CodeOf(err))
			default:
				t.Skipf("Load(%s): %v", k.Name, err)
			}
			if f.Kernel() != k || f.Bytes() <= 0 {
				t.Errorf("Load(%s): Kernel() %p (want %p), Bytes() %d (want > 0)", k.Name, f.Kernel(), k, f.Bytes())
			}
			if _, ok := k.Image(f.Image()); !ok {
				t.Errorf("Load(%s) chose image %v, which the kernel does not have", k.Name, f.Image())
			}
			if f2, err := s.dev.Load(k); err != nil {
				t.Errorf("second Load(%s): %v", k.Name, err)
			} else if reflect.TypeOf(f).Comparable() && f2 != f {
				t.Errorf("second Load(%s) returned a new Function, want the cached one", k.Name)
			}
			if k.Sample == nil {
				return
			}
			if k.Host() == nil {
				t.Skipf("kernel %s has a Sample but no Go image to compare with", k.Name)
			}
			q := newQueue(t, s.dev)
			var last device.Sample
			for _, n := range sampleSizes {
				smp := k.Sample(n, int64(n))
				if err := checkSample(k, smp); err != nil {
					t.Fatal(err)
				}
				last = smp
				ptrs, args := s.upload(t, q, k, smp)
				must(t, "Launch", q.Launch(f, smp.Shape, args))
				got := download(t, q, smp, ptrs)
				compareBufs(t, k, smp, got, reference(k, smp, 1), 1)
			}
			if t.Failed() {
				return
			}
			s.badLaunches(t, q, k, f, last)
			s.mu.Lock()
			small := k.Sample(sampleSizes[1], 7)
			if err := checkSample(k, small); err != nil {
				s.mu.Unlock()
				t.Fatal(err)
			}
			s.runnable = append(s.runnable, runnable{k: k, f: f, smp: last, small: small, want: reference(k, small, 1)})
			s.mu.Unlock()
		})
	}
}

// testNeeds checks that Load refuses a kernel that needs what Info.Caps
// lacks, before it looks at the kernel's images, with a *device.NeedError
// matching ErrUnsupported that names the kernel, the need's source
// position and what the device lacks; and that one whose needs the device
// meets gets past that check (here to CodeInvalidBinary: the kernels have
// no image).
func (s *suite) testNeeds(t *testing.T) {
	c := s.dev.Info().Caps
	feature := func(f device.Feature) bool { return f.Has }
	cases := []struct {
		need    device.Need
		refused bool
	}{
		{device.Need{Kind: device.NeedLocalMem, Amount: c.LocalMem.N + 1, Use: "too much team-local memory", Pos: "needs.go:1"}, true},
		{device.Need{Kind: device.NeedTeamSize, Amount: c.TeamSize.N + 1, Use: "too large a team", Pos: "needs.go:2"}, true},
		{device.Need{Kind: device.NeedTeamSize, Amount: 1, Use: "a team of one", Pos: "needs.go:3"}, false},
		{device.Need{Kind: device.NeedFP64, Use: "float64", Pos: "needs.go:4"}, !feature(c.FP64)},
		{device.Need{Kind: device.NeedInt64Atomics, Use: "atomic.AddInt64", Pos: "needs.go:5"}, !feature(c.Int64Atomics)},
	}
	if c.LocalMem.N > 0 {
		cases = append(cases, struct {
			need    device.Need
			refused bool
		}{device.Need{Kind: device.NeedLocalMem, Amount: c.LocalMem.N, Use: "all of its team-local memory", Pos: "needs.go:6"}, false})
	}
	for i, tc := range cases {
		k := &device.Kernel{Name: fmt.Sprintf("devicetest_needs_%d", i), Needs: []device.Need{tc.need},
			Params: []device.Param{{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
		_, err := s.dev.Load(k)
		if !tc.refused {
			wantCode(t, fmt.Sprintf("Load of a kernel needing %+v, which %+v meets (it has no image)", tc.need, c), err, device.CodeInvalidBinary)
			continue
		}
		var ne *device.NeedError
		if !errors.As(err, &ne) || !errors.Is(err, device.ErrUnsupported) {
			t.Errorf("Load of a kernel needing %+v on a device with %+v: %v; want a *device.NeedError matching ErrUnsupported", tc.need, c, err)
			continue
		}
		msg := err.Error()
		if ne.Need != tc.need || !strings.Contains(msg, k.Name) || !strings.Contains(msg, tc.need.Pos) || !strings.Contains(msg, tc.need.Use) || ne.Lacks == "" || !strings.Contains(msg, ne.Lacks) {
			t.Errorf("Load of a kernel needing %+v: %q (%+v); want it to name the kernel, the need, its position and what the device lacks", tc.need, msg, ne)
		}
	}
}

// badLaunches checks that bad arguments and shapes are refused and that the
// queue still works afterwards.
func (s *suite) badLaunches(t *testing.T, q device.Queue, k *device.Kernel, f device.Function, smp device.Sample) {
	t.Helper()
	ptrs, args := s.upload(t, q, k, smp)
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			err = q.Sync()
		} else if serr := q.Sync(); serr != nil {
			t.Errorf("%s: Sync after the refused launch: %v", what, serr)
		}
		wantCode(t, what, err, device.CodeInvalidArgument)
	}
	if len(args) > 0 {
		refused("Launch with one argument too few", q.Launch(f, smp.Shape, args[:len(args)-1]))
	}
	refused("Launch with one argument too many", q.Launch(f, smp.Shape, append(slices.Clone(args), device.Arg{})))
	bads := []device.Shape{
		{Size: [3]int{0}},
		{Size: [3]int{-1}},
		{Size: [3]int{4, -1}},
		{Size: [3]int{4}, Teams: -1},
		{Size: [3]int{4}, Threads: -1},
		{Size: [3]int{16, 1 << 32, 1 << 32}}, // more iterations than an int counts
	}
	if m := s.dev.Info().MaxTeams; m > 0 && m < math.MaxInt {
		bads = append(bads, device.Shape{Size: [3]int{4}, Teams: m + 1})
	}
	for _, bad := range bads {
		refused(fmt.Sprintf("Launch with shape %+v", bad), q.Launch(f, bad, args))
	}
	must(t, "Launch after refused launches", q.Launch(f, smp.Shape, args))
	got := download(t, q, smp, ptrs)
	compareBufs(t, k, smp, got, reference(k, smp, 1), 1)
}

func (s *suite) testConcurrent(t *testing.T) {
	const goroutines, iters = 16, 6
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			if err := s.worker(g, iters); err != nil {
				t.Errorf("goroutine %d: %v", g, err)
			}
		})
	}
	wg.Wait()
}

// worker is one goroutine of testConcurrent. It reports failures as errors,
// since only the test's goroutine may call t.Fatal.
func (s *suite) worker(g, iters int) (err error) {
	q, err := s.dev.NewQueue()
	if err != nil {
		return fmt.Errorf("NewQueue: %w", err)
	}
	defer func() {
		if rerr := q.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("Release: %w", rerr)
		}
	}()
	var live []device.DevicePtr
	defer func() {
		for _, p := range live {
			if ferr := s.dev.Free(p); ferr != nil && err == nil {
				err = fmt.Errorf("Free: %w", ferr)
			}
		}
	}()
	get := func(n int) (device.DevicePtr, error) {
		b, err := s.dev.Alloc(n)
		if err != nil {
			return 0, fmt.Errorf("Alloc(%d): %w", n, err)
		}
		live = append(live, b.Ptr)
		return b.Ptr, nil
	}
	for it := range iters {
		n := 1000 + 4099*g + it
		if g%4 == 0 {
			n += 600 << 10 // large enough to be asynchronous on some devices
		}
		data := pattern(n, uint64(g*100+it))
		a, err := get(n)
		if err != nil {
			return err
		}
		b, err := get(n)
		if err != nil {
			return err
		}
		out := make([]byte, n)
		if err := q.CopyIn(a, data); err != nil {
			return fmt.Errorf("CopyIn: %w", err)
		}
		if err := q.Copy(b, a, n); err != nil {
			return fmt.Errorf("Copy: %w", err)
		}
		if err := q.CopyOut(out, b); err != nil {
			return fmt.Errorf("CopyOut: %w", err)
		}
		if len(s.runnable) > 0 {
			rk := s.runnable[(g+it)%len(s.runnable)]
			args := slices.Clone(rk.small.Args)
			args = append(args, make([]device.Arg, max(0, len(rk.k.Params)-len(args)))...)
			ptrs := make([]device.DevicePtr, len(rk.k.Params))
			for i, p := range rk.k.Params {
				if p.Kind != device.ParamBuffer {
					continue
				}
				if ptrs[i], err = get(max(len(rk.small.Bufs[i]), 1)); err != nil {
					return err
				}
				args[i] = device.Arg{Ptr: ptrs[i]}
				if err := q.CopyIn(ptrs[i], rk.small.Bufs[i]); err != nil {
					return fmt.Errorf("CopyIn: %w", err)
				}
			}
			if err := q.Launch(rk.f, rk.small.Shape, args); err != nil {
				return fmt.Errorf("Launch %s: %w", rk.k.Name, err)
			}
			got := make([][]byte, len(ptrs))
			for i, p := range ptrs {
				if p != 0 {
					got[i] = make([]byte, len(rk.small.Bufs[i]))
					if err := q.CopyOut(got[i], p); err != nil {
						return fmt.Errorf("CopyOut: %w", err)
					}
				}
			}
			if err := q.Sync(); err != nil {
				return fmt.Errorf("Sync: %w", err)
			}
			for i, p := range rk.k.Params {
				if p.Kind == device.ParamBuffer && !equalWithin(got[i], rk.want[i], p.Elem, rk.small.Tol) {
					return fmt.Errorf("kernel %s buffer %d (%s) differs from its Go image's result", rk.k.Name, i, p.Name)
				}
			}
		}
		if err := q.Sync(); err != nil {
			return fmt.Errorf("Sync: %w", err)
		}
		if !bytes.Equal(out, data) {
			return fmt.Errorf("iteration %d: %d bytes copied in, to another buffer and out differ", it, n)
		}
		for _, p := range live {
			if err := s.dev.Free(p); err != nil {
				return fmt.Errorf("Free(%v): %w", p, err)
			}
		}
		live = live[:0]
	}
	return nil
}

// equalWithin is compareBufs for one buffer, without reporting.
func equalWithin(g, w []byte, elem device.ParamKind, tol float64) bool {
	if len(g) != len(w) {
		return false
	}
	switch elem {
	case device.ParamFloat32:
		n := len(g) / 4 * 4
		gf, wf := view32(g[:n]), view32(w[:n])
		for j := range gf {
			if !near(float64(gf[j]), float64(wf[j]), tol) {
				return false
			}
		}
		return bytes.Equal(g[n:], w[n:])
	case device.ParamFloat64:
		n := len(g) / 8 * 8
		gf, wf := view64(g[:n]), view64(w[:n])
		for j := range gf {
			if !near(gf[j], wf[j], tol) {
				return false
			}
		}
		return bytes.Equal(g[n:], w[n:])
	}
	return bytes.Equal(g, w)
}
