//go:build !linux

package sysmem

// PhysicalMemory returns an assumed size where the platform's memory cannot
// be asked for portably.
func PhysicalMemory() (uint64, string) { return Fallback, "assumed" }
