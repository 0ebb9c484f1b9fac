package tooltest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gompt/gompt/target"
)

// Associate and Disassociate tell the tool their caller (codeptr_ra) at
// both ends of their data op, as the other device memory routines do; the
// disassociate names the device address that was associated.
func TestAssociateRoutinesNameTheirCaller(t *testing.T) {
	p, err := target.AllocMem(128, 0)
	require.NoError(t, err)
	defer target.FreeMem(p, 0)
	h := make([]byte, 32)
	tool.take()
	require.NoError(t, target.Associate(h, p, 64, 0))
	require.NoError(t, target.Disassociate(h, 0))
	tool.mu.Lock()
	ends := append([]opEnd(nil), tool.ends...) // expect clears them
	tool.mu.Unlock()
	f := "TestAssociateRoutinesNameTheirCaller"
	expect(t,
		"data_op ompt_target_data_associate begin src_dev=host dst_dev=0 bytes=32 td=0 code="+f,
		"data_op ompt_target_data_associate end src_dev=host dst_dev=0 bytes=32 td=0 code="+f,
		"data_op ompt_target_data_disassociate begin src_dev=host dst_dev=0 bytes=0 td=0 code="+f,
		"data_op ompt_target_data_disassociate end src_dev=host dst_dev=0 bytes=0 td=0 code="+f,
	)
	require.Len(t, ends, 2, "data-op ends of associate and disassociate")
	for _, e := range ends {
		require.Equal(t, uintptr(p)+64, e.dst, "%v: device address", e.kind)
	}
	require.Equal(t, fmt.Sprint(ends[0].src), fmt.Sprint(ends[1].src), "host address of associate and disassociate")
}

// A device memory routine refused for its arguments tells the tool of no
// data op: nothing was done. Associate past its allocation's end, at a
// pointer in no allocation, on the initial device; Memcpy and Memset out
// of bounds; FreeMem of a pointer not allocated.
func TestRefusedRoutinesMakeNoDataOps(t *testing.T) {
	p, err := target.AllocMem(64, 0)
	require.NoError(t, err)
	defer target.FreeMem(p, 0)
	h := make([]byte, 32)
	tool.take()
	require.Error(t, target.Associate(h, p, 48, 0), "associate past the allocation's end")
	require.Error(t, target.Associate(h, p+64, 0, 0), "associate at the allocation's end")
	require.Error(t, target.Associate(h, 0x1000, 0, 0), "associate in no allocation")
	require.Error(t, target.Associate(h, p, -1, 0), "associate at a negative offset")
	require.Error(t, target.Associate(h, p, 0, target.InitialDevice), "associate on the initial device")
	require.Error(t, target.Memcpy(target.On(0, p), target.Host(make([]byte, 65)), 65), "memcpy out of bounds")
	require.Error(t, target.Memset(target.On(0, p).Add(8), 0, 57), "memset out of bounds")
	require.Error(t, target.FreeMem(p+8, 0), "free of a pointer inside an allocation")
	expect(t)
	require.False(t, target.IsPresent(h, 0), "h after refused associations")
}
