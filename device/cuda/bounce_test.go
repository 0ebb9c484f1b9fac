//go:build cgo && linux

package cuda

// Tests of the small copies through the bounce ring (bounce.go) and of the
// chunks of mid-size staged copies, against the fake driver (see
// fault_test.go). The fake models NVIDIA's "API synchronization behavior":
// a copy between the device and pageable host memory waits for the
// stream's earlier work (counted in PageableWaits); and it runs the copies
// of a stream only when something waits for them (or, with FAKECUDA_ASYNC,
// on a worker per stream), so a plugin that reads the ring before the DMA
// into it has run, or reuses a part of it that a pending DMA still reads,
// gets wrong data.

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateKernel does nothing; on the fake driver it runs until the test opens
// the gate (fakeLib.open Gate), so a test can tell by order alone whether
// a call waited for it.
var gateKernel = &device.Kernel{
	Name: "gompt_test_gate",
	Images: []device.Image{{Kind: ImagePTX, Source: `.version 6.3
.target sm_75
.address_size 64
// FAKECUDA_GATE
.visible .entry gompt_test_gate()
{
	ret;
}
`}},
}

// closeGate closes the fake's gate and opens it again when the test ends,
// so that no stream worker stays stuck in a gated kernel.
func (f *fakeLib) closeGate(t *testing.T) {
	atomic.StoreInt32(f.gate, 0)
	t.Cleanup(f.openGate)
}

func (f *fakeLib) openGate() { atomic.StoreInt32(f.gate, 1) }

// fill returns n bytes of b.
func fill(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// TestFaultOverlap launches a kernel that runs until the test lets it end,
// then makes a small CopyIn and a small CopyOut on the same queue: both
// must return while the kernel still runs (through pageable memory, the
// driver would have waited for it), the CopyOut's slice must be written
// only once the queue's work is done, and the Wait of an event recorded
// after it must see the data before the queue's Sync.
func TestFaultOverlap(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_ASYNC", "1")
	f.closeGate(t)
	d := f.open(t)[0]
	gate, err := d.Load(gateKernel)
	must(t, "Load", err)
	const small = 128 << 10 // below stagingMin, above the 64 KiB some drivers stage by themselves
	a, err := d.Alloc(small)
	must(t, "Alloc", err)
	b, err := d.Alloc(4096)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	want := pattern(4096, 3)
	must(t, "CopyIn", q.CopyIn(b.Ptr, want))
	must(t, "Sync", q.Sync())
	waits := f.read().PageableWaits

	src, got := pattern(small, 4), fill(4096, 0xaa)
	must(t, "Launch", q.Launch(gate, device.Shape{Size: [3]int{1, 1, 1}}, nil))
	done := make(chan error, 1)
	go func() {
		err := q.CopyIn(a.Ptr, src)
		if err == nil {
			err = q.CopyOut(got, b.Ptr)
		}
		done <- err
	}()
	select {
	case err := <-done:
		must(t, "copies behind the kernel", err)
	case <-time.After(20 * time.Second):
		f.openGate()
		<-done
		require.Fail(t, "a small CopyIn or CopyOut waited for the kernel enqueued before it (the driver's pageable path)")
	}
	assert.Zero(t, f.read().PageableWaits-waits, "copies went to the driver from pageable memory")
	require.True(t, bytes.Equal(got, fill(4096, 0xaa)), "CopyOut wrote its slice while the kernel before it still ran")
	ev, err := q.Record()
	must(t, "Record", err)
	f.openGate()
	waited := make(chan error)
	go func() { waited <- ev.Wait() }() // another goroutine, as a construct's dependent
	must(t, "Wait", <-waited)
	assert.Negative(t, firstDiff(got, want), "after the Wait of an event recorded after CopyOut, its slice differs from byte")
	must(t, "Sync", q.Sync())
	back := make([]byte, small)
	must(t, "CopyOut", q.CopyOut(back, a.Ptr))
	must(t, "Sync", q.Sync())
	assert.Negative(t, firstDiff(back, src), "the CopyIn made behind the kernel wrote wrong data from byte")
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(a.Ptr))
	must(t, "Free", d.Free(b.Ptr))
}

