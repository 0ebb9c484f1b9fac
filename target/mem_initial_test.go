package target

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The initial device's side of the memory routines: AllocMem's limit,
// FreeMem's checks, and the slices MappedPtr records for On.

// AllocMem on the initial device accepts every size up to its limit (half
// the memory the process may use), the limit included, and refuses one
// byte more with an error and a zero pointer; the memory it returns is
// usable to its last byte.
func TestInitialAllocUpToItsLimit(t *testing.T) {
	hostRuntime(t)
	const limit = 4096
	old := initialAllocMax
	initialAllocMax = func() uint64 { return limit }
	t.Cleanup(func() { initialAllocMax = old })

	p, err := AllocMem(limit, InitialDevice)
	require.NoError(t, err, "AllocMem of exactly the limit on the initial device")
	require.NotZero(t, p, "AllocMem of exactly the limit on the initial device")
	src := make([]byte, limit)
	for i := range src {
		src[i] = byte(i*5 + 1)
	}
	require.NoError(t, Memcpy(On(InitialDevice, p), Host(src), limit), "Memcpy of the whole allocation")
	got := make([]byte, limit)
	require.NoError(t, Memcpy(Host(got), On(InitialDevice, p), limit))
	assert.Equal(t, src, got, "the allocation's bytes after a round trip")
	require.NoError(t, FreeMem(p, InitialDevice))

	q, err := AllocMem(limit+1, InitialDevice)
	require.Error(t, err, "AllocMem of one byte over the limit")
	assert.ErrorContains(t, err, fmt.Sprintf("alloc of %d bytes on the initial device: more than %d, half of the memory this process may use", limit+1, limit))
	assert.Zero(t, q, "the pointer of a refused AllocMem")
}

// A size no machine has is refused on the initial device with an error
// and the zero pointer, rather than Go's fatal out-of-memory.
func TestInitialAllocTooLargeReturnsNoPointer(t *testing.T) {
	hostRuntime(t)
	p, err := AllocMem(math.MaxInt, InitialDevice)
	require.Error(t, err)
	assert.ErrorContains(t, err, "half of the memory this process may use")
	assert.Zero(t, p, "the pointer of a refused AllocMem")
}

// AllocMem of one byte works on every device, the initial device
// included, and the byte holds what is written to it; zero and negative
// sizes are refused.
func TestAllocOneByteOnEveryDevice(t *testing.T) {
	r, devs := everyDevice(t)
	noLeakOn(t, r)
	for _, dev := range devs {
		p, err := AllocMem(1, dev)
		require.NoError(t, err, "device %d: AllocMem(1)", dev)
		require.NoError(t, Memcpy(On(dev, p), Host([]byte{0x5a}), 1), "device %d: Memcpy of the one byte", dev)
		got := []byte{0}
		require.NoError(t, Memcpy(Host(got), On(dev, p), 1), "device %d", dev)
		assert.Equal(t, []byte{0x5a}, got, "device %d: the one byte", dev)
		require.NoError(t, Memset(On(dev, p), 0xc3, 1), "device %d: Memset of the one byte", dev)
		require.NoError(t, Memcpy(Host(got), On(dev, p), 1), "device %d", dev)
		assert.Equal(t, []byte{0xc3}, got, "device %d: the one byte after Memset", dev)
		err = Memcpy(Host(make([]byte, 2)), On(dev, p), 2)
		assert.ErrorContains(t, err, "out of bounds, only 1 bytes there", "device %d: 2 bytes from a 1-byte allocation", dev)
		require.NoError(t, FreeMem(p, dev), "device %d", dev)
		for _, size := range []int{0, -1} {
			q, err := AllocMem(size, dev)
			assert.ErrorContains(t, err, fmt.Sprintf("alloc of %d bytes: size must be positive", size), "device %d", dev)
			assert.Zero(t, q, "device %d: AllocMem(%d)", dev, size)
		}
	}
}

