package opencl

import (
	"fmt"
	"github.com/gompt/gompt/device/internal/geom"
	"math"
	"math/bits"

	"github.com/gompt/gompt/device"
)

const (
	// defaultThreads is the work-group size used when a launch asks for
	// none (capped by the device's and the kernel's limits).
	defaultThreads = 256
	// defaultThreadsCPU is the same for CPU devices, where a work-group is
	// a loop on one core that POCL vectorizes: saxpy of 2^24 floats took
	// 11.5 ms with 256, 10.3 ms with 1024 and 10.5 ms with 4096.
	defaultThreadsCPU = 1024
	// gpuWidth is the width along dimension 0 of the work-groups of a
	// 2-D or 3-D launch on a GPU (a warp reads consecutive elements),
	// rounded up to the kernel's preferred multiple.
	gpuWidth = 32

	// maxTeams is the largest Shape.Teams a launch takes (Info.MaxTeams).
	// The work-groups of one NDRange must be countable in 32 bits: POCL's
	// CPU driver numbers them with an unsigned int and asserts, or runs
	// nothing, past that; OpenCL has no query for the limit.
	maxTeams = math.MaxInt32
	// maxItems caps the work-items of a launch: a launch with Teams set
	// gets fewer threads per team past it, and one that leaves Teams to
	// the plugin fewer work-groups (device code covers a larger iteration
	// space with its grid-stride loops). It keeps every global size below
	// 2^31, which NVIDIA's OpenCL needs (a 1-D global size over 2^31 was
	// reported to compute zeros), and the work-groups countable in 32 bits.
	maxItems = math.MaxInt32
	// cpuChunk is about how much work (points times Kernel.PointWork) a
	// work-group of a CPU device should get before another group is worth
	// its start, as hostexec.ChunkIterations is for a host team.
	cpuChunk = 16 << 10
	// cpuGroupsPerUnit is how many groups per compute unit a CPU launch of
	// heavy points aims for: more than one, so that a unit whose points
	// are cheap (a stencil's edge rows) takes another group while the
	// others finish theirs.
	cpuGroupsPerUnit = 4
	// maxAutoItems is the same cap for a launch that leaves Teams to the
	// plugin: a grid of 2^30 work-items covers 4 GiB of floats one item
	// per element, and fills any device.
	maxAutoItems = 1 << 30
)

// wgLimits are the work-group limits of one kernel on one device.
type wgLimits struct {
	max      int    // work-items per group: CL_KERNEL_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_GROUP_SIZE, Kernel.MaxThreads
	multiple int    // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (1 if unknown)
	item     [3]int // CL_DEVICE_MAX_WORK_ITEM_SIZES (0: no limit known)
	cpu      bool   // a CPU device: wide groups along dimension 0
	units    int    // CL_DEVICE_MAX_COMPUTE_UNITS (0 if unknown)
	team     int    // a team kernel's team size (Kernel.TeamSize): every group has exactly it
}

