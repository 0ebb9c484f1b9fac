package corpus

import (
	"testing"

	"github.com/gompt/gompt/target"
)

// BenchmarkGatherChecks is the cost of the run-time index checks: Gather
// (its src index checked) against GatherUnchecked (check=off), on data
// kept on each device by a data region, so that each op is one launch.
// Compare the pairs interleaved (-count), never as an assertion.
func BenchmarkGatherChecks(b *testing.B) {
	const n, m = 1 << 22, 1 << 20
	idx := make([]int, n)
	for i := range idx {
		idx[i] = (i * 7919) % m
	}
	src, dst := make([]float32, m), make([]float32, n)
	for _, d := range target.Devices() {
		for _, c := range []struct {
			name string
			run  func(target.DeviceClause, int, int, []int, []float32, []float32) error
		}{{"check=on", RunGather}, {"check=off", RunGatherUnchecked}} {
			b.Run(d.ID+"/"+c.name, func(b *testing.B) {
				maps := []target.Map{target.To(idx), target.To(src), target.ToFrom(dst)}
				err := target.Data(d.Num, maps, func() error {
					for b.Loop() {
						if err := c.run(target.Dev(d.Num), n, m, idx, src, dst); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