// TestFaultBounceRing makes more small copies than the ring holds, without
// a Sync between them, so that the ring goes round several times while the
// fake still holds the copies (it runs them only when waited for): every
// byte must arrive, through one ring and no pageable copy.
func TestFaultBounceRing(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	for _, prof := range []bool{false, true} {
		t.Run(fmt.Sprintf("profile=%v", prof), func(t *testing.T) {
			q.(device.Profiler).Profile(prof)
			const k, n = 13, 200 << 10 // one copy per segment: round the ring three times
			var bufs []device.DevicePtr
			var srcs, gots [][]byte
			for i := range k {
				buf, err := d.Alloc(n)
				must(t, "Alloc", err)
				bufs = append(bufs, buf.Ptr)
				srcs = append(srcs, pattern(n-i, 100+i))
				must(t, "CopyIn", q.CopyIn(buf.Ptr, srcs[i]))
			}
			for i := range k {
				gots = append(gots, fill(n-i, 0xee))
				must(t, "CopyOut", q.CopyOut(gots[i], bufs[i]))
			}
			// Tiny copies, many to a segment.
			tiny, err := d.Alloc(8 * 1000)
			must(t, "Alloc", err)
			var tinyGot [1000][8]byte
			for i := range 1000 {
				must(t, "CopyIn", q.CopyIn(tiny.Ptr+device.DevicePtr(8*i), []byte{byte(i), byte(i >> 8), 1, 2, 3, 4, 5, 6}))
			}
			for i := range 1000 {
				must(t, "CopyOut", q.CopyOut(tinyGot[i][:], tiny.Ptr+device.DevicePtr(8*i)))
			}
			must(t, "Sync", q.Sync())
			for i := range k {
				assert.Negative(t, firstDiff(gots[i], srcs[i]), "copy %d of %d bytes: wrong data from byte", i, n-i)
			}
			for i := range 1000 {
				require.Equal(t, [8]byte{byte(i), byte(i >> 8), 1, 2, 3, 4, 5, 6}, tinyGot[i], "tiny copy %d", i)
			}
			s := f.read()
			assert.EqualValues(t, 1, s.HostAllocs, "page-locked allocations (want 1, the ring)")
			assert.Equal(t, f.base.PageableWaits, s.PageableWaits, "pageable copies (want none)")
			for _, p := range append(bufs, tiny.Ptr) {
				must(t, "Free", d.Free(p))
			}
		})
	}
	must(t, "Release", q.Release())
}

// TestFaultBounceOrder checks that deferred copies out keep the queue's
// order with copies that read or write the same Go memory, and that an
// event's Wait finishes only the copies recorded before it, even when the
// queue has reused their bookkeeping since.
func TestFaultBounceOrder(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	const big = stagingMin + 4096
	var bufs [3]device.DevicePtr
	for i := range bufs {
		buf, err := d.Alloc(big)
		must(t, "Alloc", err)
		bufs[i] = buf.Ptr
		must(t, "CopyIn", q.CopyIn(buf.Ptr, pattern(big, 20+i)))
	}
	must(t, "Sync", q.Sync())
	A, B, C := bufs[0], bufs[1], bufs[2]

	t.Run("CopyIn reads a pending CopyOut's slice", func(t *testing.T) {
		x := fill(1000, 0)
		must(t, "CopyOut", q.CopyOut(x, A))
		must(t, "CopyIn", q.CopyIn(C, x))
		y := make([]byte, 1000)
		must(t, "CopyOut", q.CopyOut(y, C))
		must(t, "Sync", q.Sync())
		assert.True(t, bytes.Equal(y, pattern(big, 20)[:1000]), "CopyIn of a slice a CopyOut before it on the queue writes did not copy the CopyOut's data")
		must(t, "CopyIn", q.CopyIn(C, pattern(big, 22)))
	})
	t.Run("two CopyOuts to one slice", func(t *testing.T) {
		x := fill(1000, 0)
		must(t, "CopyOut", q.CopyOut(x, A))
		must(t, "CopyOut", q.CopyOut(x[500:], B))
		must(t, "Sync", q.Sync())
		assert.True(t, bytes.Equal(x[:500], pattern(big, 20)[:500]), "the later of two CopyOuts to the same bytes did not win")
		assert.True(t, bytes.Equal(x[500:], pattern(big, 21)[:500]), "the later of two CopyOuts to the same bytes did not win")
	})
	t.Run("a large CopyOut after a small one", func(t *testing.T) {
		x := fill(big, 0)
		must(t, "CopyOut", q.CopyOut(x[:1000], A))
		must(t, "CopyOut", q.CopyOut(x, C)) // staged, written at once
		must(t, "Sync", q.Sync())
		i := firstDiff(x, pattern(big, 22))
		assert.Negative(t, i, "the large CopyOut's data was overwritten from byte %d by the small one before it", i)
	})
	t.Run("an old event's Wait", func(t *testing.T) {
		x1, x2 := fill(1000, 0), fill(1000, 0x55)
		must(t, "CopyOut", q.CopyOut(x1, A))
		e1, err := q.Record()
		must(t, "Record", err)
		must(t, "Sync", q.Sync()) // finishes x1's copy; its out is reused next
		must(t, "CopyOut", q.CopyOut(x2, B))
		must(t, "Wait", e1.Wait()) // the fake has not yet run x2's copy
		assert.True(t, bytes.Equal(x2, fill(1000, 0x55)), "the Wait of an event recorded before a CopyOut wrote that CopyOut's slice")
		must(t, "Sync", q.Sync())
		assert.True(t, bytes.Equal(x1, pattern(big, 20)[:1000]), "wrong data after the Sync")
		assert.True(t, bytes.Equal(x2, pattern(big, 21)[:1000]), "wrong data after the Sync")
	})
	must(t, "Release", q.Release())
	for _, p := range bufs {
		must(t, "Free", d.Free(p))
	}
}

