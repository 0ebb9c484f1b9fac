package tooltest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

// Each synchronous data construct names its caller (codeptr_ra) at both of
// its ends and on its data ops, and a target data region is one enter data
// construct where it begins and one exit data construct where it ends
// (once: not again after the body returned), both naming the region's
// caller, not the runtime.
func TestDataConstructsNameTheirCaller(t *testing.T) {
	x, y := make([]float32, 16), make([]float32, 8)
	tool.take()
	td := tool.nextTD + 1000
	require.NoError(t, target.EnterData(0, target.To(x)))
	require.NoError(t, target.Update(0, target.To(x)))
	require.NoError(t, target.ExitData(0, target.From(x)))
	ran := false
	require.NoError(t, target.Data(0, []target.Map{target.ToFrom(y)}, func() error { ran = true; return nil }))
	require.True(t, ran, "the data region's body ran")

	// Lines with TD for the construct's target id and CODE for the caller.
	const (
		toDev   = "src_dev=host dst_dev=0"
		fromDev = "src_dev=0 dst_dev=host"
	)
	op := func(what, dir string, bytes int) []string {
		return []string{
			fmt.Sprintf("data_op ompt_target_data_%s begin %s bytes=%d td=TD code=CODE", what, dir, bytes),
			fmt.Sprintf("data_op ompt_target_data_%s end %s bytes=%d td=TD code=CODE", what, dir, bytes),
		}
	}
	enter := func(bytes int) []string {
		return append(append(op("alloc", toDev, bytes), op("transfer_to_device", toDev, bytes)...), "map n=1 td=TD")
	}
	exit := func(bytes int) []string {
		return append(append([]string{"map n=1 td=TD"}, op("transfer_from_device", fromDev, bytes)...), op("delete", fromDev, 0)...)
	}
	var want []string
	for i, c := range []struct {
		kind string
		body []string
	}{
		{"enter_data", enter(64)},
		{"update", op("transfer_to_device", toDev, 64)},
		{"exit_data", exit(64)},
		{"enter_data", enter(32)}, // the data region's beginning
		{"exit_data", exit(32)},   // and its end
	} {
		r := strings.NewReplacer("TD", fmt.Sprint(td+uint64(i)+1), "CODE", "TestDataConstructsNameTheirCaller")
		want = append(want, r.Replace("target ompt_target_"+c.kind+" begin dev=0 td=TD code=CODE"))
		for _, l := range c.body {
			want = append(want, r.Replace(l))
		}
		want = append(want, r.Replace("target ompt_target_"+c.kind+" end dev=0 td=TD code=CODE"))
	}
	expect(t, want...)
}
