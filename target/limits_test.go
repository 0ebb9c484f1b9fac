package target

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/device/hostexec"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Launch limits as a device states them: the runtime refuses a shape only
// past the limits of the device it runs on and of the kernel, never at
// them, and a limit a device leaves at 0 is no limit. The devices are the
// host plugin's with the limits of limitedInfo in place of their own,
// under a plugin name of the tests' own ("host-limited": it sorts after
// "host", so the plugin lists other tests expect are unchanged).

const limitedPluginName = "host-limited"

// limitedInfo holds the launch limits the next runtime's limited devices
// state (set by the test before it starts the runtime).
var limitedInfo struct{ teams, threads int }

type limitedPlugin struct{}

type limitedDevice struct {
	device.Device
	info device.Info
}

func (d limitedDevice) Info() device.Info { return d.info }

func (limitedPlugin) Devices() ([]device.Device, error) {
	p, ok := device.Lookup(host.Name)
	if !ok {
		return nil, device.NoDevice(limitedPluginName, errors.New("host plugin not registered"))
	}
	ds, err := p.Devices()
	out := make([]device.Device, len(ds))
	for i, d := range ds {
		info := d.Info()
		info.MaxTeams, info.MaxThreadsPerTeam = limitedInfo.teams, limitedInfo.threads
		out[i] = limitedDevice{d, info}
	}
	return out, err
}

func init() { device.Register(limitedPluginName, limitedPlugin{}) }

// limitedRuntime is a runtime on one host device that states the given
// launch limits (0: none).
func limitedRuntime(t *testing.T, teams, threads int) {
	t.Helper()
	limitedInfo.teams, limitedInfo.threads = teams, threads
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": limitedPluginName, "GOMPT_HOST_DEVICES": "1"})
	require.Len(t, r.devs, 1, "want one limited host device: %s", r.why())
	require.Equal(t, teams, r.devs[0].info.MaxTeams, "the runtime's MaxTeams against the one the device states")
	require.Equal(t, threads, r.devs[0].info.MaxThreadsPerTeam, "the runtime's MaxThreadsPerTeam against the one the device states")
}

// oneThread is kernels.Fill declared for teams of at most one thread (a
// kernel written for one work-item per group).
var oneThread = &device.Kernel{Name: kernels.Fill.Name, Params: kernels.Fill.Params, Images: kernels.Fill.Images, Dims: 1, MaxThreads: 1}

// fillRegion fills x with v on device dev in the given shape.
func fillRegion(dev int, k *device.Kernel, x []float32, v float32, s Shape) Region {
	return Region{Device: Dev(dev), Kernel: k, Shape: s, Maps: []Map{ToFrom(x)}, Args: []Arg{Int(len(x)), Float32(v), Slice(x)}}
}

// wantFilled fails the test unless the region ran and every element of x is v.
func wantFilled(t *testing.T, what string, err error, x []float32, v float32) {
	t.Helper()
	require.NoError(t, err, "%s: want it to run", what)
	for i := range x {
		require.Equal(t, v, x[i], "%s: x[%d]", what, i)
	}
}

// A device that runs at most 4 teams of 8 threads runs a launch of exactly
// 4 teams of 8 threads, and refuses 5 teams or 9 threads, naming the limit;
// so does a device of one team of one thread, at 1 and 2.
func TestDeviceLimitsAreInclusive(t *testing.T) {
	for _, l := range []struct{ teams, threads int }{{4, 8}, {1, 1}} {
		limitedRuntime(t, l.teams, l.threads)
		x := make([]float32, 100)
		at := fmt.Sprintf("%d teams of %d threads on a device of %d teams of %d", l.teams, l.threads, l.teams, l.threads)
		shape := func(teams, threads int) Shape { return Shape{Size: [3]int{100, 1, 1}, Teams: teams, Threads: threads} }
		wantFilled(t, at, Target(fillRegion(0, kernels.Fill, x, 1, shape(l.teams, l.threads))), x, 1)
		wantErr(t, 0, "one team more", Target(fillRegion(0, kernels.Fill, x, 2, shape(l.teams+1, l.threads))),
			fmt.Sprintf("kernel fill: launch shape: %d teams; device 0", l.teams+1), fmt.Sprintf("runs at most %d (MaxTeams)", l.teams))
		wantErr(t, 0, "one thread more", Target(fillRegion(0, kernels.Fill, x, 2, shape(l.teams, l.threads+1))),
			fmt.Sprintf("kernel fill: launch shape: %d threads per team; device 0", l.threads+1), fmt.Sprintf("runs at most %d (MaxThreadsPerTeam)", l.threads))
		if l.threads > 1 {
			// At the device's limits, past the kernel's: the kernel's is named.
			wantErr(t, 0, "a kernel of 1 thread at the device's limits", Target(fillRegion(0, oneThread, x, 2, shape(l.teams, l.threads))),
				fmt.Sprintf("%d threads per team; the kernel runs at most 1 (Kernel.MaxThreads)", l.threads))
		}
		wantFilled(t, "the refused regions", nil, x, 1)
	}
}

