package kernels

import (
	_ "embed"

	"github.com/gompt/gompt/device"
)

//go:embed empty.cl
var emptyCL string

//go:embed empty.ptx
var emptyPTX string

// Empty does no work. Its one parameter is n int64 (the iteration count,
// unused). Launch-overhead benchmarks use it.
var Empty = &device.Kernel{
	Name:   "empty",
	Params: []device.Param{int64Param("n")},
	Dims:   1,
	Images: images("empty", emptyCL, emptyPTX, emptyHost),
	Sample: emptySample,
}

func emptyHost(a *device.HostArgs, r device.Range, team, teams int) {}

func emptySample(n int, seed int64) device.Sample {
	n = max(n, 1)
	return device.Sample{
		Shape: shape1(n),
		Bufs:  [][]byte{nil},
		Args:  []device.Arg{int64Arg(n)},
	}
}
