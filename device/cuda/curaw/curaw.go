//go:build cgo

package curaw

import (
	"fmt"
	"slices"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// cudaDevice is what a device of the cuda plugin offers this package.
type cudaDevice interface {
	// BindingContext returns the device's CUDA context, or the device's
	// error for operation op when it is closed or its context is lost.
	BindingContext(op string) (cu.Context, error)
}

func cudaContext(d device.Device, op string) (cu.Context, error) {
	cd, ok := d.(cudaDevice)
	if !ok {
		return nil, fmt.Errorf("curaw: %s: %T is not a device of the cuda plugin", op, d)
	}
	return cd.BindingContext(op)
}

// EmptyPTX is the empty kernel EmptyLaunchSync launches.
const EmptyPTX = `.version 6.3
.target sm_75
.address_size 64
.visible .entry gompt_raw_empty()
{
	ret;
}
`

// EmptyLaunchSync is the baseline of the empty_target benchmark: it
// launches an empty kernel (one block of one thread) on a fresh stream and
// synchronises the stream, iters times after one untimed warm-up, and
// returns the median time of one launch plus synchronise. The kernel is
// JIT-compiled before the first launch and unloaded at the end (neither is
// timed). d must be a device of the cuda plugin. Safe to call concurrently
// with other use of d.
func EmptyLaunchSync(d device.Device, iters int) (time.Duration, error) {
	if iters < 1 {
		return 0, fmt.Errorf("curaw: EmptyLaunchSync: iters %d: must be at least 1", iters)
	}
	ctx, err := cudaContext(d, "raw baseline")
	if err != nil {
		return 0, err
	}
	mod, _, err := cu.ModuleLoadDataEx(ctx, EmptyPTX)
	if err != nil {
		return 0, err
	}
	defer cu.ModuleUnload(ctx, mod)
	fn, err := cu.ModuleGetFunction(ctx, mod, "gompt_raw_empty")
	if err != nil {
		return 0, err
	}
	s, err := cu.StreamCreate(ctx, cu.STREAM_NON_BLOCKING)
	if err != nil {
		return 0, err
	}
	defer cu.StreamDestroy(ctx, s)
	one := [3]uint32{1, 1, 1}
	times := make([]time.Duration, 0, iters)
	for i := -1; i < iters; i++ { // one warm-up launch
		t0 := time.Now()
		if err := cu.LaunchKernel(ctx, fn, one, one, s, nil); err != nil {
			return 0, err
		}
		if err := cu.StreamSynchronize(ctx, s); err != nil {
			return 0, err
		}
		if i >= 0 {
			times = append(times, time.Since(t0))
		}
	}
	return median(times), nil
}

// Copy is the baseline of the h2d and d2h benchmarks: it copies bytes
// between page-locked host memory (cuMemAllocHost) and device memory
// (cuMemAlloc) with the synchronous cuMemcpyHtoD or cuMemcpyDtoH, iters
// times after one untimed warm-up, and returns the median time of one
// copy. d must be a device of the cuda plugin.
func Copy(d device.Device, bytes int, toDevice bool, iters int) (time.Duration, error) {
	if bytes < 1 || iters < 1 {
		return 0, fmt.Errorf("curaw: Copy: bytes %d, iters %d: both must be at least 1", bytes, iters)
	}
	ctx, err := cudaContext(d, "raw baseline")
	if err != nil {
		return 0, err
	}
	host, err := cu.MemAllocHost(ctx, bytes)
	if err != nil {
		return 0, err
	}
	defer cu.MemFreeHost(ctx, host)
	dev, err := cu.MemAlloc(ctx, bytes)
	if err != nil {
		return 0, err
	}
	defer cu.MemFree(ctx, dev)
	times := make([]time.Duration, 0, iters)
	for i := -1; i < iters; i++ {
		t0 := time.Now()
		if toDevice {
			err = cu.MemcpyHtoD(ctx, dev, host, bytes)
		} else {
			err = cu.MemcpyDtoH(ctx, host, dev, bytes)
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

// Load is the baseline of the kernel-load benchmarks: it loads ptx as
// a module (cuModuleLoadDataEx, the JIT compilation when the driver's
// compute cache does not have it) and unloads it, iters times, and returns
// the median time of one load. With unique, each load's PTX ends with a
// comment of its own (a time and a count), so no compute cache, on disk or
// in the process, can serve it: the figure is a first load's. d must be a
// device of the cuda plugin.
func Load(d device.Device, ptx string, unique bool, iters int) (time.Duration, error) {
	if iters < 1 {
		return 0, fmt.Errorf("curaw: Load: iters %d: must be at least 1", iters)
	}
	ctx, err := cudaContext(d, "raw baseline")
	if err != nil {
		return 0, err
	}
	nonce := time.Now().UnixNano()
	times := make([]time.Duration, 0, iters)
	for i := range iters {
		src := ptx
		if unique {
			src = fmt.Sprintf("%s\n// gompt RawLoad %d %d\n", ptx, nonce, i)
		}
		t0 := time.Now()
		mod, _, err := cu.ModuleLoadDataEx(ctx, src)
		if err != nil {
			return 0, err
		}
		times = append(times, time.Since(t0))
		if err := cu.ModuleUnload(ctx, mod); err != nil {
			return 0, err
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