// FreeMem on the initial device refuses a pointer freed already, one
// AllocMem never returned and one inside an allocation; the refused free
// of an inner pointer leaves the allocation usable. A freed pointer is no
// longer accepted by Memcpy.
func TestInitialFreeMemChecksThePointer(t *testing.T) {
	hostRuntime(t)
	p, err := AllocMem(64, InitialDevice)
	require.NoError(t, err)
	err = FreeMem(p+8, InitialDevice)
	assert.ErrorContains(t, err, fmt.Sprintf("free %v on the initial device: not a live allocation", p+8), "free of an inner pointer")
	require.NoError(t, Memset(On(InitialDevice, p), 1, 64), "the allocation after a refused free")
	require.NoError(t, FreeMem(p, InitialDevice))
	err = FreeMem(p, InitialDevice)
	assert.ErrorContains(t, err, fmt.Sprintf("free %v on the initial device: not a live allocation (freed twice, or never allocated by target.AllocMem)", p), "second free")
	err = FreeMem(0x1000, InitialDevice)
	assert.ErrorContains(t, err, "not a live allocation", "free of a made-up pointer")
	err = Memcpy(On(InitialDevice, p), Host(make([]byte, 8)), 8)
	assert.ErrorContains(t, err, "is not in any initial-device allocation made by target.AllocMem", "Memcpy to a freed pointer")
}

// memEvery16 runs check on every device (everyDevice, leak-checked) with
// p, 16 bytes allocated there and set to fill, and h, 16 zero host bytes;
// after check the device bytes must still all be fill ("device bytes
// after "+what), and p is freed.
func memEvery16(t *testing.T, fill byte, what string, check func(dev int, p DevicePtr, h []byte)) {
	t.Helper()
	r, devs := everyDevice(t)
	noLeakOn(t, r)
	for _, dev := range devs {
		p, err := AllocMem(16, dev)
		require.NoError(t, err, "device %d", dev)
		require.NoError(t, Memset(On(dev, p), fill, 16), "device %d", dev)
		h := make([]byte, 16)
		check(dev, p, h)
		require.NoError(t, Memcpy(Host(h), On(dev, p), 16), "device %d", dev)
		assert.Equal(t, bytes.Repeat([]byte{fill}, 16), h, "device %d: device bytes after "+what, dev)
		require.NoError(t, FreeMem(p, dev), "device %d", dev)
	}
}

// Negative lengths are refused by Memcpy and Memset on every device,
// and nothing is written.
func TestNegativeLengthsAreRefused(t *testing.T) {
	memEvery16(t, 7, "refused calls", func(dev int, p DevicePtr, h []byte) {
		err := Memcpy(On(dev, p), Host(h), -1)
		assert.ErrorContains(t, err, "memcpy of -1 bytes: length must not be negative", "device %d: Memcpy to it", dev)
		err = Memcpy(Host(h), On(dev, p), -16)
		assert.ErrorContains(t, err, "memcpy of -16 bytes: length must not be negative", "device %d: Memcpy from it", dev)
		assert.Equal(t, make([]byte, 16), h, "device %d: host bytes after a refused Memcpy", dev)
		err = Memset(On(dev, p), 0, -1)
		assert.ErrorContains(t, err, "memset of -1 bytes: length must not be negative", "device %d", dev)
	})
}

// MappedPtr on the initial device of an empty slice does not fail; that
// of a one-byte slice is an address On accepts for that byte, and for no
// more.
func TestMappedPtrOfTinySlicesOnTheInitialDevice(t *testing.T) {
	hostRuntime(t)
	_, err := MappedPtr([]byte{}, InitialDevice)
	require.NoError(t, err, "MappedPtr of an empty slice")
	_, err = MappedPtr([]int64(nil), InitialDevice)
	require.NoError(t, err, "MappedPtr of a nil slice")
	for range 3 {
		one := make([]byte, 1)
		p, err := MappedPtr(one, InitialDevice)
		require.NoError(t, err, "MappedPtr of a one-byte slice")
		require.NoError(t, Memcpy(On(InitialDevice, p), Host([]byte{42}), 1), "Memcpy to the one-byte slice's address")
		assert.Equal(t, byte(42), one[0], "the one-byte slice after Memcpy to its address")
		require.NoError(t, Memset(On(InitialDevice, p), 9, 1))
		assert.Equal(t, byte(9), one[0], "the one-byte slice after Memset at its address")
		err = Memcpy(On(InitialDevice, p), Host([]byte{1, 2}), 2)
		assert.ErrorContains(t, err, "out of bounds, only 1 bytes there", "two bytes to a one-byte slice's address")
		runtime.KeepAlive(one)
	}
}

