package cuda

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var h100 = limits{maxBlock: 1024, maxGrid: [3]int{1<<31 - 1, 65535, 65535}}

func TestGeometry(t *testing.T) {
	tests := []struct {
		name        string
		shape       device.Shape
		lim         limits
		grid, block [3]uint32
	}{
		{"default 1-D", device.Shape{Size: [3]int{1 << 20, 1, 1}}, h100, [3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}},
		{"small 1-D rounds to a warp", device.Shape{Size: [3]int{10, 1, 1}}, h100, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}},
		{"ragged 1-D", device.Shape{Size: [3]int{1000, 1, 1}, Threads: 128}, h100, [3]uint32{8, 1, 1}, [3]uint32{128, 1, 1}},
		{"teams in dimension 0", device.Shape{Size: [3]int{1000, 1, 1}, Teams: 7, Threads: 64}, h100, [3]uint32{7, 1, 1}, [3]uint32{64, 1, 1}},
		{"2-D", device.Shape{Size: [3]int{1000, 300, 1}}, h100, [3]uint32{32, 38, 1}, [3]uint32{32, 8, 1}},
		{"2-D narrow", device.Shape{Size: [3]int{8, 1000, 1}}, h100, [3]uint32{1, 32, 1}, [3]uint32{8, 32, 1}},
		{"2-D short", device.Shape{Size: [3]int{1000, 2, 1}}, h100, [3]uint32{8, 1, 1}, [3]uint32{128, 2, 1}},
		{"2-D thread limit", device.Shape{Size: [3]int{1000, 1000, 1}, Threads: 1000}, h100, [3]uint32{32, 33, 1}, [3]uint32{32, 31, 1}},
		{"2-D teams spread", device.Shape{Size: [3]int{1000, 300, 1}, Teams: 64}, h100, [3]uint32{8, 8, 1}, [3]uint32{32, 8, 1}},
		{"2-D prime teams", device.Shape{Size: [3]int{1000, 300, 1}, Teams: 7}, h100, [3]uint32{7, 1, 1}, [3]uint32{32, 8, 1}},
		{"2-D teams along the long side", device.Shape{Size: [3]int{1000, 1000, 1}, Teams: 4, Threads: 64}, h100, [3]uint32{1, 4, 1}, [3]uint32{32, 2, 1}},
		{"2-D more teams than blocks", device.Shape{Size: [3]int{64, 16, 1}, Teams: 100}, h100, [3]uint32{50, 2, 1}, [3]uint32{32, 8, 1}},
		{"3-D teams", device.Shape{Size: [3]int{64, 64, 64}, Teams: 512}, h100, [3]uint32{2, 4, 64}, [3]uint32{32, 8, 1}},
		{"3-D capped", device.Shape{Size: [3]int{10, 100000, 70000}}, h100, [3]uint32{1, 6250, 65535}, [3]uint32{16, 16, 1}},
		{"threads beyond the device", device.Shape{Size: [3]int{1 << 20, 1, 1}, Threads: 1 << 20}, h100, [3]uint32{1024, 1, 1}, [3]uint32{1024, 1, 1}},
		{"threads beyond the kernel", device.Shape{Size: [3]int{4096, 1, 1}, Threads: 1024}, limits{maxBlock: 256, maxGrid: h100.maxGrid}, [3]uint32{16, 1, 1}, [3]uint32{256, 1, 1}},
		{"grid capped", device.Shape{Size: [3]int{1 << 40, 1, 1}, Threads: 1}, limits{maxBlock: 1024, maxGrid: [3]int{1000, 1, 1}}, [3]uint32{1000, 1, 1}, [3]uint32{1, 1, 1}},
	}
	for _, tc := range tests {
		grid, block, err := geometry(tc.shape, tc.lim)
		if !assert.NoError(t, err, "%s", tc.name) {
			continue
		}
		teams := gridTeams(grid)
		assert.False(t, tc.shape.Teams > 0 && teams != tc.shape.Teams, "%s: %d teams, asked for %d", tc.name, teams, tc.shape.Teams)
		assert.Equal(t, tc.grid, grid, "%s: grid %v block %v, want grid %v block %v", tc.name, grid, block, tc.grid, tc.block)
		assert.Equal(t, tc.block, block, "%s: grid %v block %v, want grid %v block %v", tc.name, grid, block, tc.grid, tc.block)
	}
}

