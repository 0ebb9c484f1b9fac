//go:build cgo

package opencl

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// The program's memory as device buffers (device.Aliaser), for the
// runtime's zero-copy maps (GOMPT_ZERO_COPY=on): a buffer made with
// CL_MEM_USE_HOST_PTR over the Go slice itself.
//
// OpenCL lets a driver keep a USE_HOST_PTR buffer in memory of its own
// and copy to and from the host pointer at map and unmap; then a kernel
// would not see the program's later writes, nor the program its
// kernel's. So a device aliases only where it shares the host's memory
// (CL_DEVICE_HOST_UNIFIED_MEMORY) and where a probe, at the first
// alias, saw the driver use the host pointer itself: the host's write
// after the buffer was made read back through the buffer, and a write
// through the buffer in the host's memory, with no map (POCL 3.1 and
// rusticl 22.3 on llvmpipe both do, at any alignment). A slice is
// aliased at any address: a Go slice's elements are aligned as their
// type needs, and POCL's and rusticl's kernels run right on buffers at
// addresses that are not multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN
// (TestAliasAtAnyAddress); an argument at an offset inside one goes
// through a sub-buffer or the staging of unaligned arguments, as in any
// buffer (kernel.go), which writes its results back into it.

// aliasState is what the probe found, and the pins of the live aliases.
type aliasState struct {
	ok   bool   // the driver uses the host pointer itself
	why  string // what the probe saw, when not ok
	pins map[cl.Mem]*runtime.Pinner
}

// MemAlias implements generic.HostAliaser: a buffer that is b itself, at
// a synthetic address, with b pinned until MemFree.
func (d *clDevice) MemAlias(b []byte) (device.DevicePtr, cl.Mem, bool, error) {
	if err := d.init(); err != nil {
		return 0, 0, false, err
	}
	if !d.info.UnifiedMemory {
		return 0, 0, false, nil
	}
	d.aliasOnce.Do(d.probeAlias)
	if !d.alias.ok {
		return 0, 0, false, nil
	}
	pin := new(runtime.Pinner)
	pin.Pin(unsafe.SliceData(b))
	m, err := cl.CreateBufferHost(d.ctx, cl.MEM_READ_WRITE|cl.MEM_USE_HOST_PTR, uintptr(len(b)), unsafe.Pointer(unsafe.SliceData(b)))
	if err != nil {
		pin.Unpin()
		return 0, 0, false, d.wrap(fmt.Sprintf("alias %d bytes of host memory", len(b)), err)
	}
	d.amu.Lock()
	d.alias.pins[m] = pin
	d.amu.Unlock()
	return 0, m, true, nil
}

// unpinAlias unpins the host memory of m, if m is an alias (MemFree,
// Close, after m is released).
func (d *clDevice) unpinAlias(m cl.Mem) {
	d.amu.Lock()
	pin := d.alias.pins[m]
	delete(d.alias.pins, m)
	d.amu.Unlock()
	if pin != nil {
		pin.Unpin()
	}
}

// unpinAliases unpins the host memory of every alias; Close calls it
// once the buffers are released.
func (d *clDevice) unpinAliases() {
	d.amu.Lock()
	pins := d.alias.pins
	d.alias.pins = nil
	d.amu.Unlock()
	for _, pin := range pins {
		pin.Unpin()
	}
}

// probeAlias checks, once, that a USE_HOST_PTR buffer is the host memory
// itself: a host write made after the buffer is read through it, and a
// write through it is in the host memory, without a map.
func (d *clDevice) probeAlias() {
	d.alias.pins = map[cl.Mem]*runtime.Pinner{}
	if d.hooks.noAlias {
		d.alias.why = "a test pretends that the driver copies USE_HOST_PTR buffers"
		return
	}
	const n = 64
	raw := make([]byte, n+int(d.align))
	off := int(d.align-uint64(uintptr(unsafe.Pointer(&raw[0])))%d.align) % int(d.align)
	host := raw[off : off+n]
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	host[0] = 1
	m, err := cl.CreateBufferHost(d.ctx, cl.MEM_READ_WRITE|cl.MEM_USE_HOST_PTR, n, unsafe.Pointer(&host[0]))
	if err != nil {
		d.alias.why = fmt.Sprintf("clCreateBuffer with CL_MEM_USE_HOST_PTR: %v", err)
		return
	}
	defer cl.ReleaseMemObject(m)
	host[0] = 2
	got := make([]byte, 1)
	three := []byte{3}
	d.clock.mu.Lock() // the idle queue, against Close
	err = cl.EnqueueReadBuffer(d.ioq, m, true, 0, 1, unsafe.Pointer(&got[0]), nil)
	if err == nil {
		err = cl.EnqueueWriteBuffer(d.ioq, m, true, n-1, 1, unsafe.Pointer(&three[0]), nil)
	}
	d.clock.mu.Unlock()
	switch {
	case err != nil:
		d.alias.why = fmt.Sprintf("probe of a CL_MEM_USE_HOST_PTR buffer: %v", err)
	case got[0] != 2 || host[n-1] != 3:
		d.alias.why = fmt.Sprintf("the driver keeps CL_MEM_USE_HOST_PTR buffers in memory of its own (read %d, want 2; host holds %d, want 3)", got[0], host[n-1])
	default:
		d.alias.ok = true
	}
}
