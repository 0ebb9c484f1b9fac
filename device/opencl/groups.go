//go:build cgo

package opencl

import (
	"fmt"
	"unsafe"

	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Work-group limits. A kernel's CL_KERNEL_WORK_GROUP_SIZE is, on most
// drivers, a true limit: a GPU's is the most work-items its registers hold
// for that kernel, and a launch past it fails. rusticl 22.3 on llvmpipe
// reports 32 for every kernel, the empty one included, yet runs groups of
// the device's maximum (1024) right; a team kernel of 64 launched with 32
// there failed with CL_INVALID_WORK_GROUP_SIZE (its reqd_work_group_size).
//
// So the plugin trusts CL_KERNEL_WORK_GROUP_SIZE unless a probe shows it
// false on the device: the probe kernel below holds no resources of its
// own (one local word), so a driver whose limit reflects resources gives
// it the device's maximum (POCL, NVIDIA). Where the driver gives it less,
// the plugin launches it in two groups of the device's maximum; if every
// work-item then counts the whole group (a local counter between two
// barriers) and sees its own local id, the per-kernel figure is no limit
// there, and kernels get the device's (CL_DEVICE_MAX_WORK_GROUP_SIZE).
// The probe runs once per device, at the first kernel whose own limit is
// below the device's (or at Describe), so a driver whose figures are
// right pays for it only where a kernel's limit is low.

// groupProbeSource counts a work-group's items in local memory.
const groupProbeSource = `__kernel void gompt_probe_group(__global uint *out) {
  __local uint n;
  if (get_local_id(0) == 0) n = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&n);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[2 * get_global_id(0)] = n;
  out[2 * get_global_id(0) + 1] = (uint)get_local_id(0);
}
`

// groupTrust is what probeGroups found.
type groupTrust struct {
	kernelLimits bool   // CL_KERNEL_WORK_GROUP_SIZE is each kernel's limit
	why          string // what the probe saw, for Describe
}

// groupsTrust probes the device's work-group limits once (probeGroups).
// The device is open.
func (d *clDevice) groupsTrust() groupTrust {
	d.groupOnce.Do(func() { d.groups = d.probeGroups() })
	return d.groups
}

func (d *clDevice) probeGroups() groupTrust {
	trust := func(format string, args ...any) groupTrust {
		return groupTrust{kernelLimits: true, why: "each kernel's CL_KERNEL_WORK_GROUP_SIZE: " + fmt.Sprintf(format, args...)}
	}
	prog, kern, err := d.buildInternal(groupProbeSource, "gompt_probe_group")
	if err != nil {
		return trust("the probe kernel did not build (%v)", err)
	}
	defer cl.ReleaseProgram(prog)
	defer cl.ReleaseKernel(kern)
	wg, err := d.kernelGroup(kern)
	if err != nil {
		return trust("the probe kernel's could not be read (%v)", err)
	}
	if wg >= d.maxWG {
		return trust("a kernel holding no resources of its own gets %d, the device's maximum", wg)
	}
	n := d.maxWG
	if d.maxItem[0] > 0 {
		n = min(n, d.maxItem[0])
	}
	if err := d.runGroupProbe(kern, n); err != nil {
		return trust("the driver gives %d for a kernel holding no resources of its own, and two groups of %d did not run right (%v)", wg, n, err)
	}
	return groupTrust{why: fmt.Sprintf("not a limit on this driver, which gives %d for a kernel holding no resources of its own yet runs groups of %d right: kernels get CL_DEVICE_MAX_WORK_GROUP_SIZE (%d)", wg, n, d.maxWG)}
}

// kernelGroup reads kern's CL_KERNEL_WORK_GROUP_SIZE on the device (as
// hooks.kernelGroup says, in tests).
func (d *clDevice) kernelGroup(kern cl.Kernel) (int, error) {
	wg, err := cl.GetKernelWorkGroupUint(kern, d.dev, cl.KERNEL_WORK_GROUP_SIZE)
	if d.hooks.kernelGroup > 0 {
		return d.hooks.kernelGroup, nil
	}
	return int(wg), err
}

// runGroupProbe launches the probe kernel in two groups of n work-items on
// a queue of its own and checks what each item saw.
func (d *clDevice) runGroupProbe(kern cl.Kernel, n int) error {
	if d.hooks.groupsFail {
		return errInjected
	}
	q, err := d.createQueue()
	if err != nil {
		return err
	}
	defer cl.ReleaseCommandQueue(q)
	size := 2 * 2 * n * 4
	m, err := cl.CreateBuffer(d.ctx, cl.MEM_READ_WRITE, uintptr(size))
	if err != nil {
		return err
	}
	defer cl.ReleaseMemObject(m)
	global, local := [3]uintptr{uintptr(2 * n), 1, 1}, [3]uintptr{uintptr(n), 1, 1}
	args := []cl.Arg{{Size: 8, Value: uint64(m)}}
	if _, err := cl.EnqueueKernel(q, kern, args, 1, &global, &local, nil); err != nil {
		return err
	}
	out := make([]uint32, 2*2*n)
	if err := cl.EnqueueReadBuffer(q, m, true, 0, uintptr(size), unsafe.Pointer(&out[0]), nil); err != nil {
		return err
	}
	for g := 0; g < 2*n; g++ {
		if cnt, lid := out[2*g], out[2*g+1]; int(cnt) != n || int(lid) != g%n {
			return fmt.Errorf("work-item %d counted %d items in its group and has local id %d; want %d and %d", g, cnt, lid, n, g%n)
		}
	}
	return nil
}

// Team-local memory. A kernel's CL_KERNEL_LOCAL_MEM_SIZE is, on POCL and
// NVIDIA, the local memory it declares: one that asks more than
// CL_DEVICE_LOCAL_MEM_SIZE fails (POCL asserts and kills the process).
// rusticl 22.3 reports twice what a kernel declares (65536 for a __local
// array of 32768 bytes), which would refuse kernels of 16 to 32 KiB that
// it runs right. So a kernel is refused for its reported local memory only
// where a probe kernel declaring localProbeBytes is reported within
// localProbeSlack of that; elsewhere the figure the generator declared
// (Kernel.Needs, checked against CL_DEVICE_LOCAL_MEM_SIZE at load)
// stands. The probe runs once per device, at the first kernel whose
// reported figure exceeds the device's (or at Describe).
const (
	localProbeBytes = 1024
	localProbeSlack = 512
)

const localProbeSource = `__kernel void gompt_probe_local(__global uint *out) {
  __local uint a[256];
  a[get_local_id(0) & 255] = (uint)get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = a[0];
}
`

// kernelLocal reads kern's CL_KERNEL_LOCAL_MEM_SIZE on the device (as
// hooks.localScale says, in tests).
func (d *clDevice) kernelLocal(kern cl.Kernel) (uint64, error) {
	lm, err := cl.GetKernelWorkGroupUint(kern, d.dev, cl.KERNEL_LOCAL_MEM_SIZE)
	if d.hooks.localScale > 0 {
		lm *= uint64(d.hooks.localScale)
	}
	return lm, err
}

// localTrust is what probeLocal found.
type localTrust struct {
	honest bool   // CL_KERNEL_LOCAL_MEM_SIZE is what a kernel declares
	why    string // for Describe
}

// localsTrust probes the driver's CL_KERNEL_LOCAL_MEM_SIZE once
// (probeLocal). The device is open.
func (d *clDevice) localsTrust() localTrust {
	d.localOnce.Do(func() { d.locals = d.probeLocal() })
	return d.locals
}

func (d *clDevice) probeLocal() localTrust {
	prog, kern, err := d.buildInternal(localProbeSource, "gompt_probe_local")
	if err != nil {
		return localTrust{honest: true, why: fmt.Sprintf("each kernel's CL_KERNEL_LOCAL_MEM_SIZE (the probe kernel did not build: %v)", err)}
	}
	defer cl.ReleaseProgram(prog)
	defer cl.ReleaseKernel(kern)
	lm, err := d.kernelLocal(kern)
	switch {
	case err != nil:
		return localTrust{why: fmt.Sprintf("the kernels' declared needs: CL_KERNEL_LOCAL_MEM_SIZE could not be read (%v)", err)}
	case lm >= localProbeBytes && lm < localProbeBytes+localProbeSlack:
		return localTrust{honest: true, why: fmt.Sprintf("each kernel's CL_KERNEL_LOCAL_MEM_SIZE (%d for a kernel declaring %d bytes)", lm, localProbeBytes)}
	}
	return localTrust{why: fmt.Sprintf("the kernels' declared needs: the driver's CL_KERNEL_LOCAL_MEM_SIZE is %d for a kernel declaring %d bytes", lm, localProbeBytes)}
}