// When MappedPtr has returned addresses in several overlapping live
// slices on the initial device, On at an address may use the memory up to
// the end of the slice reaching furthest from it, whichever order the
// slices were recorded in: each of these copies fits one of the slices.
func TestMappedPtrOverlappingSlicesUseTheLongest(t *testing.T) {
	hostRuntime(t)
	x := make([]int32, 96)
	// x[j:j+33] for j = 0..32: every one holds x[32]; x[32:65] reaches furthest.
	for j := 0; j <= 32; j++ {
		_, err := MappedPtr(x[j:j+33], InitialDevice)
		require.NoError(t, err, "MappedPtr(x[%d:%d])", j, j+33)
	}
	base, err := MappedPtr(x[:1], InitialDevice)
	require.NoError(t, err)
	for _, k := range []int{32, 20, 5, 0} {
		clear(x)
		// Element k lies in x[j:j+33] for j <= k; the furthest end is k+33
		// (x[k:k+33]).
		src := make([]int32, 33)
		for i := range src {
			src[i] = int32(1000*k + i + 1)
		}
		p := base + DevicePtr(4*k)
		require.NoError(t, Memcpy(On(InitialDevice, p), Host(src), 4*33), "Memcpy of 33 elements to x[%d]'s address", k)
		want := make([]int32, 96)
		copy(want[k:], src)
		assert.Equal(t, want, x, "x after Memcpy of 33 elements to x[%d]'s address", k)
		err = Memcpy(On(InitialDevice, p), Host(make([]int32, 34)), 4*34)
		assert.ErrorContains(t, err, "out of bounds, only 132 bytes there", "Memcpy of 34 elements to x[%d]'s address", k)
		// From inside: the end of the furthest slice bounds it too.
		out := make([]int32, 30)
		require.NoError(t, Memcpy(Host(out), On(InitialDevice, p).Add(12), 4*30), "Memcpy of 30 elements from x[%d]", k+3)
		assert.Equal(t, src[3:], out, "Memcpy of 30 elements from x[%d]", k+3)
	}
	runtime.KeepAlive(x)
}

// memDeadPointer returns a weak pointer to memory that is unreachable when
// it returns, once the collector has freed it.
func memDeadPointer(t *testing.T) weak.Pointer[byte] {
	t.Helper()
	w := memWeakOfGarbage()
	for deadline := time.Now().Add(10 * time.Second); w.Value() != nil; {
		require.True(t, time.Now().Before(deadline), "an unreachable slice was not collected in 10s")
		runtime.GC()
	}
	return w
}

//go:noinline
func memWeakOfGarbage() weak.Pointer[byte] {
	b := make([]byte, 1<<16)
	return weak.Make(&b[0])
}

// memMappedAndDropped returns the initial-device address MappedPtr gave a
// slice of n bytes that is unreachable when it returns, and a weak pointer
// to the slice's memory.
//
//go:noinline
func memMappedAndDropped(t *testing.T, n int) (DevicePtr, weak.Pointer[byte]) {
	x := make([]byte, n)
	p, err := MappedPtr(x, InitialDevice)
	require.NoError(t, err)
	return p, weak.Make(&x[0])
}

// An address whose slice the collector has freed, but whose record the
// cleanup has not yet dropped (cleanups run later, on their own
// goroutine), is refused with the error that says why: the slice was
// garbage collected, keep it reachable.
func TestMappedPtrOfCollectedSliceSaysCollected(t *testing.T) {
	r := hostRuntime(t)
	const n = 1 << 20
	p, w := memMappedAndDropped(t, n)
	for deadline := time.Now().Add(10 * time.Second); w.Value() != nil; {
		require.True(t, time.Now().Before(deadline), "the dropped slice was not collected in 10s")
		runtime.GC()
	}
	// The window between the collection and the cleanup, held open: a
	// record of the slice that its cleanup (run already, or to come) does
	// not drop.
	held := &hostView{p: w, n: n}
	r.initial.mu.Lock()
	r.initial.views[p] = held
	r.initial.mu.Unlock()
	t.Cleanup(func() { r.initial.drop(p, held) })
	for _, off := range []int{0, 4096} {
		err := Memcpy(On(InitialDevice, p).Add(off), Host(make([]byte, 8)), 8)
		require.Error(t, err, "Memcpy to offset %d of a collected slice", off)
		assert.ErrorContains(t, err, fmt.Sprintf("%v was in a slice that target.MappedPtr returned for the initial device, but the slice has been garbage collected since", p+DevicePtr(off)), "offset %d", off)
		assert.ErrorContains(t, err, "keep it reachable (runtime.KeepAlive)", "offset %d", off)
	}
}

