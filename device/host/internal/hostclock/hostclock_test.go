package hostclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		env       string
		invariant bool
		cs        string
		want      string // "" or a substring of the reason
	}{
		{"", true, "tsc", ""},
		{"auto", true, "tsc", ""},
		{" AUTO ", true, "tsc", ""},
		{"", true, "kvm-clock", "clocksource is kvm-clock"},
		{"", true, "", "unknown"},
		{"", false, "tsc", "no invariant"},
		{"tsc", true, "kvm-clock", ""},
		{"tsc", false, "tsc", "no invariant"},
		{"monotonic", true, "tsc", "=monotonic"},
		{"rdtsc", true, "tsc", ""}, // a bad value is auto (target warns)
		{"rdtsc", true, "kvm-clock", "clocksource is kvm-clock"},
	} {
		got := choose(tc.env, tc.invariant, tc.cs)
		if tc.want == "" {
			assert.Empty(t, got, "choose(%q, %v, %q)", tc.env, tc.invariant, tc.cs)
		} else {
			assert.Contains(t, got, tc.want, "choose(%q, %v, %q)", tc.env, tc.invariant, tc.cs)
		}
	}
}

// The clock is positive, never goes back, and keeps pace with the
// monotonic clock within the calibration's error.
func TestNowTracksMonotonic(t *testing.T) {
	t.Logf("source: %s", Source())
	prev := Now()
	require.Positive(t, prev, "Now()")
	start, c0 := time.Now(), Now()
	for time.Since(start) < 50*time.Millisecond {
		n := Now()
		require.GreaterOrEqual(t, n, prev, "Now went back")
		prev = n
	}
	el, dc := time.Since(start), Now()-c0
	// The calibration's rate error is ~1e-4; scheduling between the two
	// pairs of reads adds a few microseconds on a busy machine.
	assert.InDelta(t, float64(el), float64(dc), float64(time.Millisecond/2),
		"over %v of monotonic time the clock advanced %v", el, time.Duration(dc))
}

func BenchmarkNow(b *testing.B) {
	Now()
	var s int64
	for b.Loop() {
		s += Now()
	}
	_ = s
}

func BenchmarkMonotonic(b *testing.B) {
	t0 := time.Now()
	var s int64
	for b.Loop() {
		s += int64(time.Since(t0))
	}
	_ = s
}
