package opencl_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devices returns every OpenCL device, skipping the test (with the plugin's
// reason) when there is none, unless CI is set: then it fails.
func devices(t testing.TB) []device.Device {
	t.Helper()
	p, ok := device.Lookup(opencl.Name)
	require.True(t, ok, "plugin opencl is not registered")
	devs, err := p.Devices()
	if len(devs) == 0 {
		require.Error(t, err, "Devices returned no device and no error")
		assert.ErrorIs(t, err, device.ErrNoDevice, "no-device error %v does not wrap device.ErrNoDevice", err)
		require.Empty(t, os.Getenv("CI"), "CI is set and there is no OpenCL device: %v", err)
		t.Skipf("no OpenCL device: %v", err)
	}
	require.NoError(t, err, "Devices returned %d devices and", len(devs))
	return devs
}

// baseAlign returns the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes.
func baseAlign(t *testing.T, d device.Device) int {
	t.Helper()
	for _, a := range d.Info().Extra {
		if a.Key == "mem_base_addr_align" {
			n := 0
			for _, c := range a.Value {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	require.Fail(t, "no mem_base_addr_align in Extra")
	return 0
}

// withPretend returns devs and, for each, the same device pretending
// NVIDIA's base address alignment of 512 bytes (4 times the real one if
// that is more): offsets POCL takes as sub-buffers are then staged.
func withPretend(t *testing.T, devs []device.Device) []device.Device {
	out := append([]device.Device(nil), devs...)
	for _, d := range devs {
		out = append(out, opencl.PretendAlign(t, d, max(512, 4*baseAlign(t, d))))
	}
	return out
}

func wantCode(t *testing.T, what string, err error, code device.Code) {
	t.Helper()
	require.Error(t, err, "%s: no error, want %s", what, code)
	require.Equal(t, code, device.CodeOf(err), "%s: code (error: %v)", what, err)
}

func TestConformance(t *testing.T) {
	for _, d := range devices(t) {
		t.Run(d.Info().Name, func(t *testing.T) {
			devicetest.TestDevice(t, d, kernels.Conformance()...)
		})
		// The same device behaving as NVIDIA's OpenCL where they differ
		// (512-byte base alignment, so interior pointers POCL takes as
		// sub-buffers are staged; calibrated clock; kernel stamps;
		// callback waits).
		t.Run(d.Info().Name+"/as-nvidia", func(t *testing.T) {
			devicetest.TestDevice(t, opencl.PretendNVIDIA(t, d), kernels.Conformance()...)
		})
		// Behaving as rusticl does: no usable profiling times (host
		// readings bracket each operation instead), and 32 as every
		// kernel's CL_KERNEL_WORK_GROUP_SIZE, which groups of the
		// device's maximum show to be no limit (the team kernel
		// matmul_tiled runs its 256).
		t.Run(d.Info().Name+"/as-rusticl", func(t *testing.T) {
			devicetest.TestDevice(t, opencl.PretendNoTimes(t, opencl.PretendSmallGroups(t, d, 32)), kernels.Conformance()...)
		})
	}
}

// TestLocalMemoryKnownAtLoad loads a hand-written kernel declaring 64
// bytes more team-local memory than the device has: where the driver's
// CL_KERNEL_LOCAL_MEM_SIZE is true (POCL), the load fails with a
// *device.NeedError naming the bytes and CL_DEVICE_LOCAL_MEM_SIZE, before
// any copy (POCL's launch of it killed the process with an assertion).
// Where the driver reports twice the truth (rusticl; POCL pretending so),
// a kernel declaring three quarters of the device's local memory loads:
// an inflated figure refuses nothing.
func TestLocalMemoryKnownAtLoad(t *testing.T) {
	local := func(name string, n uint64) *device.Kernel {
		return kernel(name, fmt.Sprintf(`__kernel void %s(__global uchar *o) {
  __local uchar a[%d];
  a[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = a[0];
}
`, name, n), device.Param{Name: "o", Kind: device.ParamBuffer, Elem: device.ParamUint8})
	}
	for _, d := range devices(t) {
		desc, err := d.(device.Describer).Describe()
		require.NoError(t, err)
		trusted := ""
		for _, a := range desc.Extra {
			if a.Key == "kernel_local_mem_size" {
				trusted = a.Value
			}
		}
		lm := d.Info().LocalMem
		_, err = d.Load(local("too_local", lm+64))
		if strings.HasPrefix(trusted, "each kernel's") {
			var ne *device.NeedError
			require.ErrorAs(t, err, &ne, "%s: a kernel declaring %d bytes of local memory of %d", d.Info().Name, lm+64, lm)
			assert.ErrorIs(t, err, device.ErrUnsupported)
			assert.Equal(t, device.NeedLocalMem, ne.Need.Kind)
			assert.Contains(t, err.Error(), fmt.Sprintf("%d bytes of team-local memory", lm+64))
			assert.Contains(t, err.Error(), "CL_DEVICE_LOCAL_MEM_SIZE")
		} else {
			t.Logf("%s: kernels' local memory from %s: a kernel declaring %d bytes loads: %v", d.Info().Name, trusted, lm+64, err)
		}
		inflated := opencl.PretendLocalScale(t, d, 2)
		_, err = inflated.Load(local("three_quarters_local", lm*3/4))
		assert.NoError(t, err, "%s reporting twice each kernel's local memory: a kernel declaring %d bytes of %d", d.Info().Name, lm*3/4, lm)
	}
}

// TestTeamSizeKnownAtLoad loads the team kernel matmul_tiled (teams of
// 256) on devices whose driver gives every kernel a
// CL_KERNEL_WORK_GROUP_SIZE of 32, as rusticl does. Where groups of the
// device's maximum run right, that figure is no limit: the kernel loads
// and launches its teams of 256 (it failed to launch, with
// CL_INVALID_WORK_GROUP_SIZE, when the plugin took the 32). Where they do
// not, the figure is the kernel's true limit, and the load itself fails,
// before any copy, with a *device.NeedError naming the team size, the
// kernel's source line and the limit.
func TestTeamSizeKnownAtLoad(t *testing.T) {
	// matmul_tiled with its team size declared as gompt-kernels declares it.
	tiled := *kernels.MatmulTiled
	if tiled.TeamSize() == 0 {
		tiled.Needs = append(tiled.Needs[:len(tiled.Needs):len(tiled.Needs)],
			device.Need{Kind: device.NeedTeamSize, Amount: 256, Use: "teams of 256 threads (team=256)", Pos: "library.go:88"})
	}
	require.Equal(t, 256, tiled.TeamSize())
	for _, d := range devices(t) {
		f, err := opencl.PretendSmallGroups(t, d, 32).Load(&tiled)
		require.NoError(t, err, "%s: load matmul_tiled where 32 is no limit", d.Info().Name)
		limit, _ := opencl.WorkGroupLimits(f)
		assert.Equal(t, 256, limit, "matmul_tiled's work-group limit (its MaxThreads) where 32 is no limit")
		_, local, err := opencl.LaunchGeometry(f, device.Shape{Size: [3]int{3}, Teams: 3, Threads: 256})
		require.NoError(t, err)
		assert.Equal(t, [3]int{256, 1, 1}, local, "a team kernel's local size is its team size")
		_, local, err = opencl.LaunchGeometry(f, device.Shape{Size: [3]int{3}, Teams: 3})
		require.NoError(t, err)
		assert.Equal(t, [3]int{256, 1, 1}, local, "a team kernel's local size is its team size, Threads unset")

		small := opencl.PretendTrueSmallGroups(t, d, 32)
		_, err = small.Load(&tiled)
		var ne *device.NeedError
		require.ErrorAs(t, err, &ne, "%s: load matmul_tiled where 32 is the true limit", d.Info().Name)
		assert.ErrorIs(t, err, device.ErrUnsupported)
		assert.Equal(t, device.NeedTeamSize, ne.Need.Kind, "the need refused: %v", err)
		assert.Contains(t, err.Error(), "at most 32 threads (CL_KERNEL_WORK_GROUP_SIZE)", "the message says the limit and where it comes from")
		if ne.Need.Pos != "" {
			assert.Contains(t, err.Error(), ne.Need.Pos, "the message names the kernel's source line")
		}
		mi := small.(device.MemInfo)
		b, n := mi.MemInUse()
		assert.Zero(t, b+int64(n), "nothing allocated by a refused load")
	}
}

func TestInfo(t *testing.T) {
	for _, d := range devices(t) {
		in := d.Info()
		t.Logf("%s: %+v", in.Name, in)
		assert.Equal(t, "opencl", in.Backend, "info %+v: want backend opencl, a name, a vendor and an OpenCL version", in)
		assert.NotEmpty(t, in.Name, "info %+v: want backend opencl, a name, a vendor and an OpenCL version", in)
		assert.NotEmpty(t, in.Vendor, "info %+v: want backend opencl, a name, a vendor and an OpenCL version", in)
		assert.True(t, strings.HasPrefix(in.Version, "OpenCL "), "info %+v: want backend opencl, a name, a vendor and an OpenCL version", in)
		assert.NotZero(t, in.GlobalMem, "info %+v: sizes and counts must be positive, MaxAlloc <= GlobalMem", in)
		assert.NotZero(t, in.MaxAlloc, "info %+v: sizes and counts must be positive, MaxAlloc <= GlobalMem", in)
		assert.LessOrEqual(t, in.MaxAlloc, in.GlobalMem, "info %+v: sizes and counts must be positive, MaxAlloc <= GlobalMem", in)
		assert.Positive(t, in.ComputeUnits, "info %+v: sizes and counts must be positive, MaxAlloc <= GlobalMem", in)
		assert.Positive(t, in.MaxThreadsPerTeam, "info %+v: sizes and counts must be positive, MaxAlloc <= GlobalMem", in)
		assert.Contains(t, []string{"gpu", "cpu", "accelerator", "custom"}, in.Type, "type")
		keys := map[string]string{}
		for _, a := range in.Extra {
			keys[a.Key] = a.Value
		}
		for _, k := range []string{"platform", "extensions", "mem_base_addr_align"} {
			assert.NotEmpty(t, keys[k], "Extra lacks %q: %v", k, in.Extra)
		}
		c := in.Caps
		assert.Equal(t, "cl_khr_fp64", c.FP64.Name, "Caps.FP64 names its extension")
		assert.Equal(t, "cl_khr_int64_base_atomics", c.Int64Atomics.Name, "Caps.Int64Atomics names its extension")
		assert.Equal(t, int64(in.LocalMem), c.LocalMem.N, "Caps.LocalMem is CL_DEVICE_LOCAL_MEM_SIZE")
		assert.Equal(t, int64(in.MaxThreadsPerTeam), c.TeamSize.N, "Caps.TeamSize is CL_DEVICE_MAX_WORK_GROUP_SIZE")
		assert.Empty(t, in.TimeSource, "the clock is known only once the device opens (Describe)")
		// Describe opens the device and says where its times come from.
		desc, err := d.(device.Describer).Describe()
		require.NoError(t, err, "Describe")
		assert.NotEmpty(t, desc.TimeSource, "Describe: TimeSource")
		assert.Equal(t, desc.BracketTimes, strings.HasPrefix(desc.TimeSource, "host CLOCK_MONOTONIC readings that bracket"), "Describe: BracketTimes %v with TimeSource %q", desc.BracketTimes, desc.TimeSource)
		assert.Equal(t, in.Caps, desc.Caps, "Describe keeps the capabilities")
		t.Logf("%s: times from %s; kernels' limits: %v", in.Name, desc.TimeSource, desc.Extra[len(desc.Extra)-4:])
		_, ok := d.(device.MemInfo)
		assert.True(t, ok, "device does not implement device.MemInfo")
		_, ok = d.(device.Closer)
		assert.True(t, ok, "device does not implement device.Closer")
	}
}

func kernel(name, src string, params ...device.Param) *device.Kernel {
	return &device.Kernel{Name: name, Params: params,
		Images: []device.Image{{Kind: opencl.ImageC, Source: src}}}
}

func TestBuildFailureCarriesLog(t *testing.T) {
	for _, d := range devices(t) {
		k := kernel("broken", "__kernel void broken(__global int *p) { p[0] = gompt_undefined_identifier; }\n",
			device.Param{Name: "p", Kind: device.ParamBuffer, Elem: device.ParamInt32})
		_, err := d.Load(k)
		wantCode(t, "load of a kernel that does not compile", err, device.CodeInvalidBinary)
		assert.Contains(t, err.Error(), "gompt_undefined_identifier", "build error does not carry the build log naming the bad identifier:\n%v", err)
		assert.Contains(t, err.Error(), "build log", "build error does not carry the build log naming the bad identifier:\n%v", err)
		// The failure is cached: the same error, no second build.
		_, err2 := d.Load(k)
		require.Error(t, err2, "second Load: %v, want the cached %v", err2, err)
		assert.Equal(t, err.Error(), err2.Error(), "second Load: %v, want the cached %v", err2, err)
	}
}

func TestMissingEntry(t *testing.T) {
	for _, d := range devices(t) {
		k := kernel("wanted", "__kernel void other(__global int *p) { p[0] = 1; }\n",
			device.Param{Name: "p", Kind: device.ParamBuffer, Elem: device.ParamInt32})
		_, err := d.Load(k)
		wantCode(t, "load of a kernel name the program lacks", err, device.CodeNotFound)
		assert.Contains(t, err.Error(), `"wanted"`, "error should name the missing entry and what the program defines: %v", err)
		assert.Contains(t, err.Error(), "other", "error should name the missing entry and what the program defines: %v", err)
	}
}

func TestWrongParamCount(t *testing.T) {
	for _, d := range devices(t) {
		k := kernel("two", "__kernel void two(__global int *p, int v) { p[0] = v; }\n",
			device.Param{Name: "p", Kind: device.ParamBuffer, Elem: device.ParamInt32})
		_, err := d.Load(k)
		wantCode(t, "load of a kernel with fewer Params than the source", err, device.CodeInvalidBinary)
	}
}

// Parameters declared in an order that differs from the OpenCL C's, with
// the same sizes (a float and an int32 swapped; a buffer and an int64
// swapped), are refused at the kernel's load, naming the parameter, where
// they ran and gave a wrong result before; the right order loads.
func TestParamsCheckedAgainstTheSource(t *testing.T) {
	const src = "__kernel void scaled(float a, int m, __global float *y, long n) { y[get_global_id(0)] *= a * m + n; }\n"
	a := device.ScalarParam("a", device.ParamFloat32)
	m := device.ScalarParam("m", device.ParamInt32)
	y := device.BufferParam("y", device.ParamFloat32, "1")
	n := device.ScalarParam("n", device.ParamInt64)
	for _, d := range devices(t) {
		_, err := d.Load(kernel("scaled", src, m, a, y, n))
		wantCode(t, "float and int32 swapped", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, "parameter 0 (m) is declared a int32 scalar, but argument 0 of OpenCL kernel scaled (a) is a float")
		_, err = d.Load(kernel("scaled", src, a, m, n, y))
		wantCode(t, "buffer and int64 swapped", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, "parameter 2 (n) is declared a int64 scalar, but argument 2 of OpenCL kernel scaled (y) is a pointer (float*)")
		_, err = d.Load(kernel("scaled", src, a, m, device.BufferParam("y", device.ParamInt32, "1"), n))
		wantCode(t, "float* declared int32", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, "its elements are not int32")
		_, err = d.Load(kernel("scaled", src, a, m, y, n))
		assert.NoError(t, err, "the declaration in the source's order")
	}
}

// Two parameters of one type declared in another order than the OpenCL
// C's agree in every type and ran, computing with each buffer in the
// other's place; where the driver reports the arguments' names (POCL and
// rusticl do), the load is refused naming both names. The source's order
// loads.
func TestParamsOfOneTypeSwappedRefusedByName(t *testing.T) {
	const src = "__kernel void swap2(__global float *a, __global float *b) { a[get_global_id(0)] = b[get_global_id(0)]; }\n"
	a := device.BufferParam("a", device.ParamFloat32, "1")
	b := device.BufferParam("b", device.ParamFloat32, "1")
	for _, d := range devices(t) {
		_, err := d.Load(kernel("swap2", src, b, a))
		wantCode(t, "a and b swapped", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, `OpenCL kernel swap2's argument 0 is named "a" but the Kernel's parameter 0 is "b"; Params must list the arguments in the source's order`)
		_, err = d.Load(kernel("swap2", src, a, device.BufferParam("c", device.ParamFloat32, "1")))
		wantCode(t, "b declared as c", err, device.CodeInvalidBinary)
		assert.ErrorContains(t, err, `argument 1 is named "b" but the Kernel's parameter 1 is "c"; Params must name the arguments as the source does`)
		_, err = d.Load(kernel("swap2", src, a, b))
		assert.NoError(t, err, "the declaration in the source's order")
	}
}

func TestNoOpenCLImage(t *testing.T) {
	for _, d := range devices(t) {
		k := &device.Kernel{Name: "ptxonly", Images: []device.Image{{Kind: "ptx", Source: ".version 7.0"}}}
		_, err := d.Load(k)
		wantCode(t, "load of a kernel with no OpenCL image", err, device.CodeInvalidBinary)
		assert.Contains(t, err.Error(), "ptx", "error should name the kernel and the kinds it has: %v", err)
		assert.Contains(t, err.Error(), "ptxonly", "error should name the kernel and the kinds it has: %v", err)
	}
}

func TestAllocTooLarge(t *testing.T) {
	for _, d := range devices(t) {
		max := d.Info().MaxAlloc
		if max >= math.MaxInt {
			t.Skip("MaxAlloc does not fit an int")
		}
		_, err := d.Alloc(int(max) + 1)
		wantCode(t, "alloc of MaxAlloc+1", err, device.CodeInvalidArgument)
		assert.Contains(t, err.Error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE", "error should say the limit: %v", err)
		for _, n := range []int{0, -1} {
			_, err := d.Alloc(n)
			wantCode(t, "alloc of a non-positive size", err, device.CodeInvalidArgument)
		}
	}
}

// iota writes p[i] = i for i in [0, n) and counts the work-items in c[0].
const iotaSrc = `__kernel void iota(long n, __global int *p) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = (int)i;
}
`

var iotaKernel = kernel("iota", iotaSrc,
	device.Param{Name: "n", Kind: device.ParamInt64},
	device.Param{Name: "p", Kind: device.ParamBuffer, Elem: device.ParamInt32})

func checkIota(t *testing.T, got []byte, from int) {
	t.Helper()
	for i := 0; i < len(got)/4; i++ {
		require.Equal(t, int32(from+i), int32(binary.LittleEndian.Uint32(got[4*i:])), "element")
	}
}

func TestWorkGroupTooLarge(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel)
		require.NoError(t, err)
		limit := d.Info().MaxThreadsPerTeam
		shape := device.Shape{Size: [3]int{10000}, Threads: limit * 4, Teams: 3}
		global, local, err := opencl.LaunchGeometry(f, shape)
		require.NoError(t, err)
		msg := fmt.Sprintf("threads %d on a device limited to %d: NDRange global %v local %v, want a legal local size and 3 groups",
			shape.Threads, limit, global, local)
		require.LessOrEqual(t, local[0], limit, msg)
		require.GreaterOrEqual(t, local[0], 1, msg)
		require.Equal(t, 3*local[0], global[0], msg)
		n := 10000
		q, err := d.NewQueue()
		require.NoError(t, err)
		buf, err := d.Alloc(4 * n)
		require.NoError(t, err)
		require.NoError(t, q.Launch(f, shape, []device.Arg{{Bits: uint64(n)}, {Ptr: buf.Ptr}}), "launch with threads above the limit")
		got := make([]byte, 4*n)
		require.NoError(t, q.CopyOut(got, buf.Ptr))
		require.NoError(t, q.Sync())
		checkIota(t, got, 0)
		require.NoError(t, d.Free(buf.Ptr))
		require.NoError(t, q.Release())
	}
}

func TestGeometryDefaults(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel)
		require.NoError(t, err)
		lim, mult := opencl.WorkGroupLimits(f)
		require.GreaterOrEqual(t, lim, 1, "work-group limit %d, preferred multiple %d", lim, mult)
		require.GreaterOrEqual(t, mult, 1, "work-group limit %d, preferred multiple %d", lim, mult)
		require.LessOrEqual(t, mult, lim, "work-group limit %d, preferred multiple %d", lim, mult)
		for _, tc := range []struct {
			shape device.Shape
			check func(g, l [3]int) bool
		}{
			{device.Shape{Size: [3]int{1}}, func(g, l [3]int) bool { return g == l && l == [3]int{mult, 1, 1} }},
			{device.Shape{Size: [3]int{100}}, func(g, l [3]int) bool {
				return l[0] == min((100+mult-1)/mult*mult, lim) && g[0] >= 100 && g[0]%l[0] == 0
			}},
			{device.Shape{Size: [3]int{4, 100000}}, func(g, l [3]int) bool {
				return l[0] == 4 && l[1] > 1 && l[0]*l[1]%mult == 0 && g[0] == 4 && g[1] >= 100000 && g[1]%l[1] == 0
			}},
			{device.Shape{Size: [3]int{1 << 24}}, func(g, l [3]int) bool { return l[0] <= 1024 && g[0]%l[0] == 0 && g[0] == 1<<24 }},
			{device.Shape{Size: [3]int{64, 32, 2}, Threads: 16}, func(g, l [3]int) bool {
				return l == [3]int{16, 1, 1} && g[0] == 64 && g[1] == 32 && g[2] == 2
			}},
		} {
			g, l, err := opencl.LaunchGeometry(f, tc.shape)
			assert.NoError(t, err, "shape %+v: global %v local %v", tc.shape, g, l)
			assert.True(t, tc.check(g, l), "shape %+v: global %v local %v err %v", tc.shape, g, l, err)
		}
		_, _, err = opencl.LaunchGeometry(f, device.Shape{})
		assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "zero shape: %v, want invalid argument", err)
	}
}

