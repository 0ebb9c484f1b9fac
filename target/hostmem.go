package target

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/sysmem"
)

// hostMem is the initial device's side of the device memory routines:
// AllocMem on the initial device hands out Go memory kept alive here, and
// MappedPtr on the initial device (which returns the slice's own address,
// as omp_get_mapped_ptr does) records the slice here, held weakly, so that
// On(initial, p) can find its bounds.
type hostMem struct {
	mu    sync.Mutex
	m     map[DevicePtr][]byte
	views map[DevicePtr]*hostView // by start address
}

// hostView is a slice of the program's memory whose address MappedPtr
// returned for the initial device. It does not keep the memory alive: once
// the garbage collector frees it, resolving an address in it is an error,
// and a cleanup drops the view.
type hostView struct {
	p weak.Pointer[byte]
	n int
}

func (h *hostMem) alloc(size int) DevicePtr {
	b := make([]uint64, (size+7)/8)
	p := DevicePtr(uintptr(unsafe.Pointer(&b[0])))
	h.mu.Lock()
	if h.m == nil {
		h.m = map[DevicePtr][]byte{}
	}
	h.m[p] = device.Bytes(b)[:size]
	h.mu.Unlock()
	return p
}

func (h *hostMem) free(p DevicePtr) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.m[p]; !ok {
		return fmt.Errorf("target: free %v on the initial device: not a live allocation (freed twice, or never allocated by target.AllocMem)", p)
	}
	delete(h.m, p)
	return nil
}

// view records b, the memory of a slice MappedPtr was asked about on the
// initial device. Memory the Go runtime does not manage (from mmap, or C)
// is not recorded: On cannot bound it, and says so.
func (h *hostMem) view(b []byte) {
	if len(b) == 0 {
		return
	}
	p := DevicePtr(addr(b))
	h.mu.Lock()
	if v := h.views[p]; v != nil && v.n >= len(b) && v.p.Value() != nil {
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	v := &hostView{n: len(b)}
	if !addCleanup(&b[0], func(v *hostView) { h.drop(p, v) }, v) {
		return
	}
	v.p = weak.Make(&b[0])
	h.mu.Lock()
	if old := h.views[p]; old == nil || old.n < v.n || old.p.Value() == nil {
		if h.views == nil {
			h.views = map[DevicePtr]*hostView{}
		}
		h.views[p] = v
	}
	h.mu.Unlock()
	runtime.KeepAlive(b)
}

// drop removes view v at p, unless another view has replaced it.
func (h *hostMem) drop(p DevicePtr, v *hostView) {
	h.mu.Lock()
	if h.views[p] == v {
		delete(h.views, p)
	}
	h.mu.Unlock()
}

// addCleanup is runtime.AddCleanup, reporting false instead of panicking
// for memory the Go runtime does not manage.
func addCleanup(p *byte, fn func(*hostView), v *hostView) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	runtime.AddCleanup(p, fn, v)
	return true
}

// initialAllocMax is the largest AllocMem on the initial device: half of
// the memory the process may use, the budget the host offload devices
// share.
// Larger sizes fail with an error rather than Go's fatal out-of-memory.
var initialAllocMax = sync.OnceValue(func() uint64 {
	total, _ := sysmem.PhysicalMemory()
	return total / 2
})

// resolve returns the memory from p to the end of its allocation, or of
// the longest live slice MappedPtr returned an address in.
func (h *hostMem) resolve(p DevicePtr) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for base, b := range h.m {
		if p >= base && p < base+DevicePtr(len(b)) {
			return b[p-base:], nil
		}
	}
	var out []byte
	gone := false
	for base, v := range h.views {
		if p < base || p >= base+DevicePtr(v.n) || int(base+DevicePtr(v.n)-p) <= len(out) {
			continue
		}
		first := v.p.Value()
		if first == nil {
			gone = true
			continue
		}
		out = unsafe.Slice(first, v.n)[p-base:]
	}
	if out != nil {
		return out, nil
	}
	if gone {
		return nil, fmt.Errorf("%v was in a slice that target.MappedPtr returned for the initial device, but the slice has been garbage collected since: keep it reachable (runtime.KeepAlive) while its address is in use", p)
	}
	return nil, fmt.Errorf("%v is not in any initial-device allocation made by target.AllocMem, nor in a slice of Go memory that target.MappedPtr returned for the initial device", p)
}
