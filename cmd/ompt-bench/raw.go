package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/curaw"
	"github.com/gompt/gompt/device/opencl/clraw"
	"github.com/gompt/gompt/target"
)

// The raw_* cases do the same work as their gompt counterparts through the
// plugin's binding alone, so the two figures can be compared in one run.
func init() {
	register(bcase{name: "raw_cl_empty_kernel", backend: "opencl", bench: rawLoop(clraw.EmptyKernel)})
	register(bcase{name: "raw_cl_h2d_64MiB", backend: "opencl", bytes: 64 << 20, bench: rawCopy(clraw.Copy, 64<<20, true)})
	register(bcase{name: "raw_cl_d2h_64MiB", backend: "opencl", bytes: 64 << 20, bench: rawCopy(clraw.Copy, 64<<20, false)})
	// The same from pinned host memory (a mapped CL_MEM_ALLOC_HOST_PTR
	// buffer): the bound the plugin's staged copies approach on a GPU.
	register(bcase{name: "raw_cl_h2d_64MiB_pinned", backend: "opencl", bytes: 64 << 20, bench: rawCopy(clraw.CopyPinned, 64<<20, true)})
	register(bcase{name: "raw_cl_d2h_64MiB_pinned", backend: "opencl", bytes: 64 << 20, bench: rawCopy(clraw.CopyPinned, 64<<20, false)})

	register(bcase{name: "h2d_256MiB", backend: "cuda", bytes: 256 << 20, bench: update(256<<20, true)})
	register(bcase{name: "d2h_256MiB", backend: "cuda", bytes: 256 << 20, bench: update(256<<20, false)})
	register(bcase{name: "saxpy_2e28", backend: "cuda", bytes: 12 << 28, bench: saxpy(1 << 28)})
	register(bcase{name: "d2d_copy_2e28", backend: "cuda", bytes: 2 * 4 << 28, bench: d2d(4 << 28)})
	register(bcase{name: "raw_cu_empty_launch_sync", backend: "cuda", bench: rawLoop(curaw.EmptyLaunchSync)})
	register(bcase{name: "raw_cu_h2d_256MiB", backend: "cuda", bytes: 256 << 20, bench: rawCopy(curaw.Copy, 256<<20, true)})
	register(bcase{name: "raw_cu_d2h_256MiB", backend: "cuda", bytes: 256 << 20, bench: rawCopy(curaw.Copy, 256<<20, false)})
}

// deviceOf returns the plugin device behind runtime device number n,
// from its plugin's device list (target.DeviceInfo's Plugin and Index).
func deviceOf(n int) (device.Device, error) {
	for _, info := range target.Devices() {
		if info.Num != n {
			continue
		}
		p, ok := device.Lookup(info.Plugin)
		if !ok {
			return nil, fmt.Errorf("device %d: plugin %q is not registered", n, info.Plugin)
		}
		ds, err := p.Devices()
		if info.Index >= len(ds) {
			return nil, fmt.Errorf("device %d: plugin %s has no device %d (%v)", n, info.Plugin, info.Index, err)
		}
		return ds[info.Index], nil
	}
	return nil, fmt.Errorf("device %d is not an offload device", n)
}

// rawLoop turns "do it iters times and say how long" into a benchmark.
func rawLoop(fn func(device.Device, int) (time.Duration, error)) func(int) (func(*testing.B), func(), error) {
	return func(n int) (func(*testing.B), func(), error) {
		d, err := deviceOf(n)
		if err != nil {
			return nil, nil, err
		}
		if _, err := fn(d, 1); err != nil {
			return nil, nil, err
		}
		return func(b *testing.B) {
			b.ResetTimer()
			_, err := fn(d, b.N)
			must(b, err)
		}, nil, nil
	}
}

func rawCopy(fn func(device.Device, int, bool, int) (time.Duration, error), size int, toDevice bool) func(int) (func(*testing.B), func(), error) {
	return rawLoop(func(d device.Device, iters int) (time.Duration, error) { return fn(d, size, toDevice, iters) })
}

// d2d: a device-to-device copy of size bytes between two allocations.
func d2d(size int) func(int) (func(*testing.B), func(), error) {
	return func(dev int) (func(*testing.B), func(), error) {
		src, err := target.AllocMem(size, dev)
		if err != nil {
			return nil, nil, err
		}
		dst, err := target.AllocMem(size, dev)
		if err != nil {
			target.FreeMem(src, dev)
			return nil, nil, err
		}
		return func(b *testing.B) {
				for b.Loop() {
					must(b, target.Memcpy(target.On(dev, dst), target.On(dev, src), size))
				}
			}, func() {
				target.FreeMem(src, dev)
				target.FreeMem(dst, dev)
			}, nil
	}
}
