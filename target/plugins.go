package target

// The plugins, the C face of the tools interface and the GOMPT_TRACE
// timeline tool are linked into every program that imports target, so one binary finds whatever devices and C
// tools a machine has at run time. (Users import target alone, so target
// is where these are pulled in, beside the packages it is built on:
// device, mapping and ompt. None of them imports target.)
import (
	_ "github.com/gompt/gompt/device/cuda"
	_ "github.com/gompt/gompt/device/host"
	_ "github.com/gompt/gompt/device/opencl"
	_ "github.com/gompt/gompt/target/internal/cabi"
	_ "github.com/gompt/gompt/tools/timeline" // GOMPT_TRACE=FILE
)
