//go:build cgo

package opencl

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRecordWait is one Record and Wait on an idle queue, with the
// driver's waits and with callbacks.
func BenchmarkRecordWait(b *testing.B) {
	p, _ := pluginDevices(b)
	for _, cb := range []bool{false, true} {
		b.Run(map[bool]string{false: "driver", true: "callbacks"}[cb], func(b *testing.B) {
			d := pretend(b, p, hooks{callbacks: cb}, 0)
			q, err := d.NewQueue()
			require.NoError(b, err)
			defer q.Release()
			b.ReportAllocs()
			for b.Loop() {
				ev, err := q.Record()
				require.NoError(b, err)
				require.NoError(b, ev.Wait())
			}
		})
	}
}
