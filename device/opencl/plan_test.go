package opencl

import (
	"math"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Limits as NVIDIA's OpenCL reports them (H100) and as POCL's CPU device
// does here.
var (
	nvidiaLim = wgLimits{max: 1024, multiple: 32, item: [3]int{1024, 1024, 64}}
	poclLim   = wgLimits{max: 4096, multiple: 8, item: [3]int{4096, 4096, 4096}, cpu: true}
)

func TestGeometryShapes(t *testing.T) {
	tests := []struct {
		name          string
		shape         device.Shape
		lim           wgLimits
		global, local [3]uintptr
	}{
		{"default 1-D", device.Shape{Size: [3]int{1 << 20, 1, 1}}, nvidiaLim, [3]uintptr{1 << 20, 1, 1}, [3]uintptr{256, 1, 1}},
		{"default 1-D on a CPU", device.Shape{Size: [3]int{1 << 20, 1, 1}}, poclLim, [3]uintptr{1 << 20, 1, 1}, [3]uintptr{1024, 1, 1}},
		{"small 1-D rounds to the multiple", device.Shape{Size: [3]int{10, 1, 1}}, nvidiaLim, [3]uintptr{32, 1, 1}, [3]uintptr{32, 1, 1}},
		{"small 1-D on a CPU", device.Shape{Size: [3]int{10, 1, 1}}, poclLim, [3]uintptr{16, 1, 1}, [3]uintptr{16, 1, 1}},
		{"threads round down to the multiple", device.Shape{Size: [3]int{1000, 1, 1}, Threads: 100}, nvidiaLim, [3]uintptr{1056, 1, 1}, [3]uintptr{96, 1, 1}},
		{"threads below the multiple are kept", device.Shape{Size: [3]int{1000, 1, 1}, Threads: 5}, nvidiaLim, [3]uintptr{1000, 1, 1}, [3]uintptr{5, 1, 1}},
		{"teams in dimension 0", device.Shape{Size: [3]int{1000, 1, 1}, Teams: 7, Threads: 64}, nvidiaLim, [3]uintptr{448, 1, 1}, [3]uintptr{64, 1, 1}},
		{"2-D", device.Shape{Size: [3]int{1000, 300, 1}}, nvidiaLim, [3]uintptr{1024, 304, 1}, [3]uintptr{32, 8, 1}},
		{"2-D on a CPU is wide", device.Shape{Size: [3]int{512, 512, 1}}, poclLim, [3]uintptr{512, 512, 1}, [3]uintptr{512, 2, 1}},
		{"2-D narrow", device.Shape{Size: [3]int{4, 100000, 1}}, nvidiaLim, [3]uintptr{4, 100032, 1}, [3]uintptr{4, 64, 1}},
		{"2-D narrow on a CPU", device.Shape{Size: [3]int{4, 100000, 1}}, poclLim, [3]uintptr{4, 100096, 1}, [3]uintptr{4, 256, 1}},
		{"2-D short", device.Shape{Size: [3]int{1000, 2, 1}}, nvidiaLim, [3]uintptr{1024, 2, 1}, [3]uintptr{128, 2, 1}},
		{"2-D thread limit", device.Shape{Size: [3]int{1000, 1000, 1}, Threads: 1000}, nvidiaLim, [3]uintptr{1024, 1023, 1}, [3]uintptr{32, 31, 1}},
		{"2-D teams spread", device.Shape{Size: [3]int{1000, 300, 1}, Teams: 64}, nvidiaLim, [3]uintptr{256, 64, 1}, [3]uintptr{32, 8, 1}},
		{"2-D teams spread on a CPU", device.Shape{Size: [3]int{1000, 300, 1}, Teams: 64}, poclLim, [3]uintptr{1024, 64, 1}, [3]uintptr{1024, 1, 1}},
		{"2-D prime teams", device.Shape{Size: [3]int{1000, 300, 1}, Teams: 7}, nvidiaLim, [3]uintptr{224, 8, 1}, [3]uintptr{32, 8, 1}},
		{"3-D teams", device.Shape{Size: [3]int{64, 64, 64}, Teams: 512}, nvidiaLim, [3]uintptr{64, 32, 64}, [3]uintptr{32, 8, 1}},
		{"3-D capped", device.Shape{Size: [3]int{10, 100000, 70000}}, nvidiaLim, [3]uintptr{16, 25008, 2188}, [3]uintptr{16, 16, 1}},
		{"threads beyond the device", device.Shape{Size: [3]int{1 << 20, 1, 1}, Threads: 1 << 20}, nvidiaLim, [3]uintptr{1 << 20, 1, 1}, [3]uintptr{1024, 1, 1}},
		{"threads beyond the kernel", device.Shape{Size: [3]int{4096, 1, 1}, Threads: 1024}, wgLimits{max: 256, multiple: 32}, [3]uintptr{4096, 1, 1}, [3]uintptr{256, 1, 1}},
		{"no multiple known", device.Shape{Size: [3]int{1000, 1, 1}, Threads: 100}, wgLimits{max: 1024}, [3]uintptr{1000, 1, 1}, [3]uintptr{100, 1, 1}},
		{"1-D over 2^31 capped below it", device.Shape{Size: [3]int{1 << 33, 1, 1}}, nvidiaLim, [3]uintptr{1 << 30, 1, 1}, [3]uintptr{256, 1, 1}},
		{"many teams get fewer threads", device.Shape{Size: [3]int{1 << 33, 1, 1}, Teams: 1 << 24}, nvidiaLim, [3]uintptr{96 << 24, 1, 1}, [3]uintptr{96, 1, 1}},
	}
	for _, tc := range tests {
		require.NoError(t, checkShape(tc.shape), "%s", tc.name)
		_, global, local := geometry(tc.shape, tc.lim, 1)
		assert.Equal(t, tc.global, global, "%s: global %v local %v, want global %v local %v", tc.name, global, local, tc.global, tc.local)
		assert.Equal(t, tc.local, local, "%s: global %v local %v, want global %v local %v", tc.name, global, local, tc.global, tc.local)
	}
}

// On a CPU a work-group runs on one core: a launch of few heavy points
// (PolyBench's gemm: 1,000 rows, each 1.3 million products) gets groups
// for every compute unit, where it got one group of 1,000 and left a core
// idle; light points keep the wide groups POCL vectorizes, and a launch
// that names its threads or teams gets what it asked for.
func TestGeometrySpreadsHeavyPointsOverCPUUnits(t *testing.T) {
	pocl := poclLim
	pocl.units = 2
	tests := []struct {
		name   string
		shape  device.Shape
		lim    wgLimits
		work   int64
		groups int
		local  uintptr
	}{
		{"gemm's rows on 2 units", device.Shape{Size: [3]int{1000, 1, 1}}, pocl, 1100 * 1200, 8, 128},
		{"heavy rows on 16 units: about four groups each", device.Shape{Size: [3]int{1000, 1, 1}}, wgLimits{max: 4096, multiple: 8, cpu: true, units: 16}, 1 << 20, 63, 16},
		{"fewer points than groups wanted", device.Shape{Size: [3]int{3, 1, 1}}, pocl, 1 << 30, 3, 1},
		{"work for two groups only", device.Shape{Size: [3]int{1000, 1, 1}}, pocl, 20, 2, 504},
		{"light points stay one group", device.Shape{Size: [3]int{1000, 1, 1}}, pocl, 1, 1, 1000},
		{"light and many: groups of 1024", device.Shape{Size: [3]int{1 << 24, 1, 1}}, pocl, 1, 1 << 14, 1024},
		{"work past int64", device.Shape{Size: [3]int{1 << 40, 1, 1}}, pocl, math.MaxInt64, 1 << 20, 1024},
		{"one unit: unchanged", device.Shape{Size: [3]int{1000, 1, 1}}, poclLim, 1 << 20, 1, 1000},
		{"a GPU: unchanged", device.Shape{Size: [3]int{1000, 1, 1}}, wgLimits{max: 1024, multiple: 32, units: 132}, 1 << 20, 4, 256},
		{"threads asked for", device.Shape{Size: [3]int{1000, 1, 1}, Threads: 1000}, pocl, 1 << 20, 1, 1000},
		{"teams asked for", device.Shape{Size: [3]int{1000, 1, 1}, Teams: 1}, pocl, 1 << 20, 1, 1000},
	}
	for _, tc := range tests {
		require.NoError(t, checkShape(tc.shape), "%s", tc.name)
		_, global, local := geometry(tc.shape, tc.lim, tc.work)
		assert.Equal(t, tc.local, local[0], "%s: global %v local %v", tc.name, global, local)
		assert.Equal(t, tc.groups, int(global[0]/local[0]), "%s: global %v local %v", tc.name, global, local)
	}
}

// Every shape maps onto an NDRange the device takes: a legal local size
// (within the kernel's and the device's limits, a multiple of the preferred
// multiple when the plugin chose it), global sizes that are multiples of
// it and below 2^31, work-groups countable in 32 bits, exactly Teams
// work-groups when set, and, with Teams 0, one work-item per index where
// that stays within maxAutoItems.
func TestGeometryInvariants(t *testing.T) {
	sizes := []int{1, 2, 3, 4, 7, 31, 32, 33, 100, 255, 256, 1000, 4097, 1 << 20, 1<<31 - 1, 1 << 31, 1 << 40, math.MaxInt}
	teams := []int{0, 1, 2, 7, 64, 1000, 65535, 1 << 20, maxTeams}
	threads := []int{0, 1, 5, 32, 100, 256, 1000, 4096, 1 << 20}
	pocl2 := poclLim
	pocl2.units = 2
	lims := []wgLimits{nvidiaLim, poclLim, pocl2, {max: 256, multiple: 64, item: [3]int{256, 256, 256}}, {max: 1}, {max: 100, multiple: 1}}
	n := 0
	for _, lim := range lims {
		for _, th := range threads {
			for _, tm := range teams {
				for i, sx := range sizes {
					for _, shape := range []device.Shape{
						{Size: [3]int{sx, 1, 1}},
						{Size: [3]int{sx, sizes[(i*7+3)%len(sizes)], 1}},
						{Size: [3]int{sizes[(i*5+1)%len(sizes)], sx, sizes[(i*3+2)%len(sizes)]}},
					} {
						shape.Teams, shape.Threads = tm, th
						for _, w := range []int64{1, 1 << 20, math.MaxInt64} {
							checkInvariants(t, shape, lim, w)
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("%d shapes", n)
}

func checkInvariants(t *testing.T, s device.Shape, lim wgLimits, work int64) {
	t.Helper()
	dims, global, local := geometry(s, lim, work)
	bad := func(format string, args ...any) {
		t.Helper()
		require.FailNowf(t, "invariant broken", "shape %+v limits %+v: global %v local %v: "+format, append([]any{s, lim, global, local}, args...)...)
	}
	if dims != s.Dims() {
		bad("dims %d, want %d", dims, s.Dims())
	}
	items, groups := 1.0, 1.0
	wg := uintptr(1)
	for d := range 3 {
		if local[d] < 1 || global[d] < local[d] || global[d]%local[d] != 0 {
			bad("dimension %d is not an NDRange", d)
		}
		if global[d] >= 1<<31 {
			bad("global size %d of dimension %d is 2^31 or more", global[d], d)
		}
		if lim.item[d] > 0 && local[d] > uintptr(lim.item[d]) {
			bad("local size of dimension %d beyond the device's %d", d, lim.item[d])
		}
		if d >= dims && global[d] != 1 {
			bad("dimension %d is not used by the shape", d)
		}
		items *= float64(global[d])
		groups *= float64(global[d] / local[d])
		wg *= local[d]
	}
	if wg > uintptr(max(lim.max, 1)) {
		bad("work-group of %d beyond the limit %d", wg, lim.max)
	}
	if s.Threads > 0 && int(wg) > s.Threads {
		bad("work-group of %d beyond the %d threads asked for", wg, s.Threads)
	}
	spread := lim.cpu && lim.units > 1 && work > 1 // a few heavy points: a group per unit first
	if s.Threads == 0 && lim.multiple > 1 && lim.max >= lim.multiple && s.Teams*lim.multiple <= maxItems && int(wg)%lim.multiple != 0 && dims == 1 && !spread {
		bad("work-group of %d not a multiple of %d", wg, lim.multiple)
	}
	if items > maxItems || groups > math.MaxUint32 {
		bad("%g work-items in %g groups", items, groups)
	}
	if s.Teams > 0 && int(groups) != s.Teams {
		bad("%g work-groups, want %d teams", groups, s.Teams)
	}
	if s.Teams == 0 {
		covers := true
		for d := range 3 {
			covers = covers && global[d] >= uintptr(max(s.Size[d], 1))
		}
		want := float64(max(s.Size[0], 1)) * float64(max(s.Size[1], 1)) * float64(max(s.Size[2], 1))
		if !covers && want*2 < maxAutoItems/2 {
			bad("does not cover a space of %g points", want)
		}
		if items > maxAutoItems {
			bad("%g work-items, over %d", items, maxAutoItems)
		}
	}
}

func TestCheckShapeTeams(t *testing.T) {
	assert.NoError(t, checkShape(device.Shape{Size: [3]int{1}, Teams: maxTeams}), "maxTeams teams")
	err := checkShape(device.Shape{Size: [3]int{1}, Teams: maxTeams + 1})
	require.Error(t, err, "maxTeams+1 teams: %v, want an error naming MaxTeams", err)
	assert.Contains(t, err.Error(), "MaxTeams", "maxTeams+1 teams: %v, want an error naming MaxTeams", err)
}
