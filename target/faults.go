package target

import "github.com/gompt/gompt/mapping"

// MappingEntries returns a snapshot of the present table of offload device
// dev (0..NumDevices()-1), in host address order, for diagnostics and for
// tests that check a failed construct left the table exactly as it was
// (target/soak). The initial device has no table: it returns nil, as it
// does for a device number that names no offload device. Safe for
// concurrent use; the snapshot does not change afterwards.
func MappingEntries(dev int) []mapping.Entry {
	_, d, err := open(dev)
	if err != nil || d == nil {
		return nil
	}
	return d.table.Entries()
}
