package target

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// teamCounter records, per launch, the number of teams its Go image ran
// and how many times each team was called, and writes 1 at every point.
type teamCounter struct {
	mu    sync.Mutex
	teams []int
	calls int
}

func (c *teamCounter) kernel(maxThreads int) *device.Kernel {
	return &device.Kernel{
		Name:       "team_counter",
		Params:     []device.Param{device.BufferParam("x", device.ParamFloat32, "Shape.Size[0]")},
		Dims:       1,
		MaxThreads: maxThreads,
		Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
			c.mu.Lock()
			c.teams = append(c.teams, teams)
			c.calls++
			c.mu.Unlock()
			x := a.F32(0)
			for i := r.Lo[0]; i < r.Hi[0]; i++ {
				x[i] = 1
			}
		}}},
	}
}

// num_teams(n) (DeviceClause.NumTeams) runs exactly n teams, as Shape.Teams
// n does, on the host device and the initial device: also where the
// runtime would have run one (a few light points) or where it would have
// run one per core.
func TestNumTeamsRunsThatMany(t *testing.T) {
	r := hostRuntime(t)
	for _, dev := range []int{0, len(r.devs)} {
		for _, c := range []struct{ points, teams int }{{10, 7}, {10, 1}, {1 << 20, 3}, {5, 12}} {
			var tc teamCounter
			x := make([]float32, c.points)
			err := Target(Region{Device: Dev(dev).NumTeams(c.teams), Kernel: tc.kernel(0), Shape: N(c.points), Maps: []Map{ToFrom(x)}, Args: []Arg{Slice(x)}})
			what := fmt.Sprintf("device %d: num_teams(%d) over %d points", dev, c.teams, c.points)
			require.NoError(t, err, what)
			assert.Equal(t, c.teams, tc.calls, "%s: teams called", what)
			for _, n := range tc.teams {
				assert.Equal(t, c.teams, n, "%s: the teams each team was told", what)
			}
			for i, v := range x {
				require.Equal(t, float32(1), v, "%s: x[%d]", what, i)
			}
		}
	}
}

// Bad num_teams and thread_limit clauses are refused before any device
// work, naming the clause and what is accepted.
func TestTeamsClausesRefused(t *testing.T) {
	r := hostRuntime(t)
	tiledTeam := kernels.MatmulTiled.TeamSize()
	require.Positive(t, tiledTeam, "MatmulTiled has a fixed team size")
	for _, dev := range []int{0, len(r.devs)} {
		for _, c := range []struct {
			what   string
			clause DeviceClause
			shape  Shape
			kernel func(*teamCounter) *device.Kernel
			want   string
		}{
			{"num_teams(0)", Dev(dev).NumTeams(0), N(10), nil, "num_teams(0): the number of teams must be positive"},
			{"num_teams(-3)", Dev(dev).NumTeams(-3), N(10), nil, "num_teams(-3): the number of teams must be positive"},
			{"thread_limit(0)", Dev(dev).ThreadLimit(0), N(10), nil, "thread_limit(0): the limit must be positive"},
			{"num_teams against Shape.Teams", Dev(dev).NumTeams(4), Shape{Size: [3]int{10, 1, 1}, Teams: 5}, nil,
				"num_teams(4), but the launch shape asks for 5 teams (Shape.Teams)"},
			{"thread_limit below a fixed team size", Dev(dev).ThreadLimit(tiledTeam - 1), N(10),
				func(*teamCounter) *device.Kernel { return kernels.MatmulTiled },
				fmt.Sprintf("thread_limit(%d), but the kernel runs teams of exactly %d threads (Kernel.TeamSize)", tiledTeam-1, tiledTeam)},
		} {
			var tc teamCounter
			k := tc.kernel(0)
			x := make([]float32, 10)
			args := []Arg{Slice(x)}
			if c.kernel != nil {
				k = c.kernel(&tc)
				args = []Arg{Int(1), Int(1), Int(1), Int(1), Slice(x), Slice(x), Slice(x)}
			}
			err := Target(Region{Device: c.clause, Kernel: k, Shape: c.shape, Maps: []Map{ToFrom(x)}, Args: args})
			what := fmt.Sprintf("device %d: %s", dev, c.what)
			if assert.Error(t, err, what) {
				assert.Contains(t, err.Error(), c.want, what)
				assert.Contains(t, err.Error(), "kernel "+k.Name, what)
			}
			assert.Zero(t, tc.calls, "%s: nothing ran", what)
			assert.Equal(t, make([]float32, 10), x, "%s: nothing written", what)
		}
	}
}

// thread_limit(n) caps Shape.Threads: a kernel of at most 4 threads runs
// under thread_limit(4) with Shape.Threads 8 (refused without the clause),
// and with Shape.Threads 0.
func TestThreadLimitCapsThreads(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		for _, threads := range []int{0, 8} {
			x := make([]float32, 50)
			s := Shape{Size: [3]int{50, 1, 1}, Threads: threads}
			err := Target(fillRegion(dev, oneThread, x, 3, s))
			if threads > 1 {
				require.Error(t, err, "device %d: %d threads for a kernel of one, no clause", dev, threads)
			}
			r := fillRegion(dev, oneThread, x, 4, s)
			r.Device = r.Device.ThreadLimit(1)
			require.NoError(t, Target(r), "device %d: Shape.Threads %d under thread_limit(1)", dev, threads)
			for i := range x {
				require.Equal(t, float32(4), x[i], "device %d: x[%d]", dev, i)
			}
		}
	}
}

func TestDeviceClauseString(t *testing.T) {
	assert.Equal(t, "no device clause", DeviceClause{}.String())
	assert.Equal(t, "device(1)", Dev(1).String())
	assert.Equal(t, "device(0) num_teams(64) thread_limit(128)", Dev(0).NumTeams(64).ThreadLimit(128).String())
	assert.Equal(t, "num_teams(8)", DeviceClause{}.NumTeams(8).String())
	c := Dev(2).NumTeams(3).ThreadLimit(math.MaxInt32)
	assert.Equal(t, 3, c.Teams())
	assert.Equal(t, math.MaxInt32, c.Threads())
	assert.Equal(t, 2, c.Num())
	assert.Equal(t, DefaultDevice, DeviceClause{}.NumTeams(8).Num(), "num_teams alone keeps the default device")
	assert.Zero(t, Dev(1).Teams())
	assert.Zero(t, Dev(1).Threads())
}
