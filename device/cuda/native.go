package cuda

import "github.com/gompt/gompt/device"

// Native record types of the operations a queue times (device.Native.Type).
const (
	typeHtoD   = "cuda memcpy HtoD"
	typeDtoH   = "cuda memcpy DtoH"
	typeDtoD   = "cuda memcpy DtoD"
	typeKernel = "cuda kernel"
)

// gridTeams returns the number of blocks of a grid: the teams a launch
// ran.
func gridTeams(grid [3]uint32) int {
	return int(grid[0]) * int(grid[1]) * int(grid[2])
}

// nativeRecord is the plugin's native record of one timed operation
// (Record): its interval on the device clock (Device.Now ns), and
// the CUstream and CUcontext it ran on, as identifiers; HWID is the
// queue's number on its device.
func nativeRecord(begin, end int64, stream, ctx uint64, typ string, hwid uint64, teams int) device.Native {
	return Record{Start: uint64(begin), End: uint64(end), Stream: stream, Context: ctx}.Native(typ, hwid, teams)
}
