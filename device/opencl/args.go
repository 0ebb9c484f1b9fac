package opencl

import (
	"fmt"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// checkKernelArgs compares a kernel's declared parameters with the
// arguments of its OpenCL C entry, as the driver reports them (the program
// is built with -cl-kernel-arg-info): a buffer must be a pointer to
// __global (or __constant) memory of the declared element type (any, for
// an untyped buffer or a void*; a vector of it, such as float4* for
// float32, is allowed); a scalar must be passed by value as a type of its
// kind (int or uint for an int32 or uint32, long or ulong for int64,
// float, double). A mismatch, which would otherwise
// run and give a wrong result (two parameters of one size declared in the
// wrong order), is an error naming the parameter and both types.
//
// Where the driver reports an argument's name (CL_KERNEL_ARG_NAME; a
// driver without it leaves it empty, and that argument's name is not
// compared), each of k.Params must also be named as the argument at its
// position: two parameters of one type declared in the wrong order agree
// in type and differ only in name. The fault record of a checked kernel
// (device.FaultParam) is the plugin's, not a declared parameter: its type
// is checked, its name is not.
func checkKernelArgs(k *device.Kernel, entry string, args []cl.KernelArg) error {
	for i, p := range k.DeviceParams() {
		a := args[i]
		if err := checkArgType(k, entry, i, p, a); err != nil {
			return err
		}
		if i < len(k.Params) && a.Name != "" && a.Name != p.Name {
			return argNameError(entry, i, p.Name, args)
		}
	}
	return nil
}

// argNameError is the error for parameter i, named name, whose argument
// in the OpenCL C is named otherwise.
func argNameError(entry string, i int, name string, args []cl.KernelArg) error {
	fix := "Params must name the arguments as the source does"
	for _, b := range args {
		if b.Name == name {
			fix = "Params must list the arguments in the source's order"
			break
		}
	}
	return fmt.Errorf("OpenCL kernel %s's argument %d is named %q but the Kernel's parameter %d is %q; %s", entry, i, args[i].Name, i, name, fix)
}

// checkArgType compares parameter i of k, p, with a, what the driver says
// of argument i of the OpenCL C entry; see checkKernelArgs.
func checkArgType(k *device.Kernel, entry string, i int, p device.Param, a cl.KernelArg) error {
	typ := strings.ReplaceAll(a.TypeName, " ", "")
	base, ptr := strings.CutSuffix(typ, "*")
	what := fmt.Sprintf("kernel %s parameter %d (%s) is declared %s, but argument %d of OpenCL kernel %s", k.Name, i, p.Name, describeParam(p), i, entry)
	if a.Name != "" {
		what += " (" + a.Name + ")"
	}
	if p.Kind == device.ParamBuffer {
		switch {
		case !ptr:
			return fmt.Errorf("%s is a %s passed by value; the parameters are in a different order, or the declaration is wrong", what, typ)
		case a.Address == cl.KERNEL_ARG_ADDRESS_LOCAL:
			return fmt.Errorf("%s is a __local %s: gompt passes device buffers, which are __global", what, typ)
		case a.Address == cl.KERNEL_ARG_ADDRESS_PRIVATE:
			return fmt.Errorf("%s is a __private %s: gompt passes device buffers, which are __global", what, typ)
		}
		if p.Elem == 0 || base == "void" {
			return nil
		}
		// float4* holds float32 elements too.
		if scalar := strings.TrimRight(base, "0123456789"); !clTypeIs(scalar, p.Elem) {
			return fmt.Errorf("%s is a __global %s: its elements are not %s (%s)", what, typ, p.Elem, strings.Join(clTypes[p.Elem], " or "))
		}
		return nil
	}
	if ptr {
		return fmt.Errorf("%s is a pointer (%s); the parameters are in a different order, or the declaration is wrong", what, typ)
	}
	if !clTypeIs(typ, p.Kind) {
		return fmt.Errorf("%s is a %s; a %s parameter is passed as %s", what, typ, p.Kind, strings.Join(clTypes[p.Kind], " or "))
	}
	return nil
}

// clTypes are the OpenCL C types of each kind, signed or not.
var clTypes = map[device.ParamKind][]string{
	device.ParamInt32:   {"int", "uint"},
	device.ParamUint32:  {"int", "uint"},
	device.ParamInt64:   {"long", "ulong"},
	device.ParamFloat32: {"float"},
	device.ParamFloat64: {"double"},
	device.ParamInt8:    {"char", "uchar"},
	device.ParamUint8:   {"char", "uchar"},
	device.ParamInt16:   {"short", "ushort"},
	device.ParamUint16:  {"short", "ushort"},
	device.ParamUint64:  {"long", "ulong"},
}

// clTypeIs reports whether the OpenCL C type t (no spaces) is one of
// kind's.
func clTypeIs(t string, kind device.ParamKind) bool {
	t = strings.TrimPrefix(t, "unsigned")
	for _, w := range clTypes[kind] {
		if t == w {
			return true
		}
	}
	return false
}

// describeParam says what a parameter is: "a float32 scalar", "a buffer
// of float32", "an untyped buffer".
func describeParam(p device.Param) string {
	switch {
	case p.Kind != device.ParamBuffer:
		return "a " + p.Kind.String() + " scalar"
	case p.Elem == 0:
		return "an untyped buffer"
	}
	return "a buffer of " + p.Elem.String()
}