// The collector may give a new slice the address of one it freed before
// that one's cleanup has run: MappedPtr of the new slice records it, and
// On accepts its address, rather than calling it collected.
func TestMappedPtrAtTheAddressOfACollectedSlice(t *testing.T) {
	r := hostRuntime(t)
	x := make([]int64, 8)
	a := DevicePtr(addr(device.Bytes(x)))
	for _, n := range []int{64, 1 << 20} { // the collected slice was as long, or longer
		r.initial.mu.Lock()
		if r.initial.views == nil {
			r.initial.views = map[DevicePtr]*hostView{}
		}
		r.initial.views[a] = &hostView{p: memDeadPointer(t), n: n}
		r.initial.mu.Unlock()
		clear(x)
		p, err := MappedPtr(x, InitialDevice)
		require.NoError(t, err)
		require.Equal(t, a, p, "MappedPtr(x)")
		src := []int64{1, 2, 3, 4, 5, 6, 7, 8}
		require.NoError(t, Memcpy(On(InitialDevice, p), Host(src), 64), "Memcpy to a new slice at the address of a collected one of %d bytes", n)
		assert.Equal(t, src, x, "x after Memcpy to its address")
		err = Memcpy(On(InitialDevice, p), Host(make([]byte, 72)), 72)
		assert.ErrorContains(t, err, "out of bounds, only 64 bytes there", "the new slice's own length bounds it (old record of %d bytes)", n)
	}
	runtime.KeepAlive(x)
}

// Memset and Memcpy of zero bytes succeed and change nothing, on every
// device, the initial device included, also at an allocation's end.
func TestZeroLengthRoutinesOnEveryDevice(t *testing.T) {
	memEvery16(t, 3, "routines of 0 bytes", func(dev int, p DevicePtr, h []byte) {
		require.NoError(t, Memset(On(dev, p), 9, 0), "device %d: Memset of 0 bytes", dev)
		require.NoError(t, Memset(On(dev, p).Add(15), 9, 0), "device %d: Memset of 0 bytes at the last byte", dev)
		require.NoError(t, Memcpy(On(dev, p), Host(h), 0), "device %d: Memcpy of 0 bytes to it", dev)
		require.NoError(t, Memcpy(Host(h), On(dev, p).Add(15), 0), "device %d: Memcpy of 0 bytes from its last byte", dev)
		assert.Equal(t, make([]byte, 16), h, "device %d: host bytes after copies of 0 bytes", dev)
	})
}

// MappedPtr on the initial device of a longer slice at the start of one
// it was asked about before extends what On accepts there to the longer
// slice's end; a shorter one after it does not shorten it.
func TestMappedPtrOfALongerSliceAtTheSameStart(t *testing.T) {
	hostRuntime(t)
	x := make([]int32, 32)
	p, err := MappedPtr(x[:4], InitialDevice)
	require.NoError(t, err)
	err = Memcpy(On(InitialDevice, p), Host(make([]int32, 32)), 128)
	require.ErrorContains(t, err, "out of bounds, only 16 bytes there", "Memcpy of all of x to the address of x[:4]")
	q, err := MappedPtr(x, InitialDevice)
	require.NoError(t, err)
	require.Equal(t, p, q, "MappedPtr(x) against MappedPtr(x[:4])")
	_, err = MappedPtr(x[:2], InitialDevice)
	require.NoError(t, err)
	src := make([]int32, 32)
	for i := range src {
		src[i] = int32(i * 3)
	}
	require.NoError(t, Memcpy(On(InitialDevice, p), Host(src), 128), "Memcpy of all of x once MappedPtr(x) was asked")
	assert.Equal(t, src, x, "x after Memcpy to its mapped address")
	runtime.KeepAlive(x)
}

// On a host slice, Add of its length is its (empty) end, where a copy of
// zero bytes succeeds; one byte further is an error.
func TestHostSliceAtItsEnd(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(16, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	h := make([]byte, 16)
	require.NoError(t, Memcpy(Host(h).Add(16), On(0, p), 0), "Memcpy of 0 bytes to a host slice's end")
	require.NoError(t, Memcpy(On(0, p), Host(h).Add(16), 0), "Memcpy of 0 bytes from a host slice's end")
	require.NoError(t, Memset(Host(h).Add(16), 1, 0), "Memset of 0 bytes at a host slice's end")
	err = Memcpy(Host(h).Add(16), On(0, p), 1)
	assert.ErrorContains(t, err, "out of bounds, only 0 bytes there", "Memcpy of 1 byte to a host slice's end")
	err = Memcpy(Host(h).Add(17), On(0, p), 0)
	assert.ErrorContains(t, err, "target: memcpy destination: offset 17 is outside the host slice", "a host slice one byte past its end")
	assert.Equal(t, make([]byte, 16), h)
}
