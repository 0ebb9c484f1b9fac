package mapping

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/require"
)

// fakeOps is a recording Ops with its own device memory: allocations are
// real byte slices, so copies really move data and a copy outside a live
// buffer is caught. It logs every call in order and can fail the Nth call,
// in the manner of database/sql's fakedb.
type fakeOps struct {
	mu     sync.Mutex
	next   device.DevicePtr
	bufs   map[device.DevicePtr][]byte // live allocations by start
	log    []string
	calls  int // calls so far
	failAt int // fail call number failAt (1-based); 0: never
	zero   bool
}

var errInjected = errors.New("injected failure")

func newFake() *fakeOps {
	return &fakeOps{next: 0x100000, bufs: map[device.DevicePtr][]byte{}}
}

func (f *fakeOps) fail() bool {
	f.calls++
	return f.failAt != 0 && f.calls == f.failAt
}

func (f *fakeOps) Alloc(it *Item, size int) (device.DevicePtr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if size != len(it.Host) {
		return 0, fmt.Errorf("fake: alloc of %d bytes for an item of %d", size, len(it.Host))
	}
	if f.fail() {
		f.log = append(f.log, fmt.Sprintf("alloc %d failed", size))
		return 0, device.Errorf("fake:0", "alloc", device.CodeOutOfResources, "%w", errInjected)
	}
	if f.zero {
		f.log = append(f.log, fmt.Sprintf("alloc %d -> 0", size))
		return 0, nil
	}
	p := f.next
	f.next += device.DevicePtr((size + 0x1000) &^ 0xfff) // at least one byte of gap
	f.bufs[p] = make([]byte, size)
	f.log = append(f.log, fmt.Sprintf("alloc %d -> %v", size, p))
	return p, nil
}

func (f *fakeOps) Free(p device.DevicePtr, size int, host []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail() {
		f.log = append(f.log, fmt.Sprintf("free %v %d failed", p, size))
		return device.Errorf("fake:0", "free", device.CodeUnknown, "%w", errInjected)
	}
	b, ok := f.bufs[p]
	if !ok {
		f.log = append(f.log, fmt.Sprintf("free %v %d NOT LIVE", p, size))
		return device.Errorf("fake:0", "free", device.CodeInvalidArgument, "%v is not a live allocation", p)
	}
	if len(b) != size || len(host) != size {
		f.log = append(f.log, fmt.Sprintf("free %v %d WRONG SIZE (buffer %d, host %d)", p, size, len(b), len(host)))
	}
	delete(f.bufs, p)
	f.log = append(f.log, fmt.Sprintf("free %v %d", p, size))
	return nil
}

// mem returns the device bytes [p, p+n), which must lie in one live buffer.
func (f *fakeOps) mem(p device.DevicePtr, n int) ([]byte, error) {
	for base, b := range f.bufs {
		if p >= base && p+device.DevicePtr(n) <= base+device.DevicePtr(len(b)) {
			off := int(p - base)
			return b[off : off+n], nil
		}
	}
	return nil, fmt.Errorf("fake: [%v,+%d) is not inside a live allocation", p, n)
}

func (f *fakeOps) CopyIn(dst device.DevicePtr, src []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail() {
		f.log = append(f.log, fmt.Sprintf("copyin %v %d failed", dst, len(src)))
		return device.Errorf("fake:0", "copy to device", device.CodeUnknown, "%w", errInjected)
	}
	m, err := f.mem(dst, len(src))
	if err != nil {
		f.log = append(f.log, fmt.Sprintf("copyin %v %d OUT OF BOUNDS", dst, len(src)))
		return err
	}
	copy(m, src)
	f.log = append(f.log, fmt.Sprintf("copyin %v %d", dst, len(src)))
	return nil
}

func (f *fakeOps) CopyOut(dst []byte, src device.DevicePtr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail() {
		f.log = append(f.log, fmt.Sprintf("copyout %v %d failed", src, len(dst)))
		return device.Errorf("fake:0", "copy from device", device.CodeUnknown, "%w", errInjected)
	}
	m, err := f.mem(src, len(dst))
	if err != nil {
		f.log = append(f.log, fmt.Sprintf("copyout %v %d OUT OF BOUNDS", src, len(dst)))
		return err
	}
	copy(dst, m)
	f.log = append(f.log, fmt.Sprintf("copyout %v %d", src, len(dst)))
	return nil
}

// Fence implements Ops: the fake's work is complete when each call returns.
func (f *fakeOps) Fence() device.Event { return nil }

// After implements Ops; with no fences it is never called, so it logs.
func (f *fakeOps) After(ev device.Event, _ bool) {
	f.mu.Lock()
	f.log = append(f.log, fmt.Sprintf("after %v", ev))
	f.mu.Unlock()
}

// take returns the log so far and clears it.
func (f *fakeOps) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.log
	f.log = nil
	return l
}

func (f *fakeOps) expect(t *testing.T, want ...string) {
	t.Helper()
	got := f.take()
	if len(want) == 0 {
		want = nil
	}
	require.Equal(t, want, got, "device operations")
}

// live returns the number of live fake allocations.
func (f *fakeOps) live() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bufs)
}

// checkConsistent checks that the table's non-associated entries are exactly
// the fake's live allocations (nothing leaked, nothing dangling), and that
// every entry has a positive count.
func checkConsistent(t *testing.T, tab *Table, f *fakeOps) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	owned, user := 0, 0
	for _, e := range tab.Entries() {
		if e.Associated {
			if _, ok := f.bufs[e.Device]; ok {
				user++ // memory the test allocated and associated
			}
			continue
		}
		owned++
		b, ok := f.bufs[e.Device]
		require.True(t, ok, "entry %v has no live device buffer", e)
		require.Equal(t, e.Size, len(b), "entry %v: bytes of its device buffer", e)
		require.True(t, e.Structured > 0 || e.Dynamic > 0, "entry %v has no reference", e)
	}
	require.Equal(t, len(f.bufs), owned+user, "%d owned and %d user entries against the live device buffers (leak)", owned, user)
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func rng(b []byte) string { return RangeString(addr(b), len(b)) }
