package target

import (
	"math"
	"os"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/hostexec"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyDevice starts a runtime with the OpenCL plugin (POCL's CPU device
// where it is installed) and one host device, and returns every device
// number to try, the initial device last. The rules of the issue "right
// answers or a clear error, always" hold on each.
// With CI set, a build with cgo and no OpenCL device is a failure.
func everyDevice(t *testing.T) (*runtimeState, []int) {
	t.Helper()
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host,opencl"})
	require.NotEmpty(t, r.devs, "no host device: %s", r.why())
	if len(r.devs) < 2 {
		if os.Getenv("CI") != "" && cgoOn {
			require.FailNow(t, "CI: OpenCL has no device here", r.why())
		}
		t.Logf("OpenCL not tested: %s", r.why())
	}
	var devs []int
	for i := range r.devs {
		devs = append(devs, i)
	}
	return r, append(devs, InitialDevice)
}

// wantErr fails the test unless err says every one of want.
func wantErr(t *testing.T, dev int, what string, err error, want ...string) {
	t.Helper()
	countCheck(t, dev, 1)
	require.Error(t, err, "device %d: %s: want an error saying %q", dev, what, want)
	for _, w := range want {
		require.ErrorContains(t, err, w, "device %d: %s", dev, what)
	}
}

// Item 5: a buffer shorter than the kernel's Len is refused before any
// device work, naming the parameter, its length and the length needed.
func TestBufferShorterThanLen(t *testing.T) {
	reportClass(t, "bounds", "bounds")
	r, devs := everyDevice(t)
	for _, dev := range devs {
		x, y := vecs(16)
		long, _ := vecs(1000)
		cases := []struct {
			name string
			r    Region
			want []string
		}{
			{"saxpy n=64 over 16 elements", saxpyRegion(dev, 64, 2, x, y),
				[]string{"kernel saxpy argument 2 (x)", "16 float32 elements", "needs 64", `Len "n"`}},
			{"y shorter than n", saxpyRegion(dev, 64, 2, make([]float32, 64), y),
				[]string{"argument 3 (y)", "16 float32 elements", "needs 64"}},
			{"N(10000) over 1000 elements", Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(10000),
				Args: []Arg{Int(10000), Float32(1), Slice(long), Slice(long[:1000:1000])}}, []string{"1000 float32 elements", "needs 10000"}},
			{"short slice with a matching shape", saxpyRegion(dev, 20, 2, x, y), []string{"16 float32 elements", "needs 20"}},
			{"matmul B shorter than k*n", Region{Device: Dev(dev), Kernel: kernels.Matmul, Shape: N2(4, 3),
				Args: []Arg{Int(3), Int(4), Int(5), Slice(make([]float32, 15)), Slice(make([]float32, 19)), Slice(make([]float32, 12))}},
				[]string{"argument 4 (B)", "19 float32 elements", "needs 20", `Len "k*n"`}},
			{"jacobi out shorter than nx*ny", Region{Device: Dev(dev), Kernel: kernels.Jacobi, Shape: N2(8, 8),
				Args: []Arg{Int(8), Int(8), Slice(make([]float32, 64)), Slice(make([]float32, 63))}}, []string{"argument 3 (out)", "needs 64"}},
			{"dot with teams left to the device", Region{Device: Dev(dev), Kernel: kernels.Dot, Shape: N(16),
				Args: []Arg{Int(16), Slice(x), Slice(y), Slice(make([]float32, 4))}}, []string{"argument 3 (partial)", "set Shape.Teams"}},
			{"dot partial shorter than teams", Region{Device: Dev(dev), Kernel: kernels.Dot, Shape: kernels.DotShape(16, 8),
				Args: []Arg{Int(16), Slice(x), Slice(y), Slice(make([]float32, 4))}}, []string{"argument 3 (partial)", "4 float32 elements", "needs 8"}},
		}
		for _, c := range cases {
			before := append([]float32(nil), y...)
			wantErr(t, dev, c.name, Target(c.r), c.want...)
			wantErr(t, dev, c.name+" (nowait)", TargetNowait(c.r).Wait(), c.want...)
			for i := range y {
				require.Equal(t, before[i], y[i], "device %d: %s: y[%d] changed by a refused region", dev, c.name, i)
			}
		}
		// A device pointer is checked against its allocation.
		p, err := AllocMem(16*4, dev)
		require.NoError(t, err)
		wantErr(t, dev, "device pointer of 16 floats for n=64",
			Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(64), Args: []Arg{Int(64), Float32(1), Slice(make([]float32, 64)), Ptr(p)}}),
			"argument 3 (y)", "to the end of its allocation", "16 float32 elements", "needs 64")
		wantErr(t, dev, "device pointer 8 bytes into 16 floats for n=16",
			Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(16), Args: []Arg{Int(16), Float32(1), Slice(x), Ptr(p + 8)}}),
			"14 float32 elements", "needs 16")
		require.NoError(t, FreeMem(p, dev))
		// Long enough is fine, and computes.
		require.NoError(t, Target(saxpyRegion(dev, 16, 3, x, y)), "device %d", dev)
		checkSaxpy(t, 3, x, y, func(i int) float32 { return float32(2 * i) })
	}
	for _, d := range r.devs {
		assert.Zero(t, d.table.Len(), "%s: present entries left", d.id)
	}
}

