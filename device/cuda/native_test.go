package cuda

import (
	"testing"

	"github.com/gompt/gompt/device"
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
		if got := gridTeams(tc.grid); got != tc.want {
			t.Errorf("gridTeams(%v) = %d, want %d", tc.grid, got, tc.want)
		}
	}
}

// TestNativeRecord checks the layout device.CUDARecord documents: start
// and end on the device clock, then the stream and the context.
func TestNativeRecord(t *testing.T) {
	n := nativeRecord(100, 250, 0xabc0, 0xdef0, typeKernel, 3, 7)
	want := device.CUDARecord{Start: 100, End: 250, Stream: 0xabc0, Context: 0xdef0}.Native("cuda kernel", 3, 7)
	if n != want {
		t.Errorf("nativeRecord = %+v, want %+v", n, want)
	}
	for _, typ := range []string{typeHtoD, typeDtoH, typeDtoD, typeKernel} {
		if len(typ) < len("cuda ") || typ[:5] != "cuda " {
			t.Errorf("native type %q does not name the plugin", typ)
		}
	}
}
