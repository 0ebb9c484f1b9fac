package target

// The plugins and the C face of the tools interface are linked into every
// program that imports target, so one binary finds whatever devices and C
// tools a machine has at run time. (DESIGN.md's layout lets target import
// only device, mapping and ompt; users import target alone, so target is
// where these are pulled in. None of them imports target.)
import (
	_ "github.com/gompt/gompt/device/cuda"
	_ "github.com/gompt/gompt/device/host"
	_ "github.com/gompt/gompt/device/opencl"
	_ "github.com/gompt/gompt/ompt/cabi"
)
