package launch_test

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A launcher's device clause carries num_teams and thread_limit, which
// every form of launcher honours on every device: a map kernel, a
// reduction (whose partial results follow the teams), a reduction into an
// array, and their nowait forms.
func TestLaunchersTakeTeamsClauses(t *testing.T) {
	const n = 5003
	x := floats(n, func(i int) float32 { return float32(i%31)/5 - 2 })
	y0 := floats(n, func(i int) float32 { return float32(i%7) * 0.5 })
	v := make([]uint8, n)
	var wantHist [256]uint32
	for i := range v {
		v[i] = uint8(i * 37)
		wantHist[v[i]]++
	}
	var wantDot float64
	for i := range x {
		wantDot += float64(x[i]) * float64(y0[i])
	}
	for _, base := range devices() {
		for _, c := range []struct{ teams, threads int }{{1, 0}, {3, 0}, {64, 16}, {0, 1}} {
			dev := base
			if c.teams > 0 {
				dev = dev.NumTeams(c.teams)
			}
			if c.threads > 0 {
				dev = dev.ThreadLimit(c.threads)
			}
			what := fmt.Sprintf("%s, %s", target.Describe(dev.Num()), dev)

			y := append([]float32(nil), y0...)
			require.NoError(t, launch.RunSaxpy(dev, n, 0.5, x, y), what)
			for i := range y {
				require.Equal(t, 0.5*x[i]+y0[i], y[i], "%s: saxpy y[%d]", what, i)
			}
			d, err := launch.RunDot(dev, n, x, y0)
			require.NoError(t, err, what)
			assert.InEpsilon(t, wantDot, float64(d), 1e-5, "%s: dot", what)
			d, err = launch.RunDotNowait(dev, n, x, y0).Wait()
			require.NoError(t, err, what+": nowait")
			assert.InEpsilon(t, wantDot, float64(d), 1e-5, "%s: dot nowait", what)

			h := make([]uint32, 256)
			require.NoError(t, launch.RunHistogram(dev, n, v, h), what)
			assert.Equal(t, wantHist[:], h, "%s: histogram", what)
		}
	}
}

// A team kernel's teams are its work: a num_teams clause that disagrees
// is refused, naming it; a thread_limit below its team size too.
func TestTeamKernelLauncherRefusesOtherTeams(t *testing.T) {
	const m, n, k = 64, 64, 8
	A, B, C := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, dev := range devices() {
		err := launch.RunMatmulTiled(dev.NumTeams(1001), m, n, k, A, B, C)
		if assert.Error(t, err, target.Describe(dev.Num())) {
			assert.Contains(t, err.Error(), "num_teams(1001), but the launch shape asks for")
		}
		err = launch.RunMatmulTiled(dev.ThreadLimit(2), m, n, k, A, B, C)
		if assert.Error(t, err, target.Describe(dev.Num())) {
			assert.Contains(t, err.Error(), "thread_limit(2), but the kernel runs teams of exactly")
		}
	}
}

// A num_teams a reduction's launcher cannot allocate partials for, or a
// bad one, is refused by the runtime, naming the clause; nothing panics.
func TestReductionLauncherRefusesBadNumTeams(t *testing.T) {
	x := floats(100, func(i int) float32 { return 1 })
	for _, dev := range devices() {
		for _, n := range []int{1 << 40, 0, -2} {
			_, err := launch.RunDot(dev.NumTeams(n), len(x), x, x)
			if assert.Error(t, err, "%s: num_teams(%d)", target.Describe(dev.Num()), n) {
				assert.Contains(t, err.Error(), fmt.Sprintf("num_teams(%d)", n))
			}
		}
	}
}
