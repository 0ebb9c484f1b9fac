package opencl_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/internal/cl"
	"github.com/gompt/gompt/kernels"
)

// devices returns every OpenCL device, skipping the test (with the plugin's
// reason) when there is none, unless CI is set: then it fails.
func devices(t testing.TB) []device.Device {
	t.Helper()
	p, ok := device.Lookup(opencl.Name)
	if !ok {
		t.Fatal("plugin opencl is not registered")
	}
	devs, err := p.Devices()
	if len(devs) == 0 {
		if err == nil {
			t.Fatal("Devices returned no device and no error")
		}
		if !errors.Is(err, device.ErrNoDevice) {
			t.Errorf("no-device error %v does not wrap device.ErrNoDevice", err)
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and there is no OpenCL device: %v", err)
		}
		t.Skipf("no OpenCL device: %v", err)
	}
	if err != nil {
		t.Fatalf("Devices returned %d devices and error %v", len(devs), err)
	}
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
	t.Fatal("no mem_base_addr_align in Extra")
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
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	if got := device.CodeOf(err); got != code {
		t.Fatalf("%s: code %s, want %s (error: %v)", what, got, code, err)
	}
}

func TestConformance(t *testing.T) {
	for _, d := range devices(t) {
		t.Run(d.Info().Name, func(t *testing.T) {
			devicetest.TestDevice(t, d, kernels.All()...)
		})
		// The same device behaving as NVIDIA's OpenCL where they differ
		// (512-byte base alignment, so interior pointers POCL takes as
		// sub-buffers are staged; calibrated clock; kernel stamps;
		// callback waits).
		t.Run(d.Info().Name+"/as-nvidia", func(t *testing.T) {
			devicetest.TestDevice(t, opencl.PretendNVIDIA(t, d), kernels.All()...)
		})
	}
}

func TestInfo(t *testing.T) {
	for _, d := range devices(t) {
		in := d.Info()
		t.Logf("%s: %+v", in.Name, in)
		if in.Backend != "opencl" || in.Name == "" || in.Vendor == "" || !strings.HasPrefix(in.Version, "OpenCL ") {
			t.Errorf("info %+v: want backend opencl, a name, a vendor and an OpenCL version", in)
		}
		if in.GlobalMem == 0 || in.MaxAlloc == 0 || in.MaxAlloc > in.GlobalMem || in.ComputeUnits <= 0 || in.MaxThreadsPerTeam <= 0 {
			t.Errorf("info %+v: sizes and counts must be positive, MaxAlloc <= GlobalMem", in)
		}
		switch in.Type {
		case "gpu", "cpu", "accelerator", "custom":
		default:
			t.Errorf("type %q", in.Type)
		}
		keys := map[string]string{}
		for _, a := range in.Extra {
			keys[a.Key] = a.Value
		}
		for _, k := range []string{"platform", "extensions", "clock_source", "mem_base_addr_align"} {
			if keys[k] == "" {
				t.Errorf("Extra lacks %q: %v", k, in.Extra)
			}
		}
		if _, ok := d.(device.MemInfo); !ok {
			t.Error("device does not implement device.MemInfo")
		}
		if _, ok := d.(device.Closer); !ok {
			t.Error("device does not implement device.Closer")
		}
	}
}

func kernel(name, src string, params ...device.Param) *device.Kernel {
	return &device.Kernel{Name: name, Params: params,
		Images: []device.Image{{Kind: device.ImageOpenCL, Source: src}}}
}

func TestBuildFailureCarriesLog(t *testing.T) {
	for _, d := range devices(t) {
		k := kernel("broken", "__kernel void broken(__global int *p) { p[0] = gompt_undefined_identifier; }\n",
			device.Param{Name: "p", Kind: device.ParamBuffer, Elem: device.ParamInt32})
		_, err := d.Load(k)
		wantCode(t, "load of a kernel that does not compile", err, device.CodeInvalidBinary)
		if !strings.Contains(err.Error(), "gompt_undefined_identifier") || !strings.Contains(err.Error(), "build log") {
			t.Errorf("build error does not carry the build log naming the bad identifier:\n%v", err)
		}
		// The failure is cached: the same error, no second build.
		_, err2 := d.Load(k)
		if err2 == nil || err2.Error() != err.Error() {
			t.Errorf("second Load: %v, want the cached %v", err2, err)
		}
	}
}

