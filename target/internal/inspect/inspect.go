// Package inspect lets the runtime's reliability tests (target/soak) look
// at the runtime's state without package target exporting it to every
// program. Package target fills it in when it initialises; a program that
// does not import target sees nil functions.
package inspect

import "github.com/gompt/gompt/mapping"

// MappingEntries returns a snapshot of the present table of offload device
// dev (0..NumDevices()-1), in host address order, for tests that check a
// failed construct left the table exactly as it was. The initial device has
// no table: it returns nil, as it does for a device number that names no
// offload device. Safe for concurrent use; the snapshot does not change
// afterwards.
var MappingEntries func(dev int) []mapping.Entry
