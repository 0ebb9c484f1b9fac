package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed saxpy_cuda.ptx
var saxpyCUDAPTX string

// SaxpyCUDA is Saxpy with its device code written in CUDA C (saxpy_cuda.cu,
// compiled to PTX by clang without a CUDA toolkit): the example of a kernel
// that has a Go image and a PTX image but no OpenCL image. Same parameters
// and result as Saxpy.
var SaxpyCUDA = &device.Kernel{
	Name:   "saxpy_cuda",
	Params: saxpyParams(),
	Dims:   1,
	Images: []device.Image{
		{Kind: device.ImageHost, Entry: "saxpy_cuda", Host: saxpyHost},
		{Kind: device.ImagePTX, Entry: "saxpy_cuda", Source: saxpyCUDAPTX},
	},
	Sample: saxpySample("saxpy_cuda"),
}