// TestFaultBounceErrors fails the driver around small copies: the failed
// copy says so, a copy out is written once a later wait succeeds (or not
// at all when its queue is released after a failed Sync, or on a lost
// device), Close writes the copies out not yet waited for, and the ring is
// given back on every path.
func TestFaultBounceErrors(t *testing.T) {
	f := fakeDriverIn(t)
	want := pattern(4096, 30)
	setup := func(t *testing.T) (device.Device, device.Queue, device.DevicePtr) {
		d := f.open(t)[0]
		buf, err := d.Alloc(4096)
		must(t, "Alloc", err)
		q, err := d.NewQueue()
		must(t, "NewQueue", err)
		must(t, "CopyIn", q.CopyIn(buf.Ptr, want))
		must(t, "Sync", q.Sync())
		t.Cleanup(func() { d.Free(buf.Ptr) })
		return d, q, buf.Ptr
	}
	t.Run("a failed Sync loses nothing", func(t *testing.T) {
		_, q, buf := setup(t)
		x := fill(4096, 0)
		must(t, "CopyOut", q.CopyOut(x, buf))
		f.arm("cuStreamSynchronize:1:999")
		wantErr(t, "Sync", q.Sync(), device.CodeUnknown, "cuStreamSynchronize")
		assert.True(t, bytes.Equal(x, fill(4096, 0)), "a Sync that failed wrote the CopyOut's slice")
		must(t, "second Sync", q.Sync())
		assert.True(t, bytes.Equal(x, want), "the CopyOut's data was lost after a failed Sync")
		must(t, "Release", q.Release())
	})
	t.Run("Release whose Sync fails", func(t *testing.T) {
		_, q, buf := setup(t)
		x := fill(4096, 0)
		must(t, "CopyOut", q.CopyOut(x, buf))
		must(t, "CopyIn", q.CopyIn(buf, pattern(4096, 33)))
		f.arm("cuStreamSynchronize:1:999")
		wantErr(t, "Release", q.Release(), device.CodeUnknown, "cuStreamSynchronize")
		assert.True(t, bytes.Equal(x, fill(4096, 0)), "a Release whose Sync failed wrote the CopyOut's slice")
		// The test's end checks that the ring went back to the driver.
	})
	t.Run("a failed DMA", func(t *testing.T) {
		_, q, buf := setup(t)
		x := fill(4096, 0)
		f.arm("cuMemcpyDtoHAsync_v2:1:999")
		wantErr(t, "CopyOut", q.CopyOut(x, buf), device.CodeUnknown, "copy from device", "cuMemcpyDtoHAsync_v2")
		f.arm("cuMemcpyHtoDAsync_v2:1:999")
		wantErr(t, "CopyIn", q.CopyIn(buf, pattern(100, 1)), device.CodeUnknown, "copy to device", "cuMemcpyHtoDAsync_v2")
		must(t, "Sync", q.Sync())
		assert.True(t, bytes.Equal(x, fill(4096, 0)), "a CopyOut that failed wrote its slice")
		roundTrip(t, q, buf, pattern(4096, 31))
		must(t, "Release", q.Release())
	})
	// 200 KiB copies, one per segment: the fifth reuses the first segment.
	round := func(t *testing.T, q device.Queue, d device.Device) (error, func()) {
		var bufs []device.DevicePtr
		var err error
		for i := 0; i < 5 && err == nil; i++ {
			b, aerr := d.Alloc(200 << 10)
			must(t, "Alloc", aerr)
			bufs = append(bufs, b.Ptr)
			err = q.CopyIn(b.Ptr, pattern(200<<10, 40+i))
		}
		return err, func() {
			for i, b := range bufs {
				got := make([]byte, 200<<10)
				must(t, "CopyOut", q.CopyOut(got, b))
				must(t, "Sync", q.Sync())
				if i < len(bufs)-1 || err == nil {
					assert.Negative(t, firstDiff(got, pattern(200<<10, 40+i)), "copy %d: wrong data from byte", i)
				}
				must(t, "Free", d.Free(b))
			}
		}
	}
	t.Run("the wait for a segment fails", func(t *testing.T) {
		d, q, _ := setup(t)
		f.arm("cuEventSynchronize:1:999")
		err, check := round(t, q, d)
		wantErr(t, "CopyIn that reuses a segment", err, device.CodeUnknown, "copy to device", "cuEventSynchronize")
		f.arm("")
		must(t, "Sync", q.Sync())
		check()
		must(t, "Release", q.Release())
	})
	t.Run("the record after a segment fails", func(t *testing.T) {
		d, q, _ := setup(t)
		f.arm("cuEventRecord:1:999")
		err, check := round(t, q, d)
		must(t, "CopyIn (the plugin waits for the stream instead)", err)
		assert.NotZero(t, f.injected(), "no failure injected")
		check()
		must(t, "Release", q.Release())
	})
	t.Run("no page-locked memory", func(t *testing.T) {
		f.arm("cuMemAllocHost_v2:1:2:0")
		_, q, buf := setup(t)
		roundTrip(t, q, buf, pattern(4096, 32))
		if s := f.read(); assert.Zero(t, s.HostAllocs, "%d page-locked allocations, %d pageable copies: want none and some", s.HostAllocs, s.PageableWaits-f.base.PageableWaits) {
			assert.NotEqual(t, f.base.PageableWaits, s.PageableWaits, "%d page-locked allocations, %d pageable copies: want none and some", s.HostAllocs, s.PageableWaits-f.base.PageableWaits)
		}
		must(t, "Release", q.Release())
	})
	t.Run("Close with a copy out pending", func(t *testing.T) {
		d, q, buf := setup(t)
		x := fill(4096, 0)
		must(t, "CopyOut", q.CopyOut(x, buf))
		ev, err := q.Record()
		must(t, "Record", err)
		must(t, "Free", d.Free(buf))
		must(t, "Close", d.(device.Closer).Close())
		assert.True(t, bytes.Equal(x, want), "the CopyOut not waited for before Close was lost")
		wantErr(t, "Wait after Close", ev.Wait(), device.CodeInvalidDevice, "closed")
	})
	t.Run("sticky", func(t *testing.T) {
		d, q, buf := setup(t)
		fn, err := d.Load(faultKernel)
		must(t, "Load", err)
		must(t, "Launch", q.Launch(fn, device.Shape{Size: [3]int{1, 1, 1}}, []device.Arg{{Bits: 0}}))
		x := fill(4096, 0)
		must(t, "CopyOut", q.CopyOut(x, buf))
		wantErr(t, "Sync", q.Sync(), device.CodeInvalidDevice, "CUDA_ERROR_ILLEGAL_ADDRESS")
		assert.True(t, bytes.Equal(x, fill(4096, 0)), "a CopyOut after a faulting kernel wrote its slice")
		must(t, "Release", q.Release())
		must(t, "Close", d.(device.Closer).Close())
		assert.Equal(t, (fakeState{}), f.read().live(), "the fake still holds")
		f.rebase() // the ring went with the lost context
	})
}

