package cuda

import (
	"fmt"
	"github.com/gompt/gompt/device/internal/geom"
	"math/bits"
	"slices"

	"github.com/gompt/gompt/device"
)

// defaultThreads is the block size of a launch whose shape leaves it to the
// plugin.
const defaultThreads = 256

// limits are the launch limits of one kernel on one device.
type limits struct {
	maxBlock int    // threads per block: min of device, function and Kernel.MaxThreads
	maxGrid  [3]int // CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{X,Y,Z}
	team     int    // a team kernel's team size (Kernel.TeamSize): every block has exactly it
}

// geometry turns a launch shape into CUDA grid and block dimensions.
//
// The block has Shape.Threads threads, or defaultThreads when 0, capped at
// lim.maxBlock (OpenMP's thread_limit is an upper bound, so a larger
// request gets the largest legal block). For a 1-D shape the block is
// one-dimensional (with Threads 0, rounded down to a multiple of 32 that
// covers a small space). For 2-D and 3-D shapes it is two-dimensional: 32
// threads along dimension 0 (a warp reads consecutive elements), the rest
// along dimension 1, e.g. 32x8, narrowed along a dimension the shape does
// not fill (a 8-wide shape gets 8x32).
//
// With Shape.Teams set, the grid has at most Teams blocks, spread over the
// shape's dimensions in proportion to the blocks each needs to cover it
// (so a 2-D kernel sees get_global_size(1) > 1), the rest in dimension 0;
// a 1-D shape gets exactly Teams blocks in dimension 0 (kernels such as dot
// split dimension 0 by get_num_groups(0)). Teams beyond the device's
// largest grid is an error, since the number of teams is visible to the
// kernel. With Teams 0, the grid covers each dimension, capped at the
// device's grid limits: device code uses grid-stride loops, so capped and
// spread grids compute the same result.
func geometry(s device.Shape, lim limits) (grid, block [3]uint32, err error) {
	if err := s.Check(); err != nil {
		return grid, block, err
	}
	if lim.maxBlock < 1 || lim.maxGrid[0] < 1 || lim.maxGrid[1] < 1 || lim.maxGrid[2] < 1 {
		return grid, block, fmt.Errorf("launch limits %+v: device reports no usable grid", lim)
	}
	if lim.team > 0 {
		return teamGeometry(s, lim)
	}
	dims := s.Dims()
	b := s.Threads
	if b == 0 {
		b = defaultThreads
		if dims == 1 && s.Size[0] < b {
			b = (s.Size[0] + 31) &^ 31
		}
	}
	b = min(b, lim.maxBlock)
	bx, by := b, 1
	if dims > 1 {
		bx = min(32, ceilPow2(s.Size[0]), b)
		by = min(b/bx, ceilPow2(s.Size[1]))
		bx = min(b/by, max(bx, ceilPow2(s.Size[0]))) // widen what dimension 1 leaves
	}
	block = [3]uint32{uint32(bx), uint32(by), 1}
	need := [3]int{(s.Size[0] + bx - 1) / bx, (s.Size[1] + by - 1) / by, max(s.Size[2], 1)}
	if s.Teams > 0 {
		if s.Teams > lim.maxGrid[0] {
			return grid, block, fmt.Errorf("launch shape: %d teams exceed the device's largest grid of %d blocks; use at most %d teams or 0 to let the plugin choose",
				s.Teams, lim.maxGrid[0], lim.maxGrid[0])
		}
		// spread over the dimensions, none lost (geom.Spread)
		g := geom.Spread(s.Teams, dims, need, lim.maxGrid)
		return [3]uint32{uint32(g[0]), uint32(g[1]), uint32(g[2])}, block, nil
	}
	return [3]uint32{uint32(min(need[0], lim.maxGrid[0])), uint32(min(need[1], lim.maxGrid[1])), uint32(min(need[2], lim.maxGrid[2]))}, block, nil
}

