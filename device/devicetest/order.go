package devicetest

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
)

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
	n := 32 << 20
	if m := s.dev.Info().MaxAlloc / 4; uint64(n) > m {
		// a device with less room (one of many host devices on a 32-bit
		// machine: 32 MiB of addresses, shared by the size classes)
		n = int(m)
	}
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
