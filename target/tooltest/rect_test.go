package tooltest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gompt/gompt/target"
)

// A 3-D memcpy_rect whose rows follow each other within each plane and
// whose planes follow each other is one contiguous piece on both sides: the
// tool is told one data op of all its bytes, not one per plane.
func TestMemcpyRectWholePlanesAreOneDataOp(t *testing.T) {
	p, err := target.AllocMem(64, 0)
	require.NoError(t, err)
	defer target.FreeMem(p, 0)
	h := make([]byte, 64)
	tool.take()
	// Two planes of 2 rows of 4 bytes, the whole of a [2 2 4] array of
	// bytes on both sides: 16 bytes.
	require.NoError(t, target.MemcpyRect(target.On(0, p), target.Host(h), 1, []int{2, 2, 4}, []int{0, 0, 0}, []int{0, 0, 0}, []int{2, 2, 4}, []int{2, 2, 4}))
	lines, errs := tool.take()
	assert.Empty(t, errs, "the tool's checks of the callbacks")
	f := "TestMemcpyRectWholePlanesAreOneDataOp"
	assert.Equal(t, []string{
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device begin src_dev=host dst_dev=0 bytes=16 td=0 code=%s", f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device end src_dev=host dst_dev=0 bytes=16 td=0 code=%s", f),
	}, lines, "data ops of a copy of two whole planes")
}