// Item 6: a slice of another element type is refused for a typed buffer.
func TestBufferElementType(t *testing.T) {
	reportClass(t, "bounds", "bounds")
	_, devs := everyDevice(t)
	type celsius float32
	for _, dev := range devs {
		n := 8
		a64, b, c := make([]float64, n), make([]float32, n), make([]float32, n)
		vecadd := func(a, b, c Arg) Region {
			return Region{Device: Dev(dev), Kernel: kernels.VecAdd, Shape: N(n), Args: []Arg{Int(n), a, b, c}}
		}
		wantErr(t, dev, "[]float64 for a float32 buffer", Target(vecadd(Slice(a64), Slice(b), Slice(c))),
			"kernel vecadd argument 1 (a)", "want a slice of float32", "got []float64")
		wantErr(t, dev, "[]byte for a float32 buffer", Target(vecadd(Slice(b), Slice(make([]byte, 4*n)), Slice(c))),
			"argument 2 (b)", "got []uint8")
		wantErr(t, dev, "[]int32 for a float32 buffer", Target(vecadd(Slice(b), Slice(c), Slice(make([]int32, n)))),
			"argument 3 (c)", "got []int32")
		wantErr(t, dev, "[]float32 for an int32 buffer", Target(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(n),
			Args: []Arg{Int(n), Slice(b), Slice(make([]int32, n))}}), "kernel copy32 argument 1 (src)", "want a slice of int32", "got []float32")
		// A type defined on float32 is a float32.
		cs := []celsius{1, 2, 3, 4, 5, 6, 7, 8}
		require.NoError(t, Target(vecadd(Slice(cs), Slice(cs), Slice(c))), "device %d: []celsius (float32) for float32 buffers", dev)
		require.Equal(t, float32(16), c[7], "device %d: c[7]", dev)
	}
}

// scalar32 has an int32 and a uint32 parameter and an untyped buffer; only
// its Go image exists, so the runtime's checks meet it on every device
// before any image is chosen.
var scalar32 = &device.Kernel{
	Name: "scalar32",
	Params: []device.Param{
		{Name: "n", Kind: device.ParamInt32},
		{Name: "m", Kind: device.ParamUint32},
		{Name: "raw", Kind: device.ParamBuffer, Len: "n"},
	},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
		raw := a.Bytes(2)
		for i := r.Lo[0]; i < r.Hi[0] && i < a.Int(0); i++ {
			raw[i] = byte(a.Args[1].Bits)
		}
	}}},
}

