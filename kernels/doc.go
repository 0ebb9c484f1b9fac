// Package kernels is gompt's kernel library, and the pattern for writing
// your own kernels.
//
// A kernel (a *device.Kernel) is one name with several images that all
// compute the same result:
//
//   - OpenCL C source, the device code, written once (saxpy.cl). The OpenCL
//     plugin builds it at run time.
//   - PTX generated from that same source by clang-19 with libclc
//     (saxpy.ptx, committed; no CUDA toolkit needed). The CUDA plugin JITs
//     it. A kernel may instead carry PTX made from CUDA C (see SaxpyCUDA and
//     saxpy_cuda.cu).
//   - A Go function (device.HostFunc), run by the host device and by the
//     initial device.
//
// The library: Empty, Saxpy, VecAdd, Dot (with DotShape and SumPartials),
// Matmul, Jacobi, Fill and SaxpyCUDA; All lists them and ByName finds one.
//
// # Writing a kernel
//
// A kernel of your own, in your own package, needs nothing unexported:
// here is a whole one (example_userkernel_test.go in this folder is it, as
// a package outside the library, with its source in a file and PTX added
// as described below; its test runs it on every device):
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
//		Images: device.Images("scale", scaleHost, scaleCL, ""), // Go, OpenCL C, no PTX yet
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
//		Device: target.DefaultDevice,
//		Kernel: mykernels.Scale,
//		Shape:  target.N(len(x)),
//		Maps:   []target.Map{target.ToFrom(x)},
//		Args:   []target.Arg{target.Int(len(x)), target.Float32(10), target.Slice(x)},
//	})
//
// Params lists the parameters in the order of the OpenCL C kernel's
// arguments: buffers (device.BufferParam) with their element type, scalars
// (device.ScalarParam) of kind ParamInt64 (long), ParamFloat32 (float) and
// so on. device.Images names the entry point in the device source (the
// Kernel's Name) and leaves out an image given as nil or "". Avoid names of
// OpenCL C built-in functions (dot, min, clamp...): some OpenCL
// implementations refuse a kernel so named, which is why the library's dot
// product is "dot_partial".
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
// more must work. The library's kernels take three paths:
//
//	size_t g = get_global_size(0);
//	if (n <= 0) return;
//	if (n <= INT_MAX && g <= INT_MAX) {          // 32-bit indices
//		uint m = (uint)n, i = (uint)get_global_id(0);
//		if (g >= m) {                              // one work-item per point
//			uint end = (uint)((get_group_id(0) + 1) * get_local_size(0));
//			if (end <= m) { ... }                    // a whole group in range
//			else if (i < m) { ... }
//			return;
//		}
//		for (; i < m; i += (uint)g) { ... }        // grid-stride
//		return;
//	}
//	for (long i = get_global_id(0); i < n; i += g) { ... }
//
// The one-work-item-per-point path is what the plugins launch when the
// shape leaves Teams to them, and the one a CPU OpenCL device (POCL)
// vectorizes across work-items: a loop inside each work-item, or 64-bit
// counters, made jacobi ten times slower there, and a bounds test in
// every work-item made saxpy 2.5 times slower than testing once whether
// the whole work-group is in range (a test of values uniform across the
// group, which POCL hoists out of its loop over the work-items). The grid-stride loop keeps
// the result right for a launch with fewer work-items than points (a
// Teams clause, or the plugins' cap on huge launches); the 64-bit loop for
// sizes past 2^31. For a two-dimensional space, test and nest per
// dimension (dimension 0 fastest). Keep a loop with a uniform trip count
// (matmul's inner product) out of a branch on the work-item's index:
// clamp the index, run the loop in every work-item and guard only the
// store, so that POCL runs the loop around its work-items and vectorizes.
// The simplest kernel, a single 64-bit grid-stride loop, is correct too:
//
//	for (long i = get_global_id(0); i < n; i += get_global_size(0)) { ... }
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
// positional accessors, a.F32(2) and a.Int(0), which the older library
// kernels use.) Keep it a tight loop over slices taken once, with no
// allocation.
//
// Generate the PTX with a go:generate line beside the sources; gen.sh in
// this folder is a script to copy:
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
// later GPU; not sm_70, since driver branches after 580 may drop Volta)
// and, for each .cu file (CUDA C, with cuda_sreg.cuh for threadIdx and
// friends),
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
//	Images: device.Images("scale", scaleHost, scaleCL, scalePTX),
//
// (kernels/saxpy.go is the library's kernel built this way.)
//
// # Conformance
//
// Give the kernel a Sample: a deterministic problem of about n iterations
// for (n, seed), with its launch shape, initial buffers (device.Bytes of
// float32 slices, each at least its Len), scalar arguments
// (device.Arg{Bits: math.Float32bits(v)} for a float32, uint64(n) for an
// int64) and a relative tolerance. The
// device conformance suite runs the Sample on every device present and on the
// Go image and compares every buffer, so your kernel is checked as the
// library's are. Prefer data that avoids cancellation (positive values), so
// that a fused multiply-add on one device and not on another stays within
// the tolerance.
package kernels
