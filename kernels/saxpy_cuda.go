package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

// The PTX of SaxpyCUDA is generated from saxpy_cuda.cu by gen.sh.
//go:generate sh gen.sh

//go:embed saxpy_cuda.ptx
var saxpyCUDAPTX string

// SaxpyCUDA is Saxpy with its device code written by hand in CUDA C
// (saxpy_cuda.cu, compiled to PTX by clang without a CUDA toolkit): the
// example of a kernel whose device code is not generated, with a Go image
// (Saxpy's) and a PTX image but no OpenCL image. Same parameters, Sample
// and result as Saxpy.
var SaxpyCUDA = &device.Kernel{
	Name:   "saxpy_cuda",
	Params: Saxpy.Params,
	Dims:   1,
	Images: []device.Image{
		{Kind: device.ImageHost, Entry: "saxpy_cuda", Host: Saxpy.Host()},
		{Kind: "ptx", Entry: "saxpy_cuda", Source: saxpyCUDAPTX},
	},
	Sample: Saxpy.Sample,
}