// TestFaultBounceConcurrent runs small round trips on several queues at
// once, half of them waited for by an event in another goroutine (as a
// nowait construct's dependent does) and half by Sync, while copies and
// synchronisations fail here and there: every round that succeeds is
// right, and every failure injected fails one round.
func TestFaultBounceConcurrent(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_ASYNC", "1")
	d := f.open(t)[0]
	const workers, rounds, n = 4, 24, 6000
	f.arm("cuMemcpyDtoHAsync_v2:9:999,cuMemcpyHtoDAsync_v2:30:999,cuStreamSynchronize:11:999")
	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, err := d.Alloc(2 * n)
			if !assert.NoError(t, err) {
				return
			}
			defer d.Free(buf.Ptr)
			q, err := d.NewQueue()
			if !assert.NoError(t, err) {
				return
			}
			defer q.Release()
			var waiters sync.WaitGroup
			defer waiters.Wait()
			for r := range rounds {
				src := pattern(n, 100*w+r)
				got := make([]byte, n)
				err := q.CopyIn(buf.Ptr, src)
				if err == nil {
					err = q.Copy(buf.Ptr+n, buf.Ptr, n)
				}
				if err == nil {
					err = q.CopyOut(got, buf.Ptr+n)
				}
				if err != nil {
					failed.Add(1) // the next Sync or event finishes what was enqueued
					continue
				}
				if r%2 == 0 {
					if err := q.Sync(); err != nil {
						failed.Add(1)
						continue
					}
					assert.Negative(t, firstDiff(got, src), "worker %d round %d (Sync): wrong data from byte", w, r)
					continue
				}
				ev, err := q.Record()
				if !assert.NoError(t, err, "Record") {
					continue
				}
				waiters.Add(1)
				go func() {
					defer waiters.Done()
					if !assert.NoError(t, ev.Wait(), "worker %d round %d: Wait", w, r) {
						return
					}
					assert.Negative(t, firstDiff(got, src), "worker %d round %d (event Wait): wrong data from byte", w, r)
				}()
			}
		}()
	}
	wg.Wait()
	if n := f.injected(); assert.EqualValues(t, 3, n, "%d failures injected, %d rounds failed; want 3 and 3", n, failed.Load()) {
		assert.Equal(t, n, failed.Load(), "%d failures injected, %d rounds failed; want 3 and 3", n, failed.Load())
	}
}