// Item 6: int32 and uint32 scalars out of range are refused, not
// truncated; an untyped buffer takes any pointer-free slice, in bytes.
func TestScalarRangeAndUntypedBuffer(t *testing.T) {
	reportClass(t, "bounds", "bounds")
	_, devs := everyDevice(t)
	raw := make([]byte, 64)
	run := func(dev int, n, m int, buf Arg) error {
		return Target(Region{Device: Dev(dev), Kernel: scalar32, Shape: N(64), Args: []Arg{Int(n), Int(m), buf}})
	}
	for _, dev := range devs {
		wantErr(t, dev, "int32 out of range", run(dev, 6442450949, 1, Slice(raw)), "argument 0 (n)", "6442450949 does not fit the int32 parameter")
		wantErr(t, dev, "int32 below range", run(dev, math.MinInt32-1, 1, Slice(raw)), "does not fit the int32")
		wantErr(t, dev, "negative uint32", run(dev, 4, -1, Slice(raw)), "argument 1 (m)", "-1 does not fit the uint32 parameter (0 to 4294967295)")
		wantErr(t, dev, "uint32 above range", run(dev, 4, 1<<32, Slice(raw)), "does not fit the uint32")
		wantErr(t, dev, "untyped buffer shorter in bytes", run(dev, 65, 1, Slice(raw)), "argument 2 (raw)", "64 bytes", "needs 65")
		wantErr(t, dev, "untyped buffer of strings", run(dev, 1, 1, Slice([]string{"a"})), "argument 2 (raw)", "element type string holds Go pointers")
	}
	// The Go image exists only: run it where it runs.
	for _, dev := range []int{InitialDevice} {
		f := make([]float32, 16)
		require.NoError(t, run(dev, 64, math.MaxUint32, Slice(f)), "device %d: 16 float32 (64 bytes) for an untyped 64-byte buffer", dev)
		require.Equal(t, uint32(math.MaxUint32), math.Float32bits(f[15]), "bits of f[15]: want all ones")
	}
}

// Item 7: shapes a device cannot run, or that the kernel does not iterate,
// are refused before the launch; huge sizes within limits compute right.
func TestShapeLimits(t *testing.T) {
	reportClass(t, "shape", "shape")
	r, devs := everyDevice(t)
	for _, dev := range devs {
		x, y := vecs(64)
		shaped := func(s Shape) Region {
			return Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: s, Args: []Arg{Int(64), Float32(1), Slice(x), Slice(y)}}
		}
		maxTeams := hostexec.MaxTeams // the initial device's team executor
		if dev != InitialDevice {
			maxTeams = r.devs[dev].info.MaxTeams
		}
		require.Positive(t, maxTeams, "device %d: MaxTeams: every device the runtime has must say", dev)
		wantErr(t, dev, "teams MaxInt", Target(shaped(Shape{Size: [3]int{64, 1, 1}, Teams: math.MaxInt})),
			"kernel saxpy", "9223372036854775807 teams", "(MaxTeams)")
		wantErr(t, dev, "threads 1<<20", Target(shaped(Shape{Size: [3]int{64, 1, 1}, Threads: 1 << 20})),
			"1048576 threads per team", "(MaxThreadsPerTeam)")
		wantErr(t, dev, "dot threads above Kernel.MaxThreads", Target(Region{Device: Dev(dev), Kernel: kernels.Dot,
			Shape: Shape{Size: [3]int{64, 1, 1}, Teams: 2, Threads: 512}, Args: []Arg{Int(64), Slice(x), Slice(y), Slice(make([]float32, 2))}}),
			"512 threads per team", "the kernel runs at most 256 (Kernel.MaxThreads)")
		wantErr(t, dev, "2-D shape for 1-D saxpy", Target(shaped(N2(8, 8))), "size [8 8 1] uses 2 dimensions", "iterates over 1 (Kernel.Dims)")
		wantErr(t, dev, "[16, 2^32, 2^32]", Target(shaped(Shape{Size: [3]int{16, 1 << 32, 1 << 32}})), "more iterations than an int counts")
		wantErr(t, dev, "3-D shape for 2-D jacobi", Target(Region{Device: Dev(dev), Kernel: kernels.Jacobi, Shape: Shape{Size: [3]int{4, 4, 4}},
			Args: []Arg{Int(4), Int(4), Slice(x[:16]), Slice(y[:16])}}), "uses 3 dimensions", "iterates over 2")
		require.NoError(t, Target(shaped(Shape{Size: [3]int{1 << 62, 1, 1}})), "device %d: Size[0] 2^62 over n=64", dev)
		checkSaxpy(t, 1, x, y, func(i int) float32 { return float32(2 * i) })
	}
}