// Shapes far larger than any device runs map onto NDRanges it can run
// (work-groups countable in 32 bits, as POCL counts them), and compute
// right: device code strides. More teams than MaxTeams are refused.
func TestHugeShapes(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel)
		require.NoError(t, err)
		maxTeams := d.Info().MaxTeams
		require.Positive(t, maxTeams, "Info.MaxTeams")
		for _, s := range []device.Shape{
			{Size: [3]int{1 << 62}},
			{Size: [3]int{math.MaxInt}},
			{Size: [3]int{16, 1 << 40}},
			{Size: [3]int{7, 1 << 20, 1 << 20}},
			{Size: [3]int{1 << 40, 1 << 10, 1 << 10}},
			{Size: [3]int{1}, Teams: maxTeams},
			{Size: [3]int{1, 1 << 30, 4}, Teams: maxTeams},
		} {
			g, l, err := opencl.LaunchGeometry(f, s)
			require.NoError(t, err, "shape %+v", s)
			groups := uint64(1)
			for i := range g {
				require.GreaterOrEqual(t, g[i], 1, "shape %+v: global %v local %v: not an NDRange", s, g, l)
				require.GreaterOrEqual(t, l[i], 1, "shape %+v: global %v local %v: not an NDRange", s, g, l)
				require.Zero(t, g[i]%l[i], "shape %+v: global %v local %v: not an NDRange", s, g, l)
				groups *= uint64(g[i] / l[i])
			}
			assert.LessOrEqual(t, groups, uint64(math.MaxUint32), "shape %+v: global %v local %v: %d work-groups, more than 32 bits count", s, g, l, groups)
		}
		_, _, err = opencl.LaunchGeometry(f, device.Shape{Size: [3]int{1}, Teams: maxTeams + 1})
		wantCode(t, "teams above MaxTeams", err, device.CodeInvalidArgument)

		q, err := d.NewQueue()
		require.NoError(t, err)
		n := 1000
		buf, err := d.Alloc(4 * n)
		require.NoError(t, err)
		args := []device.Arg{{Bits: uint64(n)}, {Ptr: buf.Ptr}}
		wantCode(t, "launch with teams above MaxTeams", q.Launch(f, device.Shape{Size: [3]int{n}, Teams: math.MaxInt}, args), device.CodeInvalidArgument)
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{1 << 62}}, args), "launch over 2^62")
		got := make([]byte, 4*n)
		require.NoError(t, q.CopyOut(got, buf.Ptr))
		require.NoError(t, q.Sync())
		checkIota(t, got, 0)
		require.NoError(t, d.Free(buf.Ptr))
		require.NoError(t, q.Release())
	}
}

