package target

import (
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/target/internal/inspect"
)

func init() { inspect.MappingEntries = mappingEntries }

// mappingEntries is inspect.MappingEntries.
func mappingEntries(dev int) []mapping.Entry {
	_, d, err := open(dev)
	if err != nil || d == nil {
		return nil
	}
	return d.table.Entries()
}
