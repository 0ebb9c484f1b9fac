// Package kernels is gompt's kernel library, and the pattern for writing
// your own kernels.
//
// A kernel (a *device.Kernel) is one name with several images that all
// compute the same result: OpenCL C source, which the OpenCL plugin builds
// at run time; PTX, which the CUDA plugin JITs; and a Go function
// (device.HostFunc) that the host device and the initial device run.
//
// The library: Empty, Saxpy, VecAdd, Dot (with DotShape and SumPartials),
// Matmul, Jacobi, Fill, Copy32 and SaxpyCUDA; All lists them and ByName
// finds one. MatmulTiled (with MatmulTiledTeams) is Matmul as a team
// kernel, in 64x64 tiles through team arrays, and Histogram an array
// reduction (256 bins); they are not in All. Their typed launchers (launch.RunSaxpy(dev, n, a, x, y) ...)
// are in package kernels/launch, each with a nowait form
// (launch.RunSaxpyNowait(dev, n, a, x, y, deps...) returns the
// *target.Task). MatmulTiled is Matmul's variant on OpenCL and CUDA
// devices (//gompt:variant, as OpenMP's declare variant): launch.RunMatmul
// runs it there and Matmul on the host device and the initial device, and
// computes its teams (arg(teams)=MatmulTiledTeams).
//
// # Writing a kernel in Go
//
// Every library kernel but SaxpyCUDA is a Go function (library.go) that
// cmd/gompt-kernels translates into all three images, a device.Kernel and
// a launcher. A kernel of your own, in your own package, is written the
// same way:
//
//	package mykernels
//
//	//go:generate go run github.com/gompt/gompt/cmd/gompt-kernels
//
//	// Scale computes x[i] *= s.
//	//
//	//gompt:kernel dims=n
//	func Scale(i int, n int, s float32, x []float32) { x[i] *= s }
//
// go generate writes gompt_kernels.go, holding ScaleKernel (the
// *device.Kernel: parameters n int64, s float32, x a float32 buffer of n
// elements; its images; a Sample) and the launcher
//
//	func RunScale(dev target.DeviceClause, n int, s float32, x []float32) error
//
// which maps x both ways and runs ScaleKernel over [0, n), and its nowait
// form
//
//	func RunScaleNowait(dev target.DeviceClause, n int, s float32, x []float32, deps ...target.Map) *target.Task
//
// (a reduction's returns a *target.Result, whose Wait gives the value); and
// gompt_Scale.cl and gompt_Scale.ptx, embedded in ScaleKernel. Run
// `go run github.com/gompt/gompt/cmd/gompt-kernels -h` for the directive
// (dims=, reduce=, reduce(buf)=, team=, len(buf)=, arg(p)=, name=, var=;
// //gompt:variant for a kernel that another replaces on some devices) and the
// subset of Go a kernel may use; the repository's README ("Writing a kernel") says what the
// generated code keeps of Go on every device: the Go function's result bit
// for bit for map kernels, reductions within a stated tolerance, slices
// mapped by use, len(buf) the declared length everywhere.
//
// The library's kernels keep the names, kernel names and parameters they
// had when they were written by hand (var= and name= set them), so that
// programs launching them with target.Target and their own arguments,
// such as cmd/ompt-bench, work unchanged; Dot is reduce=+, whose last
// parameter partial receives one sum per team. This package must not
// import package target (whose own tests use the kernels), so its
// go:generate line passes -launchers launch, which writes the launchers
// into package kernels/launch.
//
// # Teams, barriers, atomics and array reductions
//
// A team kernel (team=N) sees its team: its first parameters are the
// team's index and the thread's index in it, dims= names the number of
// teams, arrays declared at the top of its body are the team's local
// memory (OpenCL __local, CUDA .shared), and kernelrt.Barrier() waits for
// the team's threads:
//
//	//gompt:kernel team=64 dims=teams len(in)=teams*64 len(sums)=teams
//	func BlockSum(t, th int, teams int, in, sums []float32) {
//		var part [64]float32 // local memory: one per team
//		part[th] = in[t*64+th]
//		for s := 32; s > 0; s /= 2 {
//			kernelrt.Barrier()
//			if th < s {
//				part[th] += part[th+s]
//			}
//		}
//		if th == 0 {
//			sums[t] = part[0]
//		}
//	}
//
// Its launcher runs teams teams of N threads on every device: a team is a
// work-group of N work-items on OpenCL and CUDA, and the Go image runs its
// threads one after another between barriers. Every thread must reach the
// same barriers (a barrier under a condition that depends on the thread is
// a generator error). MatmulTiled is the library's team kernel.
//
// A kernel may call sync/atomic's Add, CompareAndSwap and Load of int32,
// uint32, int64 and uint64 on an element of a slice parameter:
//
//	//gompt:kernel dims=n len(count)=16
//	func Count(i int, n int, v []uint32, count []uint32) {
//		atomic.AddUint32(&count[v[i]%16], 1)
//	}
//
// and reduce(buf)=+ makes buf an array reduction: the points add into its
// elements, each team into a private copy (local memory on a device) that
// it adds into buf once, exactly for integer elements (Histogram is the
// library's). reduce(buf)=*, =min and =max multiply, lower and raise
// elements instead (buf[i] *= v, buf[i] = min(buf[i], v), buf[i] =
// max(buf[i], v)); elements are 32- or 64-bit integers or floats:
//
//	//gompt:kernel dims=n reduce(h)=+ len(h)=256
//	func Histogram(i int, n int, v []uint8, h []uint32) { h[v[i]]++ }
//
// Where a launch leaves Shape.Teams and Shape.Threads 0, the OpenCL plugin
// makes work-groups of 256 work-items (1024 on a CPU device such as POCL)
// and enough of them for one work-item per point (up to 2^30 work-items);
// the CUDA plugin, blocks of 256 threads (32x8 in 2-D and 3-D) and a grid
// that covers the space; the host device and the initial device, one team
// (a goroutine) per 16384 points, at most GOMAXPROCS. Generated launchers
// of reductions and array reductions set kernelrt.Teams(points) teams of
// kernelrt.MaxThreads threads, and of team kernels teams teams of N (the
// README's "Writing a kernel" has the details and the figures).
//
// Test a kernel of your own with kerneltest.CheckKernel(t, k), which runs
// its Sample on every device present and compares each result with its Go
// image's; call the Go function directly to test its logic.
//
// # Writing a kernel by hand
//
// The generated code is what a hand-written kernel is, and a kernel may
// still be written so, in OpenCL C (or CUDA C, for PTX only: SaxpyCUDA is
// the library's example, saxpy_cuda.cu). Here is a whole one, in a package
// that needs nothing unexported (example_userkernel_test.go in this folder
// is it, with its source in a file and PTX added as described below; its
// test runs it on every device):
//
//	package mykernels
//
//	import "github.com/gompt/gompt/device"
//
//	// Scale computes x[i] *= s for i in [0, n).
//	var Scale = &device.Kernel{
//		Name: "scale",
//		Params: []device.Param{
//			device.ScalarParam("n", device.ParamInt64),
//			device.ScalarParam("s", device.ParamFloat32),
//			device.BufferParam("x", device.ParamFloat32, "n"), // x holds n elements
//		},
//		Dims:   1,
//		Images: []device.Image{
//			{Kind: device.ImageHost, Host: scaleHost}, // the Go image
//			{Kind: "opencl-c", Source: scaleCL},       // OpenCL C (opencl.ImageC); no PTX yet
//		},
//	}
//
//	const scaleCL = `
//	__kernel void scale(long n, float s, __global float *x) {
//		for (long i = get_global_id(0); i < n; i += get_global_size(0))
//			x[i] *= s;
//	}`
//
//	func scaleHost(a *device.HostArgs, r device.Range, team, teams int) {
//		lo, hi := r.Clamp(0, device.Value[int](a, "n"))
//		s := device.Value[float32](a, "s")
//		x := device.Slice[float32](a, "x")[lo:hi]
//		for i := range x {
//			x[i] *= s
//		}
//	}
//
// and a program runs it as it runs the library's:
//
//	err := target.Target(target.Region{
//		Device: target.Dev(target.DefaultDevice),
//		Kernel: mykernels.Scale,
//		Shape:  target.N(len(x)),
//		Maps:   []target.Map{target.ToFrom(x)},
//		Args:   []target.Arg{target.Int(len(x)), target.Float32(10), target.Slice(x)},
//	})
//
// Params lists the parameters in the order of the OpenCL C kernel's
// arguments, named as they are there: buffers (device.BufferParam) with
// their element type, scalars (device.ScalarParam) of kind ParamInt64
// (long), ParamFloat32 (float) and so on. The OpenCL plugin refuses a
// kernel whose driver reports another type or name at a position, the CUDA
// plugin one whose PTX entry has another size or source name there. An
// image's Entry names the entry point in the device source (the Kernel's
// Name when empty). Avoid names of
// OpenCL C built-in functions (dot, min, clamp...): some OpenCL
// implementations refuse a kernel so named (gompt-kernels names its entry
// points gompt_NAME for that reason).
//
// Declare what the runtime checks before every launch, on every device:
//
//   - Each buffer's Elem: the runtime passes it only slices of that Go type
//     ([]float32 for ParamFloat32). Elem 0 makes an untyped buffer (void*),
//     which takes any slice of a pointer-free type, its Len in bytes.
//   - Each buffer's Len: how many elements the device code may touch, as a
//     product of whole numbers, integer scalar parameters and the shape's
//     Shape.Size[d] or Shape.Teams: "n", "nx*ny", "m*k", "Shape.Teams".
//     A launch with a shorter slice, or a device pointer with fewer
//     elements to the end of its allocation, is refused: device code that
//     indexes past its buffer would corrupt memory or hang the device.
//     Never declare less than the code touches; TestLenIsEnough in this
//     folder runs the Go images on buffers cut to their Len.
//   - Dims: how many dimensions the code iterates over (1 to 3; 0 means
//     1). A launch shape using more is refused, since the Go image and the
//     device code would split the extra dimensions differently.
//
// Kernel.Check reports a declaration it cannot use (a Len naming no integer
// scalar, say); the conformance suite calls it.
//
// Device code must not assume a launch shape: any number of teams and
// threads must compute the same result, and arrays of 2^31 elements and
// more must work. What gompt-kernels generates, and the pattern for
// hand-written code:
//
//	if (n <= 0) return;
//	if (get_global_size(0) >= (ulong)n) {          // one work-item per point
//		long i = get_global_id(0);
//		if ((long)((get_group_id(0) + 1) * get_local_size(0)) <= n) { ... } // a whole group in range
//		else if (i < n) { ... }
//		return;
//	}
//	for (long i = get_global_id(0); i < n; i += get_global_size(0)) { ... } // grid-stride
//
// The one-work-item-per-point path is what the plugins launch when the
// shape leaves Teams to them, and the one a CPU OpenCL device (POCL)
// vectorizes across work-items: a bounds test in every work-item made
// saxpy 2.5 times slower than testing once whether the whole work-group is
// in range (a test of values uniform across the group, which POCL hoists
// out of its loop over the work-items). In two and three dimensions a
// straight-line body ran faster on POCL with the test in every work-item
// only (jacobi 512x512: 140-200 us against 250-380 us), which is what the
// generator emits there; a body with a loop keeps the group's test, since
// POCL vectorizes a loop outside a branch on the work-item's index. The
// grid-stride loop keeps the result right for a launch with fewer
// work-items than points (a Teams clause, or the plugins' cap on huge
// launches). Indices are 64-bit: a 32-bit jacobi body measured slower on
// POCL, not faster.
//
// A kernel with a fixed-size __local array sets Kernel.MaxThreads.
//
// The Go image computes exactly the device.Range it is given (the caller
// splits the space among teams and runs teams concurrently), limited to the
// problem's bounds as the device loops are (Range.Clamp). It reads its
// arguments by name, typed: device.Slice[float32](a, "x") for a buffer,
// device.Value[int](a, "n") or device.Value[float32](a, "s") for a
// scalar; a name the kernel lacks or a type that does not fit fails the
// launch with a message naming the parameter. (HostArgs also has
// positional accessors, a.F32(2) and a.Int(0).) Keep it a tight loop over
// slices taken once, with no allocation.
//
// Generate the PTX with a go:generate line beside the sources; gen.sh in
// this folder is a script to copy (it works in a folder with only .cl or
// only .cu files, and leaves gompt-kernels' files alone):
//
//	//go:generate sh gen.sh
//
// which runs, for each .cl file,
//
//	clang-19 -x cl -cl-std=CL1.2 -target nvptx64-unknown-nvidiacl -march=sm_75 -O3 \
//	    -Xclang -mlink-builtin-bitcode -Xclang /usr/lib/clc/nvptx64--nvidiacl.bc \
//	    -S -o scale.ptx scale.cl
//
// (the target triple is libclc's own, so the two modules link without a
// warning and the entry is .visible, as CUDA-compiled PTX has it; the result
// is PTX ISA 6.3 for sm_75, which CUDA drivers JIT for Turing and every
// later GPU; not sm_70, since driver branches after 580 may drop Volta;
// gompt-kernels adds -ffp-contract=off and
// -cl-fp32-correctly-rounded-divide-sqrt) and, for each .cu file (CUDA C,
// with cuda_sreg.cuh for threadIdx and friends),
//
//	clang-19 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_75 -O3 \
//	    -S -o scale.ptx scale.cu
//
// Embed the sources and add the PTX image to the kernel:
//
//	//go:embed scale.cl
//	var scaleCL string
//
//	//go:embed scale.ptx
//	var scalePTX string
//
//	Images: []device.Image{
//		{Kind: device.ImageHost, Host: scaleHost},
//		{Kind: "opencl-c", Source: scaleCL},
//		{Kind: "ptx", Source: scalePTX}, // cuda.ImagePTX
//	},
//
// An image kind is the name of a format ("opencl-c", "ptx"): each plugin
// declares the kinds its devices run (device.Registration.Images), and a
// device loads the first of them the kernel has.
//
// # Conformance
//
// Give the kernel a Sample: a deterministic problem of about n iterations
// for (n, seed), with its launch shape, initial buffers (device.Bytes of
// float32 slices, each at least its Len), scalar arguments
// (device.Arg{Bits: math.Float32bits(v)} for a float32, uint64(n) for an
// int64) and a relative tolerance (0: bit for bit). The device
// conformance suite, and kerneltest.CheckKernel, run the Sample on every
// device present and on the Go image and compare every buffer, so your
// kernel is checked as the library's are. gompt-kernels writes the Sample
// of a kernel written in Go: random values (floats in [0.5, 1.5), integers
// in [0, 16)), extents for about n points, Tol 0 unless the kernel's
// results are only close (see the README); replace it (KernelVar.Sample =
// ...) for a kernel whose inputs must satisfy more (indices into another
// buffer, say), in an init function before the kernel's first use.
package kernels
