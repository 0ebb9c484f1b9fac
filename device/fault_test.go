package device_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func checkedKernel(name string) *device.Kernel {
	return &device.Kernel{Name: name, Faults: []device.FaultSite{
		{Kind: device.FaultIndex, Pos: "heat.go:14"},
		{Kind: device.FaultDivide, Pos: "heat.go:20"},
	}}
}

// A fault record decodes into Go's words, for its own kernel only.
func TestKernelFaultFromRecord(t *testing.T) {
	k := checkedKernel("Heat")
	tag := device.FaultTag("Heat")
	assert.Nil(t, k.Fault([4]int64{}), "a record no check wrote")
	assert.Nil(t, k.Fault([4]int64{1, 5, 4, device.FaultTag("Other")}), "another kernel's record")
	assert.EqualError(t, k.Fault([4]int64{1, 1048576, 1048576, tag}), "kernel Heat (heat.go:14): index out of range [1048576] with length 1048576")
	assert.EqualError(t, k.Fault([4]int64{1, -1, 9, tag}), "kernel Heat (heat.go:14): index out of range [-1]", "a negative index, as Go prints it")
	assert.EqualError(t, k.Fault([4]int64{2, 0, 0, tag}), "kernel Heat (heat.go:20): integer divide by zero")
	u := &device.Kernel{Name: "Heat", Faults: []device.FaultSite{{Kind: device.FaultIndex, Pos: "heat.go:14", Unsigned: true}, {Kind: device.FaultSliceOrder, Pos: "heat.go:15", Unsigned: true}}}
	assert.EqualError(t, u.Fault([4]int64{1, -1, 9, tag}), "kernel Heat (heat.go:14): index out of range [18446744073709551615] with length 9", "an unsigned index past MaxInt64, as Go prints it")
	assert.EqualError(t, u.Fault([4]int64{2, -1, 3, tag}), "kernel Heat (heat.go:15): slice bounds out of range [18446744073709551615:3]", "an unsigned low bound")
	f := k.Fault([4]int64{7, 0, 0, tag})
	require.NotNil(t, f, "a check number the kernel does not have is reported, not dropped")
	assert.Contains(t, f.Error(), "check 7 of 2")
	assert.Equal(t, []device.Param{{Name: "gompt_fault", Kind: device.ParamBuffer, Elem: device.ParamInt64, Len: "4"}}, k.DeviceParams(), "the fault record after the (no) parameters")
	assert.Len(t, (&device.Kernel{Params: []device.Param{{Name: "n", Kind: device.ParamInt64}}}).DeviceParams(), 1, "an unchecked kernel's device parameters are its Params")
}

// A record of check LoopLimitCheck, which a kernel with or without checks
// writes where its driver ended its loops early, is a FaultLoopLimit that
// says so, for its own kernel only.
func TestLoopLimitFaultFromRecord(t *testing.T) {
	for _, k := range []*device.Kernel{checkedKernel("Heat"), {Name: "Heat"}} {
		tag := device.FaultTag("Heat")
		f := k.Fault([4]int64{device.LoopLimitCheck, 0, 0, tag})
		require.NotNil(t, f, "checked %v", k.Checked())
		assert.Equal(t, device.FaultLoopLimit, f.Site.Kind)
		assert.Contains(t, f.Error(), "kernel Heat: the device ended its loops early")
		assert.Contains(t, f.Error(), "results are incomplete")
		assert.Nil(t, k.Fault([4]int64{device.LoopLimitCheck, 0, 0, device.FaultTag("Other")}), "another kernel's record")
	}
	var l generic.FaultLog
	l.Launched(&device.Kernel{Name: "matmul"})
	err := l.Read([4]int64{device.LoopLimitCheck, 0, 0, device.FaultTag("matmul")})
	var kf *device.KernelFault
	require.True(t, errors.As(err, &kf), "%v", err)
	assert.Equal(t, device.FaultLoopLimit, kf.Site.Kind)
}

// A queue that ran several checked kernels finds the one the record names,
// and forgets them once read.
func TestFaultLogFindsTheKernelByTag(t *testing.T) {
	a, b := checkedKernel("A"), checkedKernel("B")
	var l generic.FaultLog
	assert.False(t, l.Pending())
	l.Launched(a)
	l.Launched(b)
	l.Launched(a)
	require.True(t, l.Pending())
	err := l.Read([4]int64{2, 0, 0, device.FaultTag("B")})
	var f *device.KernelFault
	require.True(t, errors.As(err, &f), "%v", err)
	assert.Equal(t, "B", f.Kernel)
	assert.False(t, l.Pending(), "read: nothing pending")
	l.Launched(a)
	assert.ErrorContains(t, l.Read([4]int64{1, 0, 0, device.FaultTag("B")}), "no kernel this queue launched", "a record of a kernel not launched")
	l.Launched(a)
	assert.NoError(t, l.Read([4]int64{}), "a clean record")
}

