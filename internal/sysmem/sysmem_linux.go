package sysmem

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PhysicalMemory returns the bytes of memory this process may use: the
// machine's RAM (sysinfo), or the cgroup memory limit when that is lower,
// and where the number came from.
func PhysicalMemory() (uint64, string) {
	total, how := uint64(0), ""
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		unit := uint64(si.Unit)
		if unit == 0 {
			unit = 1
		}
		total, how = uint64(si.Totalram)*unit, "sysinfo"
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lim, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && lim > 0 && (total == 0 || lim < total) {
			total, how = lim, f
		}
	}
	if total == 0 {
		return Fallback, "assumed (sysinfo failed)"
	}
	return total, how
}
