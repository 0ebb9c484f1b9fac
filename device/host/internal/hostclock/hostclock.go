// Package hostclock is the host device's clock: nanoseconds from a fixed
// origin, as cheap to read as the machine allows, for the timestamps of
// trace records (four reads per traced construct).
//
// On linux/amd64, when the CPU's time-stamp counter is invariant (CPUID
// says so) and the kernel itself keeps time with it (its clocksource is
// "tsc", which it picks only after checking that the counters of all CPUs
// agree), the clock reads the counter (RDTSC, ~15 ns on a KVM guest
// where Go's monotonic clock costs ~40 ns) and scales it to nanoseconds
// with a rate measured against the monotonic clock over calibrateFor on
// first use. Anywhere else it is Go's monotonic clock. Either way it
// does not go back (beyond the few cycles an unfenced counter read may
// move) and is linear in real time; the small error of the
// measured rate (about 1e-4) is absorbed by ompt's clock translation,
// which fits device time to host time from paired readings.
//
// GOMPT_HOST_CLOCK=monotonic forces the monotonic clock, =tsc forces the
// counter wherever the CPU has an invariant one (even when the kernel
// uses another clocksource), =auto, unset or any other value chooses as
// above (package target warns about another value).
package hostclock

import (
	"fmt"
	"math/bits"
	"os"
	"strings"
	"sync"
	"time"
)

// EnvVar selects the clock; see the package comment.
const EnvVar = "GOMPT_HOST_CLOCK"

// calibrateFor is how long the counter's rate is measured on first use.
const calibrateFor = 250 * time.Microsecond

type clock struct {
	tsc    bool
	t0     uint64 // counter at the origin
	mult   uint64 // ns per tick << 32
	origin time.Time
	source string
}

var (
	once sync.Once
	c    clock
)

// Now returns nanoseconds since the clock's origin (its first use), plus
// one, so that it is always > 0.
func Now() int64 {
	once.Do(setup)
	if c.tsc {
		hi, lo := bits.Mul64(rdtsc()-c.t0, c.mult)
		return int64(hi<<32|lo>>32) + 1
	}
	return int64(time.Since(c.origin)) + 1
}

// Source describes the clock in use and why: "tsc (2.500 GHz)" or
// "monotonic (the kernel's clocksource is kvm-clock)".
func Source() string {
	once.Do(setup)
	return c.source
}

func setup() {
	c.origin = time.Now()
	why := choose(os.Getenv(EnvVar), hasInvariantTSC(), kernelClocksource())
	if why == "" {
		mult, hz, ok := calibrate()
		if ok {
			c.tsc, c.mult = true, mult
			c.t0 = rdtsc()
			c.source = fmt.Sprintf("tsc (%.3f GHz)", hz/1e9)
			return
		}
		why = fmt.Sprintf("the counter's measured rate, %.0f Hz, is implausible", hz)
	}
	c.source = "monotonic (" + why + ")"
}

// choose returns "" when the counter is to be used, otherwise why not.
func choose(env string, invariant bool, clocksource string) string {
	switch v := strings.ToLower(strings.TrimSpace(env)); v {
	case "monotonic":
		return EnvVar + "=monotonic"
	case "tsc":
		if !invariant {
			return EnvVar + "=tsc, but this CPU has no invariant time-stamp counter"
		}
		return ""
	case "", "auto":
	default:
		// Any other value is auto; the runtime warns about it (package
		// target reads the environment).
	}
	switch {
	case !invariant:
		return "no invariant time-stamp counter"
	case clocksource == "":
		return "the kernel's clocksource is unknown"
	case clocksource != "tsc":
		return "the kernel's clocksource is " + clocksource
	}
	return ""
}

// kernelClocksource is the clocksource Linux keeps time with, "" if unknown.
func kernelClocksource() string {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// calibrate measures the counter's rate against the monotonic clock over
// calibrateFor: the multiplier for Now and the rate in Hz; ok when the
// rate is plausible (100 MHz to 20 GHz).
func calibrate() (mult uint64, hz float64, ok bool) {
	t0, n0 := pair()
	for time.Since(c.origin) < time.Duration(n0)+calibrateFor {
	}
	t1, n1 := pair()
	if t1 <= t0 || n1 <= n0 {
		return 0, 0, false
	}
	hz = float64(t1-t0) / float64(n1-n0) * 1e9
	if hz < 1e8 || hz > 2e10 {
		return 0, hz, false
	}
	return uint64(float64(n1-n0) / float64(t1-t0) * (1 << 32)), hz, true
}

// pair reads the counter between two monotonic readings, three times,
// and keeps the narrowest bracket: the counter and the bracket's middle.
func pair() (tsc uint64, ns int64) {
	best := int64(-1)
	for range 3 {
		a := int64(time.Since(c.origin))
		t := rdtsc()
		b := int64(time.Since(c.origin))
		if w := b - a; best < 0 || w < best {
			best, tsc, ns = w, t, a+w/2
		}
	}
	return tsc, ns
}
