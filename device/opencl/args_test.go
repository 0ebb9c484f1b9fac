package opencl

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
)

// What the driver reports of a kernel's arguments against its declared
// parameters: declarations that agree pass; one in the wrong order, or
// with the wrong kind, element type or address space, is an error naming
// the parameter and what the kernel takes, also where the sizes agree
// (the case that would otherwise run and compute garbage); where the
// driver reports names, a declared parameter named otherwise than the
// argument at its position is an error naming both.
func TestCheckKernelArgs(t *testing.T) {
	arg := func(addr uint32, typ, name string) cl.KernelArg {
		return cl.KernelArg{Address: addr, TypeName: typ, Name: name}
	}
	g, l, p := uint32(cl.KERNEL_ARG_ADDRESS_GLOBAL), uint32(cl.KERNEL_ARG_ADDRESS_LOCAL), uint32(cl.KERNEL_ARG_ADDRESS_PRIVATE)
	c := uint32(cl.KERNEL_ARG_ADDRESS_CONSTANT)
	saxpy := []cl.KernelArg{arg(p, "long", "n"), arg(p, "float", "a"), arg(g, "float*", "x"), arg(g, "float*", "y")}
	params := func(ps ...device.Param) *device.Kernel { return &device.Kernel{Name: "k", Params: ps} }
	n := device.ScalarParam("n", device.ParamInt64)
	a := device.ScalarParam("a", device.ParamFloat32)
	x := device.BufferParam("x", device.ParamFloat32, "n")
	y := device.BufferParam("y", device.ParamFloat32, "n")
	for _, c := range []struct {
		name string
		k    *device.Kernel
		args []cl.KernelArg
		want string // "" for no error
	}{
		{"saxpy as declared", params(n, a, x, y), saxpy, ""},
		{"unsigned and vector types", params(device.ScalarParam("m", device.ParamUint32), device.BufferParam("v", device.ParamFloat32, "4*m"),
			device.BufferParam("w", device.ParamInt32, "m"), device.BufferParam("u", 0, "m")),
			[]cl.KernelArg{arg(p, "unsigned int", "m"), arg(g, "float4*", "v"), arg(c, "uint*", "w"), arg(g, "uchar*", "u")}, ""},
		{"small and unsigned 64-bit element kinds", params(device.BufferParam("b", device.ParamInt8, "1"), device.BufferParam("c", device.ParamUint8, "1"),
			device.BufferParam("d", device.ParamInt16, "1"), device.BufferParam("e", device.ParamUint16, "1"), device.BufferParam("f", device.ParamUint64, "1")),
			[]cl.KernelArg{arg(g, "char*", "b"), arg(g, "uchar*", "c"), arg(g, "short*", "d"), arg(g, "ushort*", "e"), arg(g, "ulong*", "f")}, ""},
		{"int8 buffer where the kernel takes short*", params(device.BufferParam("b", device.ParamInt8, "1")),
			[]cl.KernelArg{arg(g, "short*", "b")}, "its elements are not int8 (char or uchar)"},
		{"int32 declared where the kernel takes a float (same size)", params(device.ScalarParam("m", device.ParamInt32), a, x),
			[]cl.KernelArg{arg(p, "float", "a"), arg(p, "int", "m"), arg(g, "float*", "x")},
			"kernel k parameter 0 (m) is declared a int32 scalar, but argument 0 of OpenCL kernel e (a) is a float; a int32 parameter is passed as int or uint"},
		{"buffer and long swapped (same size)", params(x, n, y), []cl.KernelArg{arg(p, "long", "n"), arg(g, "float*", "x"), arg(g, "float*", "y")},
			"kernel k parameter 0 (x) is declared a buffer of float32, but argument 0 of OpenCL kernel e (n) is a long passed by value"},
		{"long where the kernel takes a pointer", params(n, n, y), []cl.KernelArg{arg(p, "long", "n"), arg(g, "float*", "x"), arg(g, "float*", "y")},
			"parameter 1 (n) is declared a int64 scalar, but argument 1 of OpenCL kernel e (x) is a pointer (float*)"},
		{"float buffer where the kernel takes int*", params(n, a, x, y), []cl.KernelArg{arg(p, "long", "n"), arg(p, "float", "a"), arg(g, "int*", "x"), arg(g, "float*", "y")},
			"parameter 2 (x) is declared a buffer of float32, but argument 2 of OpenCL kernel e (x) is a __global int*: its elements are not float32 (float)"},
		{"__local pointer", params(n, a, x, y), []cl.KernelArg{arg(p, "long", "n"), arg(p, "float", "a"), arg(l, "float*", "x"), arg(g, "float*", "y")},
			"is a __local float*: gompt passes device buffers, which are __global"},
		{"two buffers of one type swapped", params(n, a, y, x), saxpy,
			`OpenCL kernel e's argument 2 is named "x" but the Kernel's parameter 2 is "y"; Params must list the arguments in the source's order`},
		{"a scalar named otherwise", params(device.ScalarParam("count", device.ParamInt64), a, x, y), saxpy,
			`OpenCL kernel e's argument 0 is named "n" but the Kernel's parameter 0 is "count"; Params must name the arguments as the source does`},
		{"a driver that reports no names: types only", params(n, a, y, x),
			[]cl.KernelArg{arg(p, "long", ""), arg(p, "float", ""), arg(g, "float*", ""), arg(g, "float*", "")}, ""},
		{"the fault record's name is not compared", &device.Kernel{Name: "k", Params: []device.Param{x},
			Faults: []device.FaultSite{{Kind: device.FaultIndex, Pos: "k.go:1"}}},
			[]cl.KernelArg{arg(g, "float*", "x"), arg(g, "long*", "record")}, ""},
		{"the fault record's type is", &device.Kernel{Name: "k", Params: []device.Param{x},
			Faults: []device.FaultSite{{Kind: device.FaultIndex, Pos: "k.go:1"}}},
			[]cl.KernelArg{arg(g, "float*", "x"), arg(g, "float*", "gompt_fault")}, "parameter 1 (gompt_fault) is declared a buffer of int64"},
	} {
		err := checkKernelArgs(c.k, "e", c.args)
		if c.want == "" {
			assert.NoError(t, err, c.name)
		} else {
			assert.ErrorContains(t, err, c.want, c.name)
		}
	}
}
