package ir

import (
	"fmt"
)

// ClOptions are the OpenCL build options of every generated kernel: float
// division and sqrt correctly rounded, as Go's (OpenCL allows 2.5 ulp by
// default, and NVIDIA's drivers use it).
const ClOptions = "-cl-fp32-correctly-rounded-divide-sqrt"

// The image kinds the generated kernels carry besides the Go image: the
// names the OpenCL and CUDA plugins declare for their formats
// (opencl.ImageC, cuda.ImagePTX). A generated file names them as strings
// so that a kernel package imports no plugin.
const (
	ImageC   = "opencl-c"
	ImagePTX = "ptx"
)

// EntryParams declares the entry point's parameters: scalars as the
// device.ParamKind they are passed as, buffers as __global pointers.
func EntryParams(k *Kernel) (decl []string, names map[*Param]string) {
	names = map[*Param]string{}
	used := map[string]bool{}
	for _, p := range k.Args() {
		n := CName(p.Name, used)
		names[p] = n
		if p.Slice {
			cst := ""
			if !p.Written {
				cst = "const "
			}
			decl = append(decl, fmt.Sprintf("__global %s%s *%s", cst, p.T.CMem(), n))
		} else {
			decl = append(decl, p.T.CParam()+" "+n)
		}
	}
	return decl, names
}

func ParamNamed(k *Kernel, name string) *Param {
	for _, p := range k.Args() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// MaxThreads is kernelrt.MaxThreads: a reduction's team size limit.
const MaxThreads = 256