// A device that states no limits (0) runs any number of teams and threads
// (up to what it can do itself: the host device's queue still refuses more
// than hostexec.MaxThreadsPerTeam).
func TestDeviceWithoutLimits(t *testing.T) {
	limitedRuntime(t, 0, 0)
	x := make([]float32, 100)
	wantFilled(t, "1000 teams of 64 threads on a device without limits", Target(fillRegion(0, kernels.Fill, x, 3, Shape{Size: [3]int{100, 1, 1}, Teams: 1000, Threads: 64})), x, 3)
	wantFilled(t, "1 team of 1 thread on a device without limits", Target(fillRegion(0, kernels.Fill, x, 4, Shape{Size: [3]int{100, 1, 1}, Teams: 1, Threads: 1})), x, 4)
	// The kernel's own limit still holds, and is the one named.
	wantErr(t, 0, "3 teams of 2 threads for a kernel of 1", Target(fillRegion(0, oneThread, x, 5, Shape{Size: [3]int{100, 1, 1}, Teams: 3, Threads: 2})),
		"kernel fill: launch shape: 2 threads per team; the kernel runs at most 1 (Kernel.MaxThreads)")
}

// The host device and the initial device run a team of exactly
// hostexec.MaxThreadsPerTeam threads, the limit they state.
func TestThreadsAtTheHostLimit(t *testing.T) {
	hostRuntime(t)
	for _, dev := range []int{0, InitialDevice} {
		x := make([]float32, 3000)
		s := Shape{Size: [3]int{len(x), 1, 1}, Teams: 2, Threads: hostexec.MaxThreadsPerTeam}
		wantFilled(t, fmt.Sprintf("device %d: %d threads per team", dev, s.Threads), Target(fillRegion(dev, kernels.Fill, x, 5, s)), x, 5)
		s.Threads++
		wantErr(t, dev, "one thread more", Target(fillRegion(dev, kernels.Fill, x, 6, s)),
			fmt.Sprintf("%d threads per team", s.Threads), fmt.Sprintf("runs at most %d (MaxThreadsPerTeam)", hostexec.MaxThreadsPerTeam))
	}
}

// A kernel that runs teams of at most one thread (Kernel.MaxThreads 1, a
// kernel written for one work-item per group) runs with 1 thread, and a
// launch of 2 is refused on every device, naming the kernel's limit.
func TestKernelOfOneThread(t *testing.T) {
	_, devs := everyDevice(t)
	one := oneThread
	for _, dev := range devs {
		x := make([]float32, 50)
		wantFilled(t, fmt.Sprintf("device %d: 1 thread per team for a kernel of 1", dev), Target(fillRegion(dev, one, x, 7, Shape{Size: [3]int{50, 1, 1}, Threads: 1})), x, 7)
		wantErr(t, dev, "2 threads per team for a kernel of 1", Target(fillRegion(dev, one, x, 8, Shape{Size: [3]int{50, 1, 1}, Threads: 2})),
			"kernel fill: launch shape: 2 threads per team; the kernel runs at most 1 (Kernel.MaxThreads)")
		wantFilled(t, "the refused region", nil, x, 7)
	}
}

// A device pointer argument of 0 (target.Ptr(0): no allocation) is refused
// before any device work on every device, naming the argument, rather than
// reaching the kernel or failing in a length check with another message.
func TestNilDevicePointerArgument(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		err := Target(Region{Device: Dev(dev), Kernel: kernels.Fill, Shape: N(16), Args: []Arg{Int(16), Float32(1), Ptr(0)}})
		wantErr(t, dev, "Ptr(0) argument", err, "kernel fill argument 2 (x): nil device pointer")
		assert.Equal(t, 1, strings.Count(err.Error(), "target:"), "device %d: error %q: want the one message", dev, err)
	}
}