func TestMissingEntry(t *testing.T) {
	for _, d := range devices(t) {
		k := kernel("wanted", "__kernel void other(__global int *p) { p[0] = 1; }\n",
			device.Param{Name: "p", Kind: device.ParamBuffer, Elem: device.ParamInt32})
		_, err := d.Load(k)
		wantCode(t, "load of a kernel name the program lacks", err, device.CodeNotFound)
		if !strings.Contains(err.Error(), `"wanted"`) || !strings.Contains(err.Error(), "other") {
			t.Errorf("error should name the missing entry and what the program defines: %v", err)
		}
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

func TestNoOpenCLImage(t *testing.T) {
	for _, d := range devices(t) {
		k := &device.Kernel{Name: "ptxonly", Images: []device.Image{{Kind: device.ImagePTX, Source: ".version 7.0"}}}
		_, err := d.Load(k)
		wantCode(t, "load of a kernel with no OpenCL image", err, device.CodeInvalidBinary)
		if !strings.Contains(err.Error(), "ptx") || !strings.Contains(err.Error(), "ptxonly") {
			t.Errorf("error should name the kernel and the kinds it has: %v", err)
		}
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
		if !strings.Contains(err.Error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE") {
			t.Errorf("error should say the limit: %v", err)
		}
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
		if v := int32(binary.LittleEndian.Uint32(got[4*i:])); v != int32(from+i) {
			t.Fatalf("element %d = %d, want %d", i, v, from+i)
		}
	}
}

func TestWorkGroupTooLarge(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel)
		if err != nil {
			t.Fatal(err)
		}
		limit := d.Info().MaxThreadsPerTeam
		shape := device.Shape{Size: [3]int{10000}, Threads: limit * 4, Teams: 3}
		global, local, err := opencl.LaunchGeometry(f, shape)
		if err != nil {
			t.Fatal(err)
		}
		if local[0] > limit || local[0] < 1 || global[0] != 3*local[0] {
			t.Fatalf("threads %d on a device limited to %d: NDRange global %v local %v, want a legal local size and 3 groups",
				shape.Threads, limit, global, local)
		}
		n := 10000
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		buf, err := d.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Launch(f, shape, []device.Arg{{Bits: uint64(n)}, {Ptr: buf.Ptr}}); err != nil {
			t.Fatalf("launch with threads above the limit: %v", err)
		}
		got := make([]byte, 4*n)
		if err := q.CopyOut(got, buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		checkIota(t, got, 0)
		if err := d.Free(buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGeometryDefaults(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel)
		if err != nil {
			t.Fatal(err)
		}
		lim, mult := opencl.WorkGroupLimits(f)
		if lim < 1 || mult < 1 || mult > lim {
			t.Fatalf("work-group limit %d, preferred multiple %d", lim, mult)
		}
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
			if err != nil || !tc.check(g, l) {
				t.Errorf("shape %+v: global %v local %v err %v", tc.shape, g, l, err)
			}
		}
		if _, _, err := opencl.LaunchGeometry(f, device.Shape{}); device.CodeOf(err) != device.CodeInvalidArgument {
			t.Errorf("zero shape: %v, want invalid argument", err)
		}
	}
}

// Shapes far larger than any device runs map onto NDRanges it can run
// (work-groups countable in 32 bits, as POCL counts them), and compute
// right: device code strides. More teams than MaxTeams are refused.
func TestHugeShapes(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel)
		if err != nil {
			t.Fatal(err)
		}
		maxTeams := d.Info().MaxTeams
		if maxTeams <= 0 {
			t.Fatalf("Info.MaxTeams = %d, want the largest number of teams", maxTeams)
		}
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
			if err != nil {
				t.Fatalf("shape %+v: %v", s, err)
			}
			groups := uint64(1)
			for i := range g {
				if g[i] < 1 || l[i] < 1 || g[i]%l[i] != 0 {
					t.Fatalf("shape %+v: global %v local %v: not an NDRange", s, g, l)
				}
				groups *= uint64(g[i] / l[i])
			}
			if groups > math.MaxUint32 {
				t.Errorf("shape %+v: global %v local %v: %d work-groups, more than 32 bits count", s, g, l, groups)
			}
		}
		_, _, err = opencl.LaunchGeometry(f, device.Shape{Size: [3]int{1}, Teams: maxTeams + 1})
		wantCode(t, "teams above MaxTeams", err, device.CodeInvalidArgument)

		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		n := 1000
		buf, err := d.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		args := []device.Arg{{Bits: uint64(n)}, {Ptr: buf.Ptr}}
		wantCode(t, "launch with teams above MaxTeams", q.Launch(f, device.Shape{Size: [3]int{n}, Teams: math.MaxInt}, args), device.CodeInvalidArgument)
		if err := q.Launch(f, device.Shape{Size: [3]int{1 << 62}}, args); err != nil {
			t.Fatalf("launch over 2^62: %v", err)
		}
		got := make([]byte, 4*n)
		if err := q.CopyOut(got, buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		checkIota(t, got, 0)
		if err := d.Free(buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
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
		if align <= 0 {
			t.Fatal("no mem_base_addr_align in Extra")
		}
		f, err := d.Load(iotaKernel)
		if err != nil {
			t.Fatal(err)
		}
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		size := 4 * align
		buf, err := d.Alloc(size)
		if err != nil {
			t.Fatal(err)
		}
		zero := make([]byte, size)
		if err := q.CopyIn(buf.Ptr, zero); err != nil {
			t.Fatal(err)
		}
		// Aligned interior pointer: passed as a sub-buffer.
		n := align / 4
		if err := q.Launch(f, device.Shape{Size: [3]int{n}}, []device.Arg{{Bits: uint64(n)}, {Ptr: buf.Ptr + device.DevicePtr(align)}}); err != nil {
			t.Fatalf("launch at an aligned interior pointer: %v", err)
		}
		// Unaligned: staged through a temporary buffer.
		if err := q.Launch(f, device.Shape{Size: [3]int{3}}, []device.Arg{{Bits: 3}, {Ptr: buf.Ptr + device.DevicePtr(2*align+4)}}); err != nil {
			t.Fatalf("launch at an unaligned interior pointer: %v", err)
		}
		// Pointers outside any allocation.
		err = q.Launch(f, device.Shape{Size: [3]int{1}}, []device.Arg{{Bits: 1}, {Ptr: buf.Ptr + device.DevicePtr(size)}})
		wantCode(t, "launch at one past the end", err, device.CodeInvalidArgument)
		got := make([]byte, size)
		if err := q.CopyOut(got, buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:align], zero[:align]) || !bytes.Equal(got[2*align:2*align+4], zero[:4]) || !bytes.Equal(got[2*align+16:], zero[2*align+16:]) {
			t.Error("the sub-buffer or staged launch wrote outside its range")
		}
		checkIota(t, got[align:2*align], 0)
		checkIota(t, got[2*align+4:2*align+16], 0)
		// Copies at unaligned interior pointers work.
		src := []byte{1, 2, 3, 4, 5, 6, 7}
		if err := q.CopyIn(buf.Ptr+3, src); err != nil {
			t.Fatal(err)
		}
		if err := q.Copy(buf.Ptr+device.DevicePtr(align)+1, buf.Ptr+3, len(src)); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, len(src))
		if err := q.CopyOut(out, buf.Ptr+device.DevicePtr(align)+1); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, src) {
			t.Errorf("copy through interior pointers: %v, want %v", out, src)
		}
		// Overlapping ranges of one buffer copy as memmove (OpenCL itself
		// refuses them; devicetest.TestOverlap has the full set).
		if err := q.Copy(buf.Ptr+1, buf.Ptr+3, 4); err != nil {
			t.Errorf("overlapping device copy: %v", err)
		}
		if err := q.CopyOut(out[:5], buf.Ptr+1); err != nil {
			t.Fatal(err)
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		if want := []byte{1, 2, 3, 4, 3}; !bytes.Equal(out[:5], want) {
			t.Errorf("overlapping device copy left %v, want %v", out[:5], want)
		}
		if err := d.Free(buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); device.CodeOf(err) != device.CodeInvalidArgument {
			t.Errorf("second Release: %v, want invalid argument", err)
		}
	}
}