// teamGeometry is geometry for a team kernel: one-dimensional blocks of
// exactly its team size, Shape.Teams of them (or, with Teams 0, enough to
// cover the shape, as for any kernel).
func teamGeometry(s device.Shape, lim limits) (grid, block [3]uint32, err error) {
	if lim.team > lim.maxBlock {
		return grid, block, fmt.Errorf("the kernel runs teams of %d threads; this device runs it in blocks of at most %d", lim.team, lim.maxBlock)
	}
	g := geom.TeamGroups(s.Teams, s.Size, lim.team)
	if g > lim.maxGrid[0] {
		return grid, block, fmt.Errorf("launch shape: %d teams exceed the device's largest grid of %d blocks", g, lim.maxGrid[0])
	}
	return [3]uint32{uint32(g), 1, 1}, [3]uint32{uint32(lim.team), 1, 1}, nil
}

// ceilPow2 returns the least power of two >= n (n >= 1).
func ceilPow2(n int) int { return 1 << bits.Len(uint(n-1)) }

// packArgs lays out launch arguments as the driver wants them, in dst's
// memory when it is large enough (a queue's scratch: the driver copies
// them during the launch call): one 8-byte slot per parameter, 4-byte
// kinds in the low half.
func packArgs(dst []uint64, k *device.Kernel, args []device.Arg) ([]uint64, error) {
	if err := k.CheckArgs(args); err != nil {
		return nil, err
	}
	n := len(args)
	if k.Checked() {
		n++ // the fault record, which the queue sets (see queue.faultRecord)
	}
	vals := slices.Grow(dst[:0], n)[:n]
	for i, p := range k.Params {
		switch p.Kind {
		case device.ParamBuffer:
			vals[i] = uint64(args[i].Ptr)
		case device.ParamInt32, device.ParamUint32, device.ParamFloat32:
			vals[i] = args[i].Bits & 0xffffffff
		case device.ParamInt64, device.ParamFloat64:
			vals[i] = args[i].Bits
		default:
			return nil, fmt.Errorf("kernel %s parameter %d (%s): unknown kind %v", k.Name, i, p.Name, p.Kind)
		}
	}
	return vals, nil
}

// Copies of pageable Go memory.
//
// Below stagingMin bytes a copy goes through the queue's small page-locked
// bounce ring (bounce.go): the driver may synchronise a copy of pageable
// memory with the stream's earlier work, which a copy from page-locked
// memory need not, and for a small copy the host memcpy costs little. From
// stagingMin up, the copy is pipelined through a ring of
// page-locked staging buffers of stagingChunk bytes: the host copies chunk
// i+1 into one buffer (with several goroutines for a large chunk) while the
// DMA engine moves chunk i from another, so a pageable copy approaches the
// pinned bandwidth instead of the driver's pageable path (about a sixth of
// it on an H100). A large CopyOut returns when the program's slice holds
// the data (it is not deferred as a small one is: its buffers are shared by
// the device's queues).
//
// A copy below stagingChunk is cut into chunks sized to it (chunkFor: a
// quarter of it, from 256 KiB to 2 MiB) rather than one chunk of
// stagingChunk, so that its host copy and its DMA still overlap; copies
// below stagingMin go through the queue's bounce ring instead (bounce.go).
//
// Host registration (cuMemHostRegister) of the program's slice would avoid
// the host copy, but it pins pages of the Go heap until unregistered; a
// cache of registrations would have to outlive the slices' lifetimes, which
// the collector does not report in time, and registering per copy costs more
// than the copy. So the plugin stages.
const (
	stagingMin   = 256 << 10
	stagingChunk = 8 << 20
	stagingDepth = 3  // buffers per copy: one filling, up to two in flight
	stagingMax   = 24 // buffers per device at most (192 MiB page-locked)

	chunkMin = 256 << 10 // the smallest chunk of a staged copy
	chunkMid = 2 << 20   // the largest chunk of a copy below stagingChunk
)

// chunkFor returns the chunk size of a staged copy of n bytes: stagingChunk
// from stagingChunk up; below, a quarter of n (a multiple of 64 KiB)
// between chunkMin and chunkMid, so a mid-size copy is pipelined in about
// four chunks instead of being one.
func chunkFor(n int) int {
	if n >= stagingChunk {
		return stagingChunk
	}
	c := ((n+3)/4 + 64<<10 - 1) &^ (64<<10 - 1)
	return min(max(c, chunkMin), chunkMid)
}
