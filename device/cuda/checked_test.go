//go:build cgo && linux

package cuda

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkedPTX is the PTX of a checked kernel (device.Kernel.Faults): its
// parameters are the kernel's, then the fault record. On the fake driver
// the marker makes its launches write the record given (check, index,
// length, tag) as a failing work-item would.
func checkedPTX(rec [4]int64) string {
	marker := ""
	if rec[0] != 0 {
		marker = fmt.Sprintf("// FAKECUDA_CHECKFAIL 2 %d %d %d %d", rec[0], rec[1], rec[2], rec[3])
	}
	return `.version 6.3
.target sm_75
.address_size 64
` + marker + `
.visible .entry gompt_Checked(.param .u64 n, .param .u64 .ptr .global .align 4 x, .param .u64 .ptr .global .align 8 f)
{
	ret;
}
`
}

func checkedKernel(rec [4]int64) *device.Kernel {
	return &device.Kernel{
		Name: "Checked",
		Params: []device.Param{
			{Name: "n", Kind: device.ParamInt64},
			{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32, Len: "n"},
		},
		Faults: []device.FaultSite{{Kind: device.FaultIndex, Pos: "checked.go:7"}},
		Images: []device.Image{{Kind: ImagePTX, Entry: "gompt_Checked", Source: checkedPTX(rec)}},
	}
}

// TestFaultCheckedKernel: a checked kernel takes its fault record as the
// argument after its parameters; a record its kernel wrote fails the
// queue's Sync with the kernel's fault in Go's words, once: the record is
// zeroed again, and the next launch and Sync succeed. A kernel that wrote
// nothing syncs clean.
func TestFaultCheckedKernel(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	good, bad := checkedKernel([4]int64{}), checkedKernel([4]int64{1, 12, 10, device.FaultTag("Checked")})
	fg, err := d.Load(good)
	must(t, "Load", err)
	fb, err := d.Load(bad)
	must(t, "Load", err)
	a, err := d.Alloc(40)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	args := []device.Arg{{Bits: 10}, {Ptr: a.Ptr}}
	must(t, "Launch", q.Launch(fg, one, args))
	require.NoError(t, q.Sync(), "a checked kernel whose checks passed")

	must(t, "Launch", q.Launch(fb, one, args))
	err = q.Sync()
	var kf *device.KernelFault
	require.True(t, errors.As(err, &kf), "Sync after the failing kernel: %v", err)
	assert.EqualError(t, err, "kernel Checked (checked.go:7): index out of range [12] with length 10")

	must(t, "Launch", q.Launch(fg, one, args))
	assert.NoError(t, q.Sync(), "the record was zeroed after the failure was reported")
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(a.Ptr))
}

// A checked kernel's PTX must take the fault record last. Its name is
// the PTX's to choose (f here): the declared parameters' names are
// compared, the record's is not.
func TestPTXParamsOfCheckedKernel(t *testing.T) {
	k := checkedKernel([4]int64{})
	require.NoError(t, checkPTXParams(k, checkedPTX([4]int64{}), "gompt_Checked"))
	k.Faults = nil
	assert.ErrorContains(t, checkPTXParams(k, checkedPTX([4]int64{}), "gompt_Checked"), "takes 3 parameters, kernel Checked declares 2")
	k = checkedKernel([4]int64{})
	k.Params = append(k.Params, device.Param{Name: "y", Kind: device.ParamBuffer})
	assert.ErrorContains(t, checkPTXParams(k, checkedPTX([4]int64{}), "gompt_Checked"), "and its fault record")
	k = checkedKernel([4]int64{})
	k.Params = []device.Param{k.Params[0], device.BufferParam("y", device.ParamFloat32, "n")}
	assert.ErrorContains(t, checkPTXParams(k, checkedPTX([4]int64{}), "gompt_Checked"),
		`PTX entry gompt_Checked's parameter 1 is named "x" but the Kernel's parameter 1 is "y"`)
}