func TestInteriorPointers(t *testing.T) {
	for _, d := range withPretend(t, devices(t)) {
		align := 0
		for _, a := range d.Info().Extra {
			if a.Key == "mem_base_addr_align" {
				for _, c := range a.Value {
					align = align*10 + int(c-'0')
				}
			}
		}
		require.Positive(t, align, "no mem_base_addr_align in Extra")
		f, err := d.Load(iotaKernel)
		require.NoError(t, err)
		q, err := d.NewQueue()
		require.NoError(t, err)
		size := 4 * align
		buf, err := d.Alloc(size)
		require.NoError(t, err)
		zero := make([]byte, size)
		require.NoError(t, q.CopyIn(buf.Ptr, zero))
		// Aligned interior pointer: passed as a sub-buffer.
		n := align / 4
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n}}, []device.Arg{{Bits: uint64(n)}, {Ptr: buf.Ptr + device.DevicePtr(align)}}), "launch at an aligned interior pointer")
		// Unaligned: staged through a temporary buffer.
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{3}}, []device.Arg{{Bits: 3}, {Ptr: buf.Ptr + device.DevicePtr(2*align+4)}}), "launch at an unaligned interior pointer")
		// Pointers outside any allocation.
		err = q.Launch(f, device.Shape{Size: [3]int{1}}, []device.Arg{{Bits: 1}, {Ptr: buf.Ptr + device.DevicePtr(size)}})
		wantCode(t, "launch at one past the end", err, device.CodeInvalidArgument)
		got := make([]byte, size)
		require.NoError(t, q.CopyOut(got, buf.Ptr))
		require.NoError(t, q.Sync())
		assert.True(t, bytes.Equal(got[:align], zero[:align]), "the sub-buffer or staged launch wrote outside its range")
		assert.True(t, bytes.Equal(got[2*align:2*align+4], zero[:4]), "the sub-buffer or staged launch wrote outside its range")
		assert.True(t, bytes.Equal(got[2*align+16:], zero[2*align+16:]), "the sub-buffer or staged launch wrote outside its range")
		checkIota(t, got[align:2*align], 0)
		checkIota(t, got[2*align+4:2*align+16], 0)
		// Copies at unaligned interior pointers work.
		src := []byte{1, 2, 3, 4, 5, 6, 7}
		require.NoError(t, q.CopyIn(buf.Ptr+3, src))
		require.NoError(t, q.Copy(buf.Ptr+device.DevicePtr(align)+1, buf.Ptr+3, len(src)))
		out := make([]byte, len(src))
		require.NoError(t, q.CopyOut(out, buf.Ptr+device.DevicePtr(align)+1))
		require.NoError(t, q.Sync())
		assert.True(t, bytes.Equal(out, src), "copy through interior pointers: %v, want %v", out, src)
		// Overlapping ranges of one buffer copy as memmove (OpenCL itself
		// refuses them; devicetest.TestOverlap has the full set).
		assert.NoError(t, q.Copy(buf.Ptr+1, buf.Ptr+3, 4), "overlapping device copy")
		require.NoError(t, q.CopyOut(out[:5], buf.Ptr+1))
		require.NoError(t, q.Sync())
		want := []byte{1, 2, 3, 4, 3}
		assert.True(t, bytes.Equal(out[:5], want), "overlapping device copy left %v, want %v", out[:5], want)
		require.NoError(t, d.Free(buf.Ptr))
		require.NoError(t, q.Release())
		err = q.Release()
		assert.Equal(t, device.CodeInvalidArgument, device.CodeOf(err), "second Release: %v, want invalid argument", err)
	}
}

