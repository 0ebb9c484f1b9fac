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
