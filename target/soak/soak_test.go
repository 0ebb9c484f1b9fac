package soak

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
)

// TestSoak runs SoakGoroutines x GOMPT_SOAK_ITERS (default 50) mixed
// constructs on every device, then checks nothing stays mapped and device
// memory is back to its baseline. The long run sets GOMPT_SOAK_ITERS=1000.
func TestSoak(t *testing.T) {
	memBaseline(t)
	iters := envInt("GOMPT_SOAK_ITERS", 50)
	start := time.Now()
	counts, errs := Soak(SoakGoroutines, iters)
	failed := map[string]int64{}
	assert.Empty(t, errs, "the soak's errors")
	for _, err := range errs {
		var ke *kindError
		if errors.As(err, &ke) {
			failed[ke.kind]++
		} else {
			failed["present table after the soak"]++
		}
	}
	el := time.Since(start)
	var total int64
	keys := make([]string, 0, len(counts))
	for k, v := range counts {
		total += v
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	b = fmt.Appendf(b, "%d goroutines x %d iterations on %d device(s) (%s), %d constructs in %v:\n\n",
		SoakGoroutines, iters, target.NumDevices(), deviceNames(), total, el.Round(time.Millisecond))
	for _, k := range keys {
		b = fmt.Appendf(b, "- %s: %d\n", k, counts[k])
	}
	t.Logf("%s", b)
	writeReport(t, "soak.md", string(b))
	var rows []classRow
	for _, k := range keys {
		rows = append(rows, classRow{class: "soak: " + k, device: "soak, every device", runs: counts[k], failed: failed[k]})
	}
	rows = append(rows, classRow{class: "soak: present table after the soak", device: "soak, every device",
		runs: int64(target.NumDevices()), failed: failed["present table after the soak"]})
	writeClasses(t, "soak", rows)
}

func deviceNames() string {
	var s []string
	for _, d := range target.Devices() {
		s = append(s, d.ID+" "+d.Name)
	}
	return fmt.Sprint(s)
}
