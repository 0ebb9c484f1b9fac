package corpus

import (
	"testing"

	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// teamReverse is TeamReverse computed team by team in plain Go.
func teamReverse(teams int, flip bool, in []int32) (out []int32, sums []int64) {
	out = make([]int32, teams*64)
	sums = make([]int64, teams)
	for t := range teams {
		b := in[t*64 : t*64+64]
		var s int64
		for th := range 64 {
			out[t*64+th] = b[63-th] - b[th]
			if flip {
				out[t*64+th] += -b[(th+1)%64]
			}
			s += int64(b[th])
		}
		sums[t] = s + int64(b[0])
	}
	return out, sums
}

// A team kernel's threads share its team arrays and wait at its barriers
// on every device: the Go image (phases between barriers as loops over the
// threads), POCL's work-groups, the initial device; with as many teams as
// the launcher's and with the Sample's.
func TestTeamKernel(t *testing.T) {
	kerneltest.CheckKernel(t, TeamReverseKernel)
	for _, teams := range []int{1, 3, 100} {
		for _, flip := range []bool{false, true} {
			in := make([]int32, teams*64)
			for i := range in {
				in[i] = int32(i*2654435761) >> 7
			}
			wantOut, wantSums := teamReverse(teams, flip, in)
			for _, dev := range devices() {
				out := make([]int32, teams*64)
				sums := make([]int64, teams)
				require.NoError(t, RunTeamReverse(target.Dev(dev), teams, flip, in, out, sums), target.Describe(dev))
				require.Equal(t, wantOut, out, "%s: %d teams, flip %v", target.Describe(dev), teams, flip)
				require.Equal(t, wantSums, sums, "%s: %d teams, flip %v", target.Describe(dev), teams, flip)
			}
		}
	}
}

// teamTuple is TeamTuple computed team by team in plain Go.
func teamTuple(teams int, in []float32) []float32 {
	out := make([]float32, teams*128)
	for t := range teams {
		for th := range 64 {
			out[t*128+th] = in[t*64+th] * 2
			out[t*128+64+th] = in[t*64+63-th]*2 + 1
		}
	}
	return out
}

// Tuple assignments to team arrays (issue 38) store as Go's do, the
// targets' indexes taken before any store, on every device: the team
// kernel's result is the Go function's team by team, and each device's
// is its Go image's on the Sample.
func TestTeamTupleAssignment(t *testing.T) {
	kerneltest.CheckKernel(t, TeamTupleKernel)
	for _, teams := range []int{1, 3, 100} {
		in := make([]float32, teams*64)
		for i := range in {
			in[i] = float32(int32(i*2654435761)>>7) / 1024
		}
		want := teamTuple(teams, in)
		for _, dev := range devices() {
			out := make([]float32, teams*128)
			require.NoError(t, RunTeamTuple(target.Dev(dev), teams, in, out), target.Describe(dev))
			require.Equal(t, want, out, "%s: %d teams", target.Describe(dev), teams)
		}
	}
}
