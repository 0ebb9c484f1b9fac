//go:build cgo

package opencl

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// StagedLaunches returns how many launches on OpenCL device d passed
// unaligned buffer arguments through temporary buffers.
func StagedLaunches(d device.Device) uint64 { return d.(*clDevice).staged.Load() }

// pretend returns a second device on the same OpenCL device as dv, with
// its own context and queues, that behaves as a device with hooks h would;
// align, when not 0, replaces CL_DEVICE_MEM_BASE_ADDR_ALIGN (a multiple of
// the real one, so that its aligned offsets stay legal sub-buffer origins).
// The device is closed when t ends.
func pretend(t testing.TB, dv device.Device, h hooks, align uint64) *clDevice {
	t.Helper()
	base := dv.(*clDevice)
	pname := ""
	for _, a := range base.info.Extra {
		if a.Key == "platform" {
			pname = a.Value
		}
	}
	d, err := newDevice(base.n+64, base.plat, pname, base.dev)
	require.NoError(t, err)
	d.id = fmt.Sprintf("%s(pretend)", base.id)
	d.hooks = h
	if h.callbacks {
		d.waitCB = true
	}
	if h.staging {
		d.stage = true
	}
	if h.noHostClock {
		d.timer = false // as NVIDIA: no host timer either
	}
	if align != 0 {
		require.Zero(t, align%base.align, "pretend alignment %d is not a multiple of the device's %d", align, base.align)
		d.align = align
		extra := append([]device.Attr(nil), d.info.Extra...)
		for i := range extra {
			if extra[i].Key == "mem_base_addr_align" {
				extra[i].Value = strconv.FormatUint(align, 10)
			}
		}
		d.info.Extra = extra
	}
	d.initGeneric() // with the id and Info changed above
	require.NoError(t, d.init())
	t.Cleanup(func() {
		assert.NoError(t, d.Close(), "closing the pretend device")
	})
	return d
}

// PretendAlign returns a device on the same OpenCL device as d whose
// CL_DEVICE_MEM_BASE_ADDR_ALIGN reads as align bytes (NVIDIA's 512, say,
// on POCL's 128), closed when t ends.
func PretendAlign(t testing.TB, d device.Device, align int) device.Device {
	return pretend(t, d, hooks{}, uint64(align))
}

// PretendNVIDIA returns a device on the same OpenCL device as d that
// behaves as NVIDIA's OpenCL does where the two differ: base addresses
// aligned to 512 bytes (or 4 times d's, whichever is more), no host timer
// and a profiling clock on no host clock, markers without times, waits
// through event callbacks, large copies through pinned staging buffers.
// Closed when t ends.
func PretendNVIDIA(t testing.TB, d device.Device) device.Device {
	return pretend(t, d, asNVIDIA, max(512, 4*d.(*clDevice).align))
}

// PretendNoTimes returns a device on the same OpenCL device as d whose
// driver gives no usable profiling times, as rusticl's (the device's times
// are then host readings that bracket each operation), closed when t ends.
func PretendNoTimes(t testing.TB, d device.Device) device.Device {
	return pretend(t, d, hooks{noTimes: true}, 0)
}

// PretendSmallGroups returns a device on the same OpenCL device as d whose
// driver reports a CL_KERNEL_WORK_GROUP_SIZE of n for every kernel, as
// rusticl's (32), closed when t ends.
func PretendSmallGroups(t testing.TB, d device.Device, n int) device.Device {
	return pretend(t, d, hooks{kernelGroup: n}, 0)
}

// PretendTrueSmallGroups is PretendSmallGroups on a driver whose small
// limits are true: a group of the device's maximum fails there.
func PretendTrueSmallGroups(t testing.TB, d device.Device, n int) device.Device {
	return pretend(t, d, hooks{kernelGroup: n, groupsFail: true}, 0)
}

// PretendLocalScale returns a device on the same OpenCL device as d
// whose driver reports n times each kernel's local memory, as rusticl's
// (2), closed when t ends.
func PretendLocalScale(t testing.TB, d device.Device, n int) device.Device {
	return pretend(t, d, hooks{localScale: n}, 0)
}

var asNVIDIA = hooks{noHostClock: true, kstamps: true, callbacks: true, staging: true}

// StagingBuffers returns how many staging buffers OpenCL device d has made.
func StagingBuffers(d device.Device) int {
	_, made := d.(*clDevice).pool.Counts()
	return made
}

// WorkGroupLimits returns the largest work-group of f on its device and
// the kernel's preferred work-group size multiple.
func WorkGroupLimits(f device.Function) (limit, multiple int) {
	fn := f.(*function)
	return fn.lim.max, fn.lim.multiple
}

// CachedSubBuffers returns how many sub-buffers OpenCL device d keeps for
// launch arguments inside buffers.
func CachedSubBuffers(d device.Device) int {
	c := &d.(*clDevice).subs
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.subs)
}

// LoopsLimited reports whether OpenCL device d ends a work-item's loops
// after a fixed number of turns in all (Mesa's llvmpipe), so that its
// kernels are built with the loop guard, and what its probe saw.
func LoopsLimited(d device.Device) (bool, string) {
	cd := d.(*clDevice)
	if err := cd.init(); err != nil {
		return false, err.Error()
	}
	limited := cd.loopGuard()
	return limited, cd.loops.why
}

// PretendLoopGuard returns a device on the same OpenCL device as d that
// builds kernels with the loop guard on, as on a driver that ends loops
// early, closed when t ends.
func PretendLoopGuard(t testing.TB, d device.Device) device.Device {
	return pretend(t, d, hooks{loopGuard: true}, 0)
}

// Guarded reports whether f was built with the loop guard and takes a
// fault record for it beyond its kernel's DeviceParams.
func Guarded(f device.Function) bool { return f.(*function).guard }

// SextBroken reports whether OpenCL device d gets signed 64-bit
// comparisons of values sign-extended from 32 bits wrong (Mesa's), so
// that its kernels are built with SextCompareDefine, and what its probe
// saw.
func SextBroken(d device.Device) (bool, string) {
	cd := d.(*clDevice)
	if err := cd.init(); err != nil {
		return false, err.Error()
	}
	broken := cd.sextBroken()
	return broken, cd.sext.why
}

// PretendSextCompare returns a device on the same OpenCL device as d that
// builds kernels with SextCompareDefine, as on a driver that gets
// comparisons of sign-extended values wrong, closed when t ends.
func PretendSextCompare(t testing.TB, d device.Device) device.Device {
	return pretend(t, d, hooks{sextCompare: true}, 0)
}

// SextCompared reports whether f was built with SextCompareDefine.
func SextCompared(f device.Function) bool { return f.(*function).sext }

// PretendCopyingHostPtr returns a device on the same OpenCL device as d
// whose driver, as the alias probe finds, keeps CL_MEM_USE_HOST_PTR
// buffers in memory of its own; closed when t ends.
func PretendCopyingHostPtr(t testing.TB, d device.Device) device.Device {
	return pretend(t, d, hooks{noAlias: true}, 0)
}