func TestGeometryErrors(t *testing.T) {
	for _, s := range []device.Shape{
		{Size: [3]int{0, 1, 1}},
		{Size: [3]int{10, -1, 1}},
		{Size: [3]int{10, 1, 1}, Teams: -1},
	} {
		_, _, err := geometry(s, h100)
		assert.Error(t, err, "geometry(%+v) succeeded, want an error", s)
	}
	_, _, err := geometry(device.Shape{Size: [3]int{10, 1, 1}, Teams: 70000}, limits{maxBlock: 1024, maxGrid: [3]int{65535, 65535, 65535}})
	require.Error(t, err, "too many teams: %v, want an error naming the request and the limit", err)
	assert.Contains(t, err.Error(), "70000 teams exceed", "too many teams: %v, want an error naming the request and the limit", err)
	assert.Contains(t, err.Error(), "65535", "too many teams: %v, want an error naming the request and the limit", err)
}

func TestPackArgs(t *testing.T) {
	k := &device.Kernel{Name: "k", Params: []device.Param{
		{Name: "p", Kind: device.ParamBuffer}, {Name: "i", Kind: device.ParamInt32},
		{Name: "f", Kind: device.ParamFloat32}, {Name: "l", Kind: device.ParamInt64},
	}}
	vals, err := packArgs(nil, k, []device.Arg{{Ptr: 0x7000}, {Bits: 0xffffffff_fffffffe}, {Bits: 0x3f800000}, {Bits: 1 << 40}})
	require.NoError(t, err)
	want := []uint64{0x7000, 0xfffffffe, 0x3f800000, 1 << 40}
	for i := range want {
		assert.Equal(t, want[i], vals[i], "slot %d", i)
	}
	if _, err := packArgs(nil, k, []device.Arg{{Ptr: 0x7000}}); assert.Error(t, err, "wrong count") {
		assert.Contains(t, err.Error(), "takes 4 arguments", "wrong count: %v", err)
	}
	if _, err := packArgs(nil, k, []device.Arg{{}, {}, {}, {}}); assert.Error(t, err, "nil pointer") {
		assert.Contains(t, err.Error(), "nil device pointer", "nil pointer: %v", err)
	}
}

func TestChunkFor(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{stagingMin, 256 << 10},
		{1 << 20, 256 << 10},
		{1<<20 + 3, 320 << 10},
		{4 << 20, 1 << 20},
		{6 << 20, 1536 << 10},
		{stagingChunk - 1, 2 << 20},
		{stagingChunk, stagingChunk},
		{1 << 30, stagingChunk},
	} {
		assert.Equal(t, c.want, chunkFor(c.n), "chunkFor(%d)", c.n)
	}
}

// TestTeamGeometry: a team kernel's block is exactly its team size,
// whatever the shape's Threads and the plugin's defaults, one-dimensional,
// with Teams blocks (or enough to cover the shape); a team larger than the
// function's block limit, or more teams than the grid holds, is an error.
func TestTeamGeometry(t *testing.T) {
	lim := h100
	lim.team = 64
	for _, s := range []device.Shape{
		{Size: [3]int{10, 1, 1}, Teams: 10, Threads: 64},
		{Size: [3]int{10, 1, 1}, Teams: 10},
	} {
		grid, block, err := geometry(s, lim)
		require.NoError(t, err, "%+v", s)
		assert.Equal(t, [3]uint32{10, 1, 1}, grid, "grid of %+v", s)
		assert.Equal(t, [3]uint32{64, 1, 1}, block, "block of %+v", s)
	}
	grid, block, err := geometry(device.Shape{Size: [3]int{1000, 1, 1}}, lim)
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{16, 1, 1}, grid, "Teams 0 covers the shape in teams of 64")
	assert.Equal(t, [3]uint32{64, 1, 1}, block)

	small := lim
	small.maxBlock = 32
	_, _, err = geometry(device.Shape{Size: [3]int{10, 1, 1}, Teams: 10}, small)
	require.Error(t, err, "a team of 64 where the function runs at most 32")
	assert.Contains(t, err.Error(), "teams of 64 threads")
	_, _, err = geometry(device.Shape{Size: [3]int{10, 1, 1}, Teams: 70000}, limits{maxBlock: 1024, maxGrid: [3]int{65535, 65535, 65535}, team: 64})
	assert.Error(t, err, "more teams than the grid holds")
}
