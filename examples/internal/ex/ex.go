// Package ex holds what the examples share: the -device flag, a line
// naming the device used, and failing with a message.
package ex

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gompt/gompt/target"
)

// DeviceFlag registers -device, defaulting to the default device.
func DeviceFlag() *int {
	return flag.Int("device", target.DefaultDevice,
		"device number: 0..N-1 offload devices, N or -1 the initial device; default: the default device (OMP_DEFAULT_DEVICE)")
}

// Describe prints which device the example runs on.
func Describe(name string, dev int) {
	fmt.Printf("%s: running on %s\n", name, target.Describe(dev))
}

// Timing prints how long a phase took.
func Timing(what string, d time.Duration, extra string) {
	fmt.Printf("  %-28s %12.3f ms %s\n", what, float64(d.Nanoseconds())/1e6, extra)
}

// Check exits with status 1 and the error if err is not nil.
func Check(name string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Fail reports a wrong result and exits with status 1.
func Fail(name, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s: WRONG RESULT: "+format+"\n", append([]any{name}, args...)...)
	os.Exit(1)
}
