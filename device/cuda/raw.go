//go:build cgo

package cuda

import (
	"fmt"
	"slices"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// emptyPTX is an empty kernel for RawEmptyLaunchSync.
const emptyPTX = `.version 6.3
.target sm_75
.address_size 64
.visible .entry gompt_raw_empty()
{
	ret;
}
`

// RawEmptyLaunchSync is the baseline of the empty_target benchmark: it
// launches an empty kernel (one block of one thread) on a fresh stream and
// synchronises the stream, iters times, through the binding alone, and
// returns the median time of one launch plus synchronise. The kernel is
// JIT-compiled at the first call on a device and kept until the device
// closes, as Load keeps kernels. d must be a device of this plugin. Safe to
// call concurrently with other use of d.
func RawEmptyLaunchSync(d device.Device, iters int) (time.Duration, error) {
	g, err := gpuOf(d)
	if err != nil {
		return 0, err
	}
	if err := g.broken("raw baseline"); err != nil {
		return 0, err
	}
	if iters < 1 {
		return 0, fmt.Errorf("cuda: RawEmptyLaunchSync: iters %d: must be at least 1", iters)
	}
	fn, err := g.rawEmpty()
	if err != nil {
		return 0, err
	}
	s, err := cu.StreamCreate(g.ctx, cu.STREAM_NON_BLOCKING)
	if err != nil {
		return 0, err
	}
	defer cu.StreamDestroy(g.ctx, s)
	one := [3]uint32{1, 1, 1}
	times := make([]time.Duration, 0, iters)
	for i := -1; i < iters; i++ { // one warm-up launch
		t0 := time.Now()
		if err := cu.LaunchKernel(g.ctx, fn, one, one, s, nil); err != nil {
			return 0, err
		}
		if err := cu.StreamSynchronize(g.ctx, s); err != nil {
			return 0, err
		}
		if i >= 0 {
			times = append(times, time.Since(t0))
		}
	}
	return median(times), nil
}

// rawEmpty returns the empty kernel of RawEmptyLaunchSync, loading it on
// the first call.
func (g *gpu) rawEmpty() (cu.Function, error) {
	g.loadMu.Lock()
	defer g.loadMu.Unlock()
	if g.rawFn != nil {
		return g.rawFn, nil
	}
	g.mu.Lock()
	err := g.usable("raw baseline")
	g.mu.Unlock()
	if err != nil {
		return nil, err
	}
	mod, _, err := cu.ModuleLoadDataEx(g.ctx, emptyPTX)
	if err != nil {
		return nil, err
	}
	fn, err := cu.ModuleGetFunction(g.ctx, mod, "gompt_raw_empty")
	if err != nil {
		cu.ModuleUnload(g.ctx, mod)
		return nil, err
	}
	g.rawMod, g.rawFn = mod, fn
	return fn, nil
}

// RawCopy is the baseline of the h2d and d2h benchmarks: it copies bytes
// between page-locked host memory (cuMemAllocHost) and device memory
// (cuMemAlloc) with the synchronous cuMemcpyHtoD or cuMemcpyDtoH, iters
// times, through the binding alone, and returns the median time of one
// copy. d must be a device of this plugin.
func RawCopy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	g, err := gpuOf(d)
	if err != nil {
		return 0, err
	}
	if err := g.broken("raw baseline"); err != nil {
		return 0, err
	}
	if bytes < 1 || iters < 1 {
		return 0, fmt.Errorf("cuda: RawCopy: bytes %d, iters %d: both must be at least 1", bytes, iters)
	}
	host, err := cu.MemAllocHost(g.ctx, bytes)
	if err != nil {
		return 0, err
	}
	defer cu.MemFreeHost(g.ctx, host)
	dev, err := cu.MemAlloc(g.ctx, bytes)
	if err != nil {
		return 0, err
	}
	defer cu.MemFree(g.ctx, dev)
	times := make([]time.Duration, 0, iters)
	for i := -1; i < iters; i++ {
		t0 := time.Now()
		if toDevice {
			err = cu.MemcpyHtoD(g.ctx, dev, host, bytes)
		} else {
			err = cu.MemcpyDtoH(g.ctx, host, dev, bytes)
		}
		if err != nil {
			return 0, err
		}
		if i >= 0 {
			times = append(times, time.Since(t0))
		}
	}
	return median(times), nil
}

func median(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

var (
	_ device.Device   = (*gpu)(nil)
	_ device.MemInfo  = (*gpu)(nil)
	_ device.Closer   = (*gpu)(nil)
	_ device.Queue    = (*queue)(nil)
	_ device.Event    = (*event)(nil)
	_ device.Function = (*function)(nil)
)

// RawLoad is the baseline of the kernel-load benchmarks: it loads ptx as a
// module (cuModuleLoadDataEx, the JIT compilation when the driver's compute
// cache does not have it) and unloads it, iters times, and returns the
// median time of one load. With unique, each load's PTX ends with a comment
// of its own (a time and a count), so no compute cache, on disk or in the
// process, can serve it: the figure is a first load's. d must be a device
// of this plugin.
func RawLoad(d device.Device, ptx string, unique bool, iters int) (time.Duration, error) {
	g, err := gpuOf(d)
	if err != nil {
		return 0, err
	}
	if err := g.broken("raw baseline"); err != nil {
		return 0, err
	}
	if iters < 1 {
		return 0, fmt.Errorf("cuda: RawLoad: iters %d: must be at least 1", iters)
	}
	nonce := time.Now().UnixNano()
	times := make([]time.Duration, 0, iters)
	for i := range iters {
		src := ptx
		if unique {
			src = fmt.Sprintf("%s\n// gompt RawLoad %d %d\n", ptx, nonce, i)
		}
		t0 := time.Now()
		mod, _, err := cu.ModuleLoadDataEx(g.ctx, src)
		if err != nil {
			return 0, g.fail("raw load", err)
		}
		times = append(times, time.Since(t0))
		if err := cu.ModuleUnload(g.ctx, mod); err != nil {
			return 0, g.fail("raw unload", err)
		}
	}
	return median(times), nil
}