// Jacobi over a space far larger than its grid still computes the grid on
// every device: the shape is a hint, and device code strides.
func TestHugeTwoDimensionalShape(t *testing.T) {
	_, devs := everyDevice(t)
	const nx, ny = 5, 4
	in := make([]float32, nx*ny)
	for i := range in {
		in[i] = float32(i * i)
	}
	want := make([]float32, nx*ny)
	kernels.Jacobi.Host()(&device.HostArgs{Bufs: [][]byte{nil, nil, device.Bytes(in), device.Bytes(want)},
		Args: []device.Arg{{Bits: nx}, {Bits: ny}, {}, {}}}, device.Range{Hi: [3]int{nx, ny, 1}}, 0, 1)
	for _, dev := range devs {
		out := make([]float32, nx*ny)
		err := Target(Region{Device: Dev(dev), Kernel: kernels.Jacobi, Shape: N2(16, 1<<40),
			Args: []Arg{Int(nx), Int(ny), Slice(in), Slice(out)}})
		require.NoError(t, err, "device %d", dev)
		for i := range out {
			require.Equal(t, want[i], out[i], "device %d: out[%d]", dev, i)
		}
	}
}

type node struct {
	next *node
	v    int
}

// Item 3: slices whose elements hold Go pointers cannot be mapped, passed
// or copied; the error names the type and nothing is mapped.
func TestPointerElementsRefused(t *testing.T) {
	reportClass(t, "pointers", "pointers")
	r, devs := everyDevice(t)
	nodes := []*node{{v: 1}, {v: 2}}
	structs := []node{{v: 1}}
	for _, dev := range devs {
		for _, c := range []struct {
			name string
			err  error
			want string
		}{
			{"enter data of []*node", EnterData(dev, To(nodes)), "map item 0: element type *target.node holds Go pointers"},
			{"enter data nowait of []*node", EnterDataNowait(dev, To([]float32{1}), To(nodes).Named("nodes")).Wait(), "map item 1 (nodes): element type *target.node"},
			{"exit data of []node", ExitData(dev, From(structs)), "element type target.node holds Go pointers"},
			{"update of []string", Update(dev, To([]string{"a"})), "element type string"},
			{"alloc of [][]float32", EnterData(dev, Alloc([][]float32{{1}})), "element type []float32"},
			{"release of []any", ExitData(dev, Release([]any{1})), "element type interface {}"},
			{"delete of []map", ExitData(dev, Delete([]map[int]int{nil})), "element type map[int]int"},
			{"data region of []*node", Data(dev, []Map{ToFrom(nodes)}, func() error { return nil }), "*target.node"},
			{"target maps []*node", Target(Region{Device: Dev(dev), Kernel: kernels.Empty, Shape: N(1), Maps: []Map{ToFrom(nodes)}, Args: []Arg{Int(1)}}), "*target.node"},
			{"target nowait maps []*node", TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Empty, Shape: N(1), Maps: []Map{ToFrom(nodes)}, Args: []Arg{Int(1)}}).Wait(), "*target.node"},
			{"slice of []*node", Target(Region{Device: Dev(dev), Kernel: scalar32, Shape: N(1), Args: []Arg{Int(1), Int(0), Slice(nodes)}}), "argument 2 (raw): element type *target.node"},
			{"memcpy from []*node", Memcpy(Host(make([]byte, 16)), Host(nodes), 16), "memcpy source: element type *target.node"},
			{"memset of []*node", Memset(Host(nodes), 0, 8), "memset destination: element type *target.node"},
			{"associate []*node", Associate(nodes, 0x1000, 0, dev), "associate: element type *target.node"},
		} {
			wantErr(t, dev, c.name, c.err, c.want)
		}
	}
	for _, d := range r.devs {
		assert.Zero(t, d.table.Len(), "%s: present entries after refused maps", d.id)
	}
	// Pointer-free structs and arrays map.
	type pair struct {
		a float32
		b [2]int32
	}
	ok := []pair{{1, [2]int32{2, 3}}}
	for _, dev := range devs {
		require.NoError(t, EnterData(dev, To(ok)), "device %d: enter data of a pointer-free struct", dev)
		require.NoError(t, ExitData(dev, Delete(ok)))
	}
}

