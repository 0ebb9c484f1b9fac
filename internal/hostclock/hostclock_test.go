package hostclock

import (
	"strings"
	"testing"
	"time"
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
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("choose(%q, %v, %q) = %q, want %q", tc.env, tc.invariant, tc.cs, got, tc.want)
		}
	}
}

// The clock is positive, never goes back, and keeps pace with the
// monotonic clock within the calibration's error.
func TestNowTracksMonotonic(t *testing.T) {
	t.Logf("source: %s", Source())
	prev := Now()
	if prev <= 0 {
		t.Fatalf("Now() = %d, want > 0", prev)
	}
	start, c0 := time.Now(), Now()
	for time.Since(start) < 50*time.Millisecond {
		n := Now()
		if n < prev {
			t.Fatalf("Now went back: %d after %d", n, prev)
		}
		prev = n
	}
	el, dc := time.Since(start), Now()-c0
	// The calibration's rate error is ~1e-4; scheduling between the two
	// pairs of reads adds a few microseconds on a busy machine.
	if diff := time.Duration(dc) - el; diff < -time.Millisecond/2 || diff > time.Millisecond/2 {
		t.Fatalf("over %v of monotonic time the clock advanced %v", el, time.Duration(dc))
	}
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
