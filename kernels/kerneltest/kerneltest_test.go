package kerneltest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
)

// A refusal is accepted only as the device.NeedError of the kernel, the
// need and the device expected, naming the position and what the device
// lacks; anything else (a run, a driver's build error, another need, a
// position or device) is reported.
func TestRefusalErrorAcceptsOnlyTheExpectedNeedError(t *testing.T) {
	k := &device.Kernel{Name: "Accel"}
	n := device.Need{Kind: device.NeedFP64, Use: "float64", Pos: "nbody.go:31"}
	const lacks = "has no cl_khr_fp64"
	ne := func(edit func(e *device.NeedError)) error {
		e := &device.NeedError{Kernel: "Accel", Need: n, Device: "opencl:1", Name: "llvmpipe", Lacks: lacks}
		if edit != nil {
			edit(e)
		}
		return e
	}
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"the refusal", ne(nil), true},
		{"the refusal, wrapped", fmt.Errorf("target: %w", ne(nil)), true},
		{"a run", nil, false},
		{"a build error", errors.New("opencl:1: load Accel: invalid binary: use of type 'double' requires cl_khr_fp64 support"), false},
		{"ErrUnsupported alone", fmt.Errorf("opencl:1: %w", device.ErrUnsupported), false},
		{"another kernel", ne(func(e *device.NeedError) { e.Kernel = "Drift" }), false},
		{"another need", ne(func(e *device.NeedError) { e.Need.Kind = device.NeedInt64Atomics }), false},
		{"another position", ne(func(e *device.NeedError) { e.Need.Pos = "nbody.go:32" }), false},
		{"no position", ne(func(e *device.NeedError) { e.Need.Pos = "" }), false},
		{"another device", ne(func(e *device.NeedError) { e.Device = "opencl:0" }), false},
		{"another lack", ne(func(e *device.NeedError) { e.Lacks = "has no cl_khr_int64_base_atomics" }), false},
	} {
		why := refusalError(k, n, "opencl:1", lacks, c.err)
		if c.ok {
			assert.Empty(t, why, c.name)
		} else {
			assert.NotEmpty(t, why, c.name)
		}
	}
}

// IsPresent takes every slice type a kernel does, and only those.
func TestIsPresentTakesEveryKernelSliceType(t *testing.T) {
	dev := target.InitialDevice // where everything is present
	want := true
	if devs := target.Devices(); len(devs) > 0 {
		dev, want = devs[0].Num, false
	}
	for _, s := range []any{[]int8{1}, []uint8{1}, []int16{1}, []uint16{1}, []int32{1}, []uint32{1}, []int64{1}, []uint64{1}, []int{1}, []uint{1}, []float32{1}, []float64{1}} {
		assert.Equal(t, want, IsPresent(s, dev), "%T on %s", s, target.Describe(dev))
	}
	assert.Panics(t, func() { IsPresent([]string{"x"}, dev) })
}
