//go:build !linux

package host

// physicalMemory returns an assumed size where the platform's memory cannot
// be asked for portably.
func physicalMemory() (uint64, string) { return fallbackMemory, "assumed" }