// TestFaultChunks copies sizes from stagingMin to past stagingChunk both
// ways, and checks that a mid-size copy is cut into chunks sized to it
// (chunkFor): the fourth DMA of a 1 MiB copy exists and can fail.
func TestFaultChunks(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	buf, err := d.Alloc(stagingChunk + 5)
	must(t, "Alloc", err)
	for i, n := range []int{stagingMin, stagingMin + 1, 1<<20 + 3, 5<<20 + 7, stagingChunk - 1, stagingChunk + 5} {
		roundTrip(t, q, buf.Ptr, pattern(n, 50+i))
	}
	f.arm("cuMemcpyHtoDAsync_v2:4:999")
	wantErr(t, "1 MiB CopyIn whose fourth chunk fails", q.CopyIn(buf.Ptr, pattern(1<<20, 1)), device.CodeUnknown, "cuMemcpyHtoDAsync_v2")
	f.arm("cuMemcpyDtoHAsync_v2:4:999")
	wantErr(t, "1 MiB CopyOut whose fourth chunk fails", q.CopyOut(make([]byte, 1<<20), buf.Ptr), device.CodeUnknown, "cuMemcpyDtoHAsync_v2")
	f.arm("")
	must(t, "Sync", q.Sync())
	roundTrip(t, q, buf.Ptr, pattern(3<<20, 60))
	s := f.read()
	assert.Equal(t, f.base.PageableWaits, s.PageableWaits, "%d staged copies went to the driver from pageable memory", s.PageableWaits-f.base.PageableWaits)
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(buf.Ptr))
}