// panics is a kernel whose Go image panics: the initial and host devices
// turn that into an error.
var panics = &device.Kernel{
	Name:   "panics",
	Params: []device.Param{{Name: "n", Kind: device.ParamInt64}},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) { panic("boom") }}},
}

// The initial device keeps the rules the offload devices keep: the same
// input is refused on both, with the same words.
func TestInitialDeviceSameRules(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(100)
	for _, c := range []struct {
		name string
		r    func(dev int) Region
		want string
	}{
		{"delete map in a target", func(dev int) Region { return saxpyRegion(dev, 100, 1, x, y, Delete(x)) }, "does not accept map type delete"},
		{"release map in a target", func(dev int) Region { return saxpyRegion(dev, 100, 1, x, y, Release(y)) }, "does not accept map type release"},
		{"overlapping items", func(dev int) Region { return saxpyRegion(dev, 10, 1, x, y, To(x[:60]), From(x[50:])) }, "overlaps"},
		{"empty map", func(dev int) Region { return saxpyRegion(dev, 10, 1, x, y, To(x[:0])) }, "empty host range"},
		{"threads 1<<20", func(dev int) Region {
			reg := saxpyRegion(dev, 100, 1, x, y)
			reg.Shape.Threads = 1 << 20
			return reg
		}, "1048576 threads per team"},
		{"zero Arg", func(dev int) Region {
			return Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(100), Args: []Arg{Int(100), Float32(1), {}, Slice(y)}}
		}, "argument 2 (x): zero target.Arg"},
		{"zero scalar Arg", func(dev int) Region {
			return Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(100), Args: []Arg{{}, Float32(1), Slice(x), Slice(y)}}
		}, "argument 0 (n): zero target.Arg"},
		{"kernel panics", func(dev int) Region {
			return Region{Device: Dev(dev), Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}}
		}, "panicked in team 0 of 1: boom"},
	} {
		before := append([]float32(nil), y...)
		for _, dev := range []int{0, InitialDevice} {
			wantErr(t, dev, c.name, Target(c.r(dev)), c.want)
			for i := range y {
				require.Equal(t, before[i], y[i], "device %d: %s: y[%d] changed by a refused region", dev, c.name, i)
			}
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after refused regions")
}

// The checks cost no allocation: a saxpy region with maps, implicit maps
// and a device pointer allocates nothing on the host device, nor on the
// initial device (whose scratch comes from a sync.Pool, which the race
// detector empties at random).
func TestChecksAllocateNothing(t *testing.T) {
	r := hostRuntime(t)
	x, y := vecs(1024)
	devs := []int{0, len(r.devs)}
	if raceEnabled {
		devs = devs[:1]
	}
	for _, dev := range devs {
		p, err := AllocMem(4*len(y), dev)
		require.NoError(t, err)
		for _, reg := range []Region{
			saxpyRegion(dev, len(x), 2, x, y, To(x), ToFrom(y)),
			saxpyRegion(dev, len(x), 2, x, y),
			{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(len(x)), Args: []Arg{Int(len(x)), Float32(2), Slice(x), Ptr(p)}},
		} {
			require.NoError(t, Target(reg))
			assert.Zero(t, testing.AllocsPerRun(100, func() { Target(reg) }), "device %d: allocations per region", dev)
		}
		require.NoError(t, FreeMem(p, dev))
	}
}
