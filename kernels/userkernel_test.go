package kernels_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
)

// The user kernel of example_userkernel_test.go, defined with only what
// package device exports, runs on every device present (the host device,
// POCL's OpenCL device, the initial device), and its declaration passes
// the checks the runtime makes.
func TestUserKernelEveryDevice(t *testing.T) {
	if err := Scale.Check(); err != nil {
		t.Fatal(err)
	}
	devs := []int{target.InitialDevice}
	var plugins []string
	for _, d := range target.Devices() {
		devs = append(devs, d.Num)
		plugins = append(plugins, d.Plugin)
	}
	if os.Getenv("CI") == "true" && (!strings.Contains(strings.Join(plugins, ","), "opencl") || !strings.Contains(strings.Join(plugins, ","), "host")) {
		t.Fatalf("CI: want the host and OpenCL devices, have %v", plugins)
	}
	for _, dev := range devs {
		n := 1000
		x := make([]float32, n+1)
		for i := range x {
			x[i] = float32(i)
		}
		err := target.Target(target.Region{
			Device: target.Dev(dev),
			Kernel: Scale,
			Shape:  target.Shape{Size: [3]int{n, 1, 1}, Teams: 3, Threads: 7},
			Maps:   []target.Map{target.ToFrom(x)},
			Args:   []target.Arg{target.Int(n), target.Float32(-2), target.Slice(x)},
		})
		if err != nil {
			t.Fatalf("%s: %v", target.Describe(dev), err)
		}
		for i, v := range x {
			want := float32(i) * -2
			if i == n {
				want = float32(n) // past n: untouched
			}
			if v != want {
				t.Fatalf("%s: x[%d] = %v, want %v", target.Describe(dev), i, v, want)
			}
		}
	}
	// A short buffer is refused by name, on every device, before any work.
	short := make([]float32, 3)
	err := target.Target(target.Region{Device: target.Dev(target.InitialDevice), Kernel: Scale, Shape: target.N(4),
		Args: []target.Arg{target.Int(4), target.Float32(1), target.Slice(short)}})
	if err == nil || !strings.Contains(err.Error(), "scale") || !strings.Contains(err.Error(), "x") {
		t.Errorf("a 3-element x with n = 4: %v", err)
	}
}

// A Go image that asks for a parameter the kernel does not have, or for
// the wrong type, fails the launch with a message naming the parameter,
// on the host device and on the initial device.
func TestHostArgsByNameErrors(t *testing.T) {
	bad := func(body func(a *device.HostArgs)) *device.Kernel {
		return &device.Kernel{
			Name:   "bad",
			Params: Scale.Params,
			Images: device.Images("bad", func(a *device.HostArgs, r device.Range, team, teams int) { body(a) }, "", ""),
		}
	}
	cases := []struct {
		k    *device.Kernel
		want string
	}{
		{bad(func(a *device.HostArgs) { device.Slice[float32](a, "y") }), `kernel bad has no parameter "y" (its parameters: n int64, s float32, x buffer)`},
		{bad(func(a *device.HostArgs) { device.Slice[float64](a, "x") }), "buffer x holds float32 elements (4 bytes), not float64 (8 bytes)"},
		{bad(func(a *device.HostArgs) { device.Value[int](a, "s") }), "parameter s is of kind float32, not int"},
		{bad(func(a *device.HostArgs) { device.Value[float32](a, "n") }), "parameter n is of kind int64, not float32"},
		{bad(func(a *device.HostArgs) { device.Value[int](a, "x") }), "parameter x is a buffer, not a scalar"},
	}
	devs := []int{target.InitialDevice}
	for _, d := range target.Devices() {
		if d.Plugin == "host" {
			devs = append(devs, d.Num)
		}
	}
	for _, c := range cases {
		for _, dev := range devs {
			x := make([]float32, 4)
			err := target.Target(target.Region{Device: target.Dev(dev), Kernel: c.k, Shape: target.N(4),
				Args: []target.Arg{target.Int(4), target.Float32(1), target.Slice(x)}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v; want an error saying %q", target.Describe(dev), err, c.want)
			}
		}
	}
}