//go:noinline
func index(s []int, i int) int { return s[i] }

//go:noinline
func divide(a, b int) int { return a / b }

// recovered runs f and returns what it panicked with and the stack seen
// while the panic ran, as the host executor records them.
func recovered(f func()) (v any, pcs []uintptr) {
	defer func() {
		v = recover()
		pcs = make([]uintptr, 64)
		pcs = pcs[:runtime.Callers(1, pcs)]
	}()
	f()
	return nil, nil
}

// A Go image's own bounds and division panics become the kernel's fault,
// at the line that failed; other panics do not.
func TestGoFaultNamesTheFailingLine(t *testing.T) {
	v, pcs := recovered(func() { index(make([]int, 3), 5) })
	f := device.GoFault("K", v, pcs)
	require.NotNil(t, f)
	assert.Regexp(t, `^kernel K \(fault_test.go:\d+\): index out of range \[5\] with length 3$`, f.Error())
	assert.Equal(t, device.FaultIndex, f.Site.Kind)
	v, pcs = recovered(func() { divide(1, 0) })
	f = device.GoFault("K", v, pcs)
	require.NotNil(t, f)
	assert.Regexp(t, `^kernel K \(fault_test.go:\d+\): integer divide by zero$`, f.Error())
	v, pcs = recovered(func() { panic("mine") })
	assert.Nil(t, device.GoFault("K", v, pcs), "a panic of the kernel's own")
	var m map[string]int
	v, pcs = recovered(func() { m["x"] = 1 })
	assert.Nil(t, device.GoFault("K", v, pcs), "another run-time error")
	assert.True(t, strings.HasPrefix(device.GoFault("K", func() any { v, _ := recovered(func() { index(nil, 0) }); return v }(), nil).Site.Pos, "?"), "no stack: position unknown, fault still reported")
}

//go:noinline
func reslice(s []int, lo, hi, max int, three bool) []int {
	if three {
		return s[lo:hi:max]
	}
	return s[lo:hi]
}

// A slice expression's failed check says what Go's run time says of it,
// for each of its checks, from a device's record and from a Go image's
// panic alike (the same kind, the same words).
func TestSliceFaultsInGoWords(t *testing.T) {
	k := &device.Kernel{Name: "K", Faults: []device.FaultSite{
		{Kind: device.FaultSliceCap, Pos: "k.go:1"},
		{Kind: device.FaultSliceOrder, Pos: "k.go:1"},
		{Kind: device.FaultSlice3Cap, Pos: "k.go:1"},
		{Kind: device.FaultSlice3Max, Pos: "k.go:1"},
		{Kind: device.FaultSlice3Order, Pos: "k.go:1"},
	}}
	tag := device.FaultTag("K")
	s := make([]int, 4, 4)
	for _, c := range []struct {
		check      int64
		x, y       int64
		lo, hi, mx int
		three      bool
	}{
		{1, 5, 4, 0, 5, 0, false},
		{1, -1, 4, 0, -1, 0, false},
		{2, 3, 2, 3, 2, 0, false},
		{2, -2, 2, -2, 2, 0, false},
		{3, 6, 4, 0, 1, 6, true},
		{3, -3, 4, 0, 1, -3, true},
		{4, 3, 2, 0, 3, 2, true},
		{4, -1, 2, 0, -1, 2, true},
		{5, 2, 1, 2, 1, 3, true},
		{5, -1, 1, -1, 1, 3, true},
	} {
		dev := k.Fault([4]int64{c.check, c.x, c.y, tag})
		v, pcs := recovered(func() { reslice(s, c.lo, c.hi, c.mx, c.three) })
		g := device.GoFault("K", v, pcs)
		require.NotNil(t, g, "s[%d:%d:%d]", c.lo, c.hi, c.mx)
		assert.Equal(t, "kernel K (k.go:1): "+g.What, dev.Error(), "s[%d:%d:%d] (three: %v)", c.lo, c.hi, c.mx, c.three)
		assert.Equal(t, dev.Site.Kind, g.Site.Kind, "s[%d:%d:%d] (three: %v): %s", c.lo, c.hi, c.mx, c.three, g.What)
	}
}
