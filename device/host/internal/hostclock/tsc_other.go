//go:build !amd64

package hostclock

func rdtsc() uint64 { return 0 }

// hasInvariantTSC: the counter is read only on amd64 (arm64's monotonic
// clock already reads its virtual counter in user space).
func hasInvariantTSC() bool { return false }
