package kernels_test

import (
	"os"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The user kernel of example_userkernel_test.go, defined with only what
// package device exports, runs on every device present (the host device,
// POCL's OpenCL device, the initial device), and its declaration passes
// the checks the runtime makes.
func TestUserKernelEveryDevice(t *testing.T) {
	require.NoError(t, Scale.Check())
	devs := []int{target.InitialDevice}
	var plugins []string
	for _, d := range target.Devices() {
		devs = append(devs, d.Num)
		plugins = append(plugins, d.Plugin)
	}
	if os.Getenv("CI") == "true" {
		require.Contains(t, plugins, "opencl", "CI: want the host and OpenCL devices")
		require.Contains(t, plugins, "host", "CI: want the host and OpenCL devices")
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
		require.NoError(t, err, target.Describe(dev))
		for i, v := range x {
			want := float32(i) * -2
			if i == n {
				want = float32(n) // past n: untouched
			}
			if v != want { // require only on failure: one check per element
				require.Equal(t, want, v, "%s: x[%d]", target.Describe(dev), i)
			}
		}
	}
	// A short buffer is refused by name, on every device, before any work.
	short := make([]float32, 3)
	err := target.Target(target.Region{Device: target.Dev(target.InitialDevice), Kernel: Scale, Shape: target.N(4),
		Args: []target.Arg{target.Int(4), target.Float32(1), target.Slice(short)}})
	if assert.Error(t, err, "a 3-element x with n = 4") {
		assert.Contains(t, err.Error(), "scale", "the error names the kernel")
		assert.Contains(t, err.Error(), "x", "the error names the argument")
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
			Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) { body(a) }}},
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
			assert.ErrorContains(t, err, c.want, target.Describe(dev))
		}
	}
}