// TestAsyncCopyPinned drops every reference to the host slices of
// non-blocking copies and collects garbage before the copies are waited for.
func TestAsyncCopyPinned(t *testing.T) {
	for _, d := range devices(t) {
		q, err := d.NewQueue()
		require.NoError(t, err)
		const n = 8 << 20
		buf, err := d.Alloc(n)
		require.NoError(t, err)
		for i := 0; i < 4; i++ {
			src := bytes.Repeat([]byte{byte(i + 1)}, n)
			require.NoError(t, q.CopyIn(buf.Ptr, src))
		}
		runtime.GC()
		out := make([]byte, n)
		require.NoError(t, q.CopyOut(out, buf.Ptr))
		ev, err := q.Record()
		require.NoError(t, err)
		runtime.GC()
		require.NoError(t, ev.Wait())
		assert.True(t, bytes.Equal(out, bytes.Repeat([]byte{4}, n)), "data of the last non-blocking copy did not arrive")
		require.NoError(t, d.Free(buf.Ptr))
		require.NoError(t, q.Release())
	}
}

func TestClock(t *testing.T) {
	for _, d := range devices(t) {
		q, err := d.NewQueue()
		require.NoError(t, err)
		before, err := d.Now()
		require.NoError(t, err)
		ev, err := q.Record()
		require.NoError(t, err)
		at, err := ev.Time()
		require.NoError(t, err)
		after, _ := d.Now()
		assert.GreaterOrEqual(t, at, before, "event time %d not within clock readings [%d, %d]", at, before, after)
		assert.LessOrEqual(t, at, after, "event time %d not within clock readings [%d, %d]", at, before, after)
		prof, err := opencl.EventProfile(ev)
		assert.NoError(t, err, "EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		assert.Equal(t, at, prof.End, "EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		assert.NotZero(t, prof.Queued, "EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		assert.LessOrEqual(t, prof.Queued, prof.Submit, "EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		assert.LessOrEqual(t, prof.Submit, prof.Start, "EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		assert.LessOrEqual(t, prof.Start, prof.End, "EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		require.NoError(t, q.Release())
		if at2, err := ev.Time(); assert.NoError(t, err, "Time after the queue's release = %d, %v; want %d", at2, err, at) {
			assert.Equal(t, at, at2, "Time after the queue's release = %d", at2)
		}
	}
}

// TestNoLeakedObjects runs work on every device and checks every OpenCL
// object it made was released once the queues are.
func TestNoLeakedObjects(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel) // cached program and kernel: counted before
		require.NoError(t, err)
		before := cl.Live()
		q, err := d.NewQueue()
		require.NoError(t, err)
		buf, err := d.Alloc(1 << 12)
		require.NoError(t, err)
		for i := 0; i < 10; i++ {
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{64}}, []device.Arg{{Bits: 64}, {Ptr: buf.Ptr}}))
			_, err := q.Record()
			require.NoError(t, err)
		}
		require.NoError(t, d.Free(buf.Ptr))
		require.NoError(t, q.Release())
		after := cl.Live()
		assert.Equal(t, before, after, "live OpenCL objects %+v after the work, %+v before", after, before)
	}
}