// geometry maps a launch shape onto an NDRange: dims, and the global and
// local work sizes per dimension. s must pass checkShape.
//
// The work-group has Shape.Threads work-items, or defaultThreads
// (defaultThreadsCPU on a CPU) when 0, capped at lim.max (OpenMP's
// thread_limit is an upper bound, so a larger request gets the largest
// legal group) and rounded down to a multiple of lim.multiple when at
// least that. For a 1-D shape the group is one-dimensional; with Threads
// 0 a small space gets the least multiple of lim.multiple that covers it.
// For 2-D and 3-D shapes it is two-dimensional: on a GPU gpuWidth
// work-items along dimension 0 and the rest along dimension 1 (e.g.
// 32x8), on a CPU as wide along dimension 0 as the shape (POCL vectorizes
// along it), both narrowed along a dimension the shape does not fill:
// [4, 100000] gets 4x64, not 4x1.
//
// With Shape.Teams set there are exactly Teams work-groups, spread over
// the shape's dimensions in proportion to the groups each needs to cover
// it (so a 2-D kernel sees get_global_size(1) > 1), the rest in dimension
// 0; a 1-D shape gets all of them in dimension 0 (kernels such as dot
// split dimension 0 by get_num_groups(0)). Teams*threads stays within
// maxItems by giving each team fewer threads. With Teams 0 each dimension
// gets the groups that cover it, one work-item per index, up to maxAutoItems
// work-items in all (halving the dimension with the most groups). Device
// code loops grid-stride, so every choice computes the same result.
//
// On a CPU device a work-group runs on one core, so a launch that leaves
// both sizes to the plugin gets narrower groups when its points are few
// but heavy: work is one point's Kernel.PointWork, and the launch aims for
// one group per cpuChunk of work (points times work), at most
// cpuGroupsPerUnit per compute unit and one per point. PolyBench's gemm
// (1,000 rows, each a loop over 1.3 million products) ran as one group of
// 1,000 on one core of two; it now runs as 8 groups of 128.
func geometry(s device.Shape, lim wgLimits, work int64) (dims int, global, local [3]uintptr) {
	dims = s.Dims()
	if lim.team > 0 {
		return teamGeometry(s, lim.team)
	}
	mult := max(lim.multiple, 1)
	b := s.Threads
	if b == 0 {
		b = defaultThreads
		if lim.cpu {
			b = defaultThreadsCPU
		}
		if dims == 1 && s.Size[0] < b {
			b = roundUpInt(max(s.Size[0], 1), mult)
		}
	}
	b = max(1, min(b, max(lim.max, 1)))
	if lim.cpu && s.Threads == 0 && s.Teams == 0 && lim.units > 1 {
		if g := cpuGroup(s.Iterations(), work, lim.units, mult); g > 0 {
			b = min(b, g)
		}
	}
	if s.Teams > 0 && s.Teams*b > maxItems { // no overflow: Teams <= maxTeams, b <= lim.max
		b = max(1, maxItems/s.Teams)
	}
	if b >= mult {
		b -= b % mult
	}
	size0, size1 := max(s.Size[0], 1), max(s.Size[1], 1)
	itemCap := func(d, v int) int {
		if lim.item[d] > 0 {
			v = min(v, lim.item[d])
		}
		return max(v, 1)
	}
	bx, by := itemCap(0, b), 1
	if dims > 1 {
		width := roundUpInt(gpuWidth, mult)
		if lim.cpu {
			width = b
		}
		bx = min(width, ceilPow2(size0), b)
		by = itemCap(1, min(b/bx, ceilPow2(size1)))
		bx = itemCap(0, min(b/by, max(bx, ceilPow2(size0)))) // widen what dimension 1 leaves
	}
	local = [3]uintptr{uintptr(bx), uintptr(by), 1}
	size := [3]int{max(s.Size[0], 1), max(s.Size[1], 1), max(s.Size[2], 1)}
	need := [3]int{(size[0]-1)/bx + 1, (size[1]-1)/by + 1, size[2]}
	var g [3]int
	if s.Teams > 0 {
		g = geom.Spread(s.Teams, dims, need, need)
	} else {
		g = need
		for float64(g[0])*float64(g[1])*float64(g[2])*float64(bx*by) > maxAutoItems {
			d := 0
			for i := 1; i < 3; i++ {
				if g[i] > g[d] {
					d = i
				}
			}
			g[d] -= g[d] / 2 // halved, rounded up
		}
	}
	global = [3]uintptr{uintptr(g[0] * bx), uintptr(g[1] * by), uintptr(g[2])}
	return dims, global, local
}

// cpuGroup is the largest work-group of a CPU launch of n points of work
// each that still gives every compute unit of units groups to run (see
// geometry), or 0 where one group is enough. It is rounded up to a
// multiple of mult where that still leaves a group for every unit.
func cpuGroup(n int, work int64, units, mult int) int {
	want := int64(units * cpuGroupsPerUnit)
	if hi, lo := bits.Mul64(uint64(n), uint64(max(work, 1))); hi == 0 && lo <= math.MaxInt64 {
		want = min(want, (int64(lo)+cpuChunk-1)/cpuChunk)
	}
	want = min(want, int64(n))
	if want <= 1 {
		return 0
	}
	g := (n + int(want) - 1) / int(want)
	if r := roundUpInt(g, mult); (n+r-1)/r >= min(int(want), units) {
		g = r
	}
	return g
}

// teamGeometry maps a launch of a team kernel onto an NDRange: groups of
// exactly team work-items along dimension 0 (its reqd_work_group_size),
// Shape.Teams of them (or, with Teams 0, enough to cover the shape's
// extents, as for any kernel). The caller checked that they fit
// (checkTeamLaunch).
func teamGeometry(s device.Shape, team int) (dims int, global, local [3]uintptr) {
	groups := geom.TeamGroups(s.Teams, s.Size, team)
	return 1, [3]uintptr{uintptr(groups * team), 1, 1}, [3]uintptr{uintptr(team), 1, 1}
}

// checkTeamLaunch refuses a launch of a team kernel (team threads a team)
// whose work-items would not fit one NDRange.
func checkTeamLaunch(s device.Shape, team int) error {
	if groups := geom.TeamGroups(s.Teams, s.Size, team); groups > maxItems/team {
		return fmt.Errorf("launch shape: %d teams of %d threads: at most %d work-items in all", groups, team, maxItems)
	}
	return nil
}

// ceilPow2 returns the least power of two >= n (n >= 1), at most the
// largest power of two an int holds.
func ceilPow2(n int) int {
	const top = 1 << (bits.UintSize - 2)
	if n >= top {
		return top
	}
	return 1 << bits.Len(uint(max(n, 1)-1))
}

// roundUpInt returns n rounded up to a multiple of m >= 1, without
// overflowing.
func roundUpInt(n, m int) int {
	if r := n % m; r != 0 && n <= math.MaxInt-m {
		return n + m - r
	}
	return n
}

// checkShape refuses what geometry cannot map: an invalid shape, or more
// teams than maxTeams.
func checkShape(s device.Shape) error {
	if err := s.Check(); err != nil {
		return err
	}
	if s.Teams > maxTeams {
		return fmt.Errorf("launch shape: %d teams: at most %d (MaxTeams)", s.Teams, maxTeams)
	}
	return nil
}
