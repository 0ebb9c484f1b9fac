package kernels_test

import (
	_ "embed"
	"fmt"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
)

// Scale is a kernel written outside the library: x[i] *= s for i in [0, n).
// It has OpenCL C device code (for OpenCL devices), PTX made from it by
// clang-19 (for CUDA devices; the command is in the package comment) and
// a Go image (for the host device and the initial device).
var Scale = &device.Kernel{
	Name: "scale",
	Params: []device.Param{
		device.ScalarParam("n", device.ParamInt64),
		device.ScalarParam("s", device.ParamFloat32),
		device.BufferParam("x", device.ParamFloat32, "n"), // x holds n elements
	},
	Dims: 1,
	Images: []device.Image{
		{Kind: device.ImageHost, Entry: "scale", Host: scaleHost},
		{Kind: "opencl-c", Entry: "scale", Source: scaleCL}, // opencl.ImageC
		{Kind: "ptx", Entry: "scale", Source: scalePTX},     // cuda.ImagePTX
	},
}

//go:embed testdata/userkernel/scale.cl
var scaleCL string

//go:embed testdata/userkernel/scale.ptx
var scalePTX string

// scaleHost computes the part r of the iteration space (one team's).
func scaleHost(a *device.HostArgs, r device.Range, team, teams int) {
	lo, hi := r.Clamp(0, device.Value[int](a, "n"))
	s := device.Value[float32](a, "s")
	x := device.Slice[float32](a, "x")[lo:hi]
	for i := range x {
		x[i] *= s
	}
}

func Example_userKernel() {
	x := []float32{1, 2, 3, 4, 5}
	err := target.Target(target.Region{
		Device: target.Dev(target.DefaultDevice),
		Kernel: Scale,
		Shape:  target.N(len(x)),
		Maps:   []target.Map{target.ToFrom(x)},
		Args:   []target.Arg{target.Int(len(x)), target.Float32(10), target.Slice(x)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x)
	// Output: [10 20 30 40 50]
}