// TestClose closes a device in a child process, so that the devices of
// this process stay open for the other tests and benchmarks.
func TestClose(t *testing.T) {
	devices(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildClose$", "-test.v")
	cmd.Env = append(os.Environ(), "GOMPT_OPENCL_CHILD=close")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %v\n%s", err, out)
	require.Contains(t, string(out), "--- PASS: TestChildClose", "child: %v\n%s", err, out)
}

// TestChildClose is run by TestClose in a child process.
func TestChildClose(t *testing.T) {
	if os.Getenv("GOMPT_OPENCL_CHILD") != "close" {
		t.Skip("run by TestClose")
	}
	for _, d := range devices(t) {
		_, err := d.Load(iotaKernel)
		require.NoError(t, err)
		_, err = d.Alloc(64)
		require.NoError(t, err)
		q, err := d.NewQueue()
		require.NoError(t, err)
		// A launch that stages arguments of two alignment classes builds
		// the merge kernel, which Close releases too.
		saxpy, err := d.Load(kernels.Saxpy)
		require.NoError(t, err)
		buf, err := d.Alloc(1024)
		require.NoError(t, err)
		require.NoError(t, q.Launch(saxpy, device.Shape{Size: [3]int{8}}, []device.Arg{{Bits: 8}, {Bits: 0}, {Ptr: buf.Ptr + 4}, {Ptr: buf.Ptr + 512 + 8}}))
		require.NoError(t, d.(device.Closer).Close())
		_, err = d.Alloc(64)
		assert.Equal(t, device.CodeInvalidDevice, device.CodeOf(err), "Alloc after Close: %v, want invalid device", err)
		_, err = d.Load(iotaKernel)
		assert.Equal(t, device.CodeInvalidDevice, device.CodeOf(err), "Load after Close: %v, want invalid device", err)
		_, err = q.Record()
		assert.Error(t, err, "Record on a queue of a closed device succeeded")
		assert.NoError(t, d.(device.Closer).Close(), "second Close")
	}
	live := cl.Live()
	assert.Zero(t, live.Total(), "live OpenCL objects after closing every device: %+v", live)
}

// TestChildDevices is run by TestBadLibrary in a child process with
// GOMPT_OPENCL_LIBRARY set; it prints what Devices returned.
func TestChildDevices(t *testing.T) {
	if os.Getenv("GOMPT_OPENCL_CHILD") != "1" {
		t.Skip("run by TestBadLibrary")
	}
	p, _ := device.Lookup(opencl.Name)
	devs, err := p.Devices()
	os.Stdout.WriteString("DEVICES " + string(rune('0'+len(devs))) + "\n")
	if err != nil {
		os.Stdout.WriteString("ERROR " + err.Error() + "\n")
		if !errors.Is(err, device.ErrNoDevice) {
			os.Stdout.WriteString("NOT-ErrNoDevice\n")
		}
	}
}

func TestBadLibrary(t *testing.T) {
	if !cl.Available {
		t.Skip("built without cgo")
	}
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{cl.LibraryEnv + "=libc.so.6", []string{"libc.so.6 is not an OpenCL library", "clGetPlatformIDs"}},
		{cl.LibraryEnv + "=/nonexistent/libOpenCL-gompt.so.1", []string{"/nonexistent/libOpenCL-gompt.so.1", "GOMPT_OPENCL_LIBRARY"}},
		// ocl-icd's loader reads its vendor list from $OCL_ICD_VENDORS:
		// an empty one means no platform.
		{"OCL_ICD_VENDORS=" + t.TempDir(), []string{"no OpenCL platform"}},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildDevices$", "-test.v")
		cmd.Env = append(os.Environ(), "GOMPT_OPENCL_CHILD=1", tc.env)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child with %s: %v\n%s", tc.env, err, out)
		s := string(out)
		assert.Contains(t, s, "DEVICES 0", "%s: want zero devices and an ErrNoDevice reason, got:\n%s", tc.env, s)
		assert.Contains(t, s, "ERROR opencl: no device: ", "%s: want zero devices and an ErrNoDevice reason, got:\n%s", tc.env, s)
		assert.False(t, strings.Contains(s, "NOT-ErrNoDevice"), "%s: want zero devices and an ErrNoDevice reason, got:\n%s", tc.env, s)
		for _, w := range tc.want {
			assert.Contains(t, s, w, "%s: reason should mention %q:\n", tc.env, w)
		}
	}
}