// TestAsyncCopyPinned drops every reference to the host slices of
// non-blocking copies and collects garbage before the copies are waited for.
func TestAsyncCopyPinned(t *testing.T) {
	for _, d := range devices(t) {
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		const n = 8 << 20
		buf, err := d.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			src := bytes.Repeat([]byte{byte(i + 1)}, n)
			if err := q.CopyIn(buf.Ptr, src); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		out := make([]byte, n)
		if err := q.CopyOut(out, buf.Ptr); err != nil {
			t.Fatal(err)
		}
		ev, err := q.Record()
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		if err := ev.Wait(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, bytes.Repeat([]byte{4}, n)) {
			t.Error("data of the last non-blocking copy did not arrive")
		}
		if err := d.Free(buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClock(t *testing.T) {
	for _, d := range devices(t) {
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		before, err := d.Now()
		if err != nil {
			t.Fatal(err)
		}
		ev, err := q.Record()
		if err != nil {
			t.Fatal(err)
		}
		at, err := ev.Time()
		if err != nil {
			t.Fatal(err)
		}
		after, _ := d.Now()
		if at < before || at > after {
			t.Errorf("event time %d not within clock readings [%d, %d]", at, before, after)
		}
		prof, err := opencl.EventProfile(ev)
		if err != nil || prof.End != at || prof.Queued == 0 || prof.Queued > prof.Submit || prof.Submit > prof.Start || prof.Start > prof.End {
			t.Errorf("EventProfile = %+v, %v; want queued <= submit <= start <= end = %d", prof, err, at)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
		if at2, err := ev.Time(); err != nil || at2 != at {
			t.Errorf("Time after the queue's release = %d, %v; want %d", at2, err, at)
		}
	}
}

// TestNoLeakedObjects runs work on every device and checks every OpenCL
// object it made was released once the queues are.
func TestNoLeakedObjects(t *testing.T) {
	for _, d := range devices(t) {
		f, err := d.Load(iotaKernel) // cached program and kernel: counted before
		if err != nil {
			t.Fatal(err)
		}
		before := cl.Live()
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		buf, err := d.Alloc(1 << 12)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if err := q.Launch(f, device.Shape{Size: [3]int{64}}, []device.Arg{{Bits: 64}, {Ptr: buf.Ptr}}); err != nil {
				t.Fatal(err)
			}
			if _, err := q.Record(); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Free(buf.Ptr); err != nil {
			t.Fatal(err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
		if after := cl.Live(); after != before {
			t.Errorf("live OpenCL objects %+v after the work, %+v before", after, before)
		}
	}
}

// TestClose closes a device in a child process, so that the devices of
// this process stay open for the other tests and benchmarks.
func TestClose(t *testing.T) {
	devices(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildClose$", "-test.v")
	cmd.Env = append(os.Environ(), "GOMPT_OPENCL_CHILD=close")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestChildClose") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestChildClose is run by TestClose in a child process.
func TestChildClose(t *testing.T) {
	if os.Getenv("GOMPT_OPENCL_CHILD") != "close" {
		t.Skip("run by TestClose")
	}
	for _, d := range devices(t) {
		if _, err := d.Load(iotaKernel); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Alloc(64); err != nil {
			t.Fatal(err)
		}
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		// A launch that stages arguments of two alignment classes builds
		// the merge kernel, which Close releases too.
		saxpy, err := d.Load(kernels.Saxpy)
		if err != nil {
			t.Fatal(err)
		}
		buf, err := d.Alloc(1024)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Launch(saxpy, device.Shape{Size: [3]int{8}}, []device.Arg{{Bits: 8}, {Bits: 0}, {Ptr: buf.Ptr + 4}, {Ptr: buf.Ptr + 512 + 8}}); err != nil {
			t.Fatal(err)
		}
		if err := d.(device.Closer).Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Alloc(64); device.CodeOf(err) != device.CodeInvalidDevice {
			t.Errorf("Alloc after Close: %v, want invalid device", err)
		}
		if _, err := d.Load(iotaKernel); device.CodeOf(err) != device.CodeInvalidDevice {
			t.Errorf("Load after Close: %v, want invalid device", err)
		}
		if _, err := q.Record(); err == nil {
			t.Error("Record on a queue of a closed device succeeded")
		}
		if err := d.(device.Closer).Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	if live := cl.Live(); live.Total() != 0 {
		t.Errorf("live OpenCL objects after closing every device: %+v", live)
	}
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
		if err != nil {
			t.Fatalf("child with %s: %v\n%s", tc.env, err, out)
		}
		s := string(out)
		if !strings.Contains(s, "DEVICES 0") || !strings.Contains(s, "ERROR opencl: no device: ") || strings.Contains(s, "NOT-ErrNoDevice") {
			t.Errorf("%s: want zero devices and an ErrNoDevice reason, got:\n%s", tc.env, s)
		}
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: reason should mention %q:\n%s", tc.env, w, s)
			}
		}
	}
}
