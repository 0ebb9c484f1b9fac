package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGridTeams(t *testing.T) {
	for _, tc := range []struct {
		grid [3]uint32
		want int
	}{
		{[3]uint32{1, 1, 1}, 1},
		{[3]uint32{7, 1, 1}, 7},
		{[3]uint32{5, 5, 2}, 50},
		{[3]uint32{1<<31 - 1, 2, 1}, 2 * (1<<31 - 1)},
	} {
		assert.Equal(t, tc.want, gridTeams(tc.grid), "gridTeams(%v)", tc.grid)
	}
}

// TestNativeRecord checks the layout Record documents: start
// and end on the device clock, then the stream and the context.
func TestNativeRecord(t *testing.T) {
	n := nativeRecord(100, 250, 0xabc0, 0xdef0, typeKernel, 3, 7)
	want := Record{Start: 100, End: 250, Stream: 0xabc0, Context: 0xdef0}.Native("cuda kernel", 3, 7)
	assert.Equal(t, want, n, "nativeRecord")
	for _, typ := range []string{typeHtoD, typeDtoH, typeDtoD, typeKernel} {
		assert.GreaterOrEqual(t, len(typ), len("cuda "), "native type %q does not name the plugin", typ)
		assert.Equal(t, "cuda ", typ[:5], "native type %q does not name the plugin", typ)
	}
}
