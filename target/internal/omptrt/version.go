package omptrt

import (
	"fmt"
	"strings"

	"github.com/gompt/gompt/ompt"
)

// The OpenMP version of the tools interface: GOMPT_OMPT_VERSION and
// GOMPT_TOOL_PROFILE, read once by Start before any tool is asked, fix
// what every event of the process reports (ompt/doc.go, "OpenMP
// versions"). The hot path reads only the variables below, set then.

// Mode is the version of the tools interface a process reports.
type Mode uint8

// Modes.
const (
	Mode52   Mode = iota // OpenMP 5.2 (default): the host is N, 5.x kinds, memset 8
	Mode60               // GOMPT_OMPT_VERSION=6.0: the host is -1 everywhere, transfer 7, rect 9, get_buffer_limits
	ModeLLVM             // GOMPT_TOOL_PROFILE=llvm: LLVM's runtime today: no target_map, the host -1 in data ops, 5.x kinds
)

var (
	// mode is the process's mode; set by Start before any tool is asked.
	mode = Mode52
	// llvmProfile is mode == ModeLLVM: target_map and target_map_emi,
	// which LLVM's runtime never dispatches, answer ompt_set_never and
	// are never dispatched.
	llvmProfile bool
	// initialDevice is the host's device number as tools see it outside
	// data operations: initial_device_num, a target construct on the
	// host, get_target_info. N (omp_get_initial_device) in 5.2 and the
	// LLVM profile, -1 (omp_initial_device) in 6.0. Set by Start.
	initialDevice int
	// hostN is N, the number of offload devices: the runtime's number of
	// the host in target constructs. Set by Start.
	hostN int
	// opHost is the host's number in data-op callbacks and records: N in
	// 5.2, -1 in 6.0 and the LLVM profile. Set by Start.
	opHost int
	// opKinds maps the runtime's data-op kinds (the 5.2 kinds, memset 8)
	// onto the mode's: the identity but in 6.0, whose copies are all
	// ompt_target_data_transfer (7, async 23).
	opKinds [32]ompt.DataOpKind
)

// RectAsOne reports whether a rectangular copy is one data operation of
// kind DataOpTransferRect whose addresses point to ompt.Subvolume values
// (6.0), rather than one transfer per contiguous piece (5.2, LLVM).
func RectAsOne() bool { return mode == Mode60 }

// ompVersion is the omp_version start functions get.
func ompVersion() int {
	if mode == Mode60 {
		return ompt.OMPVersion60
	}
	return ompt.OMPVersion
}

// setMode fixes the mode and the numbers it implies, N being the number
// of offload devices.
func setMode(m Mode, n int) {
	mode, llvmProfile, hostN = m, m == ModeLLVM, n
	initialDevice, opHost = n, n
	if m == Mode60 {
		initialDevice = ompt.InitialDevice
	}
	if m != Mode52 {
		opHost = ompt.InitialDevice
	}
	for i := range opKinds {
		opKinds[i] = ompt.DataOpKind(i)
	}
	if m == Mode60 {
		opKinds[ompt.DataOpTransferToDevice] = ompt.DataOpTransfer
		opKinds[ompt.DataOpTransferFromDevice] = ompt.DataOpTransfer
		opKinds[ompt.DataOpTransferToDeviceAsync] = ompt.DataOpTransferAsync
		opKinds[ompt.DataOpTransferFromDeviceAsync] = ompt.DataOpTransferAsync
	}
}

func init() { setMode(Mode52, 0) }

// opKind is the kind tools get for the runtime's kind k.
func opKind(k ompt.DataOpKind) ompt.DataOpKind {
	if uint(k) < uint(len(opKinds)) {
		return opKinds[k]
	}
	return k
}

// hostDev is the device number a tool sees for device n of a data
// operation: the runtime names the host ompt.InitialDevice (-1,
// omp_initial_device); tools get opHost.
func hostDev(n int) int {
	if n == ompt.InitialDevice {
		return opHost
	}
	return n
}

// toolDev is the device number a tool sees for a construct on device n
// (N for the host): initialDevice for the host.
func toolDev(n int) int {
	if n == hostN {
		return initialDevice
	}
	return n
}

// readMode reads GOMPT_OMPT_VERSION (5.2, the default, or 6.0) and
// GOMPT_TOOL_PROFILE (openmp, the default, or llvm), case-insensitive,
// blanks ignored. A bad value is a one-line warning naming the variable,
// the value and what it accepts, and the default; the LLVM profile
// follows LLVM's runtime, whose kinds are 5.x: with version 6.0 too, the
// profile wins, and a warning says so.
func readMode() Mode {
	rawV := getenv("GOMPT_OMPT_VERSION")
	v60 := false
	switch strings.ToLower(strings.TrimSpace(rawV)) {
	case "", "5.2":
	case "6.0":
		v60 = true
	default:
		fmt.Fprintf(stderr, "gompt: GOMPT_OMPT_VERSION=%q is not valid (use 5.2 or 6.0); using 5.2\n", rawV)
		vlogf("GOMPT_OMPT_VERSION = %q is not valid; using 5.2.", rawV)
	}
	rawP := getenv("GOMPT_TOOL_PROFILE")
	llvm := false
	switch strings.ToLower(strings.TrimSpace(rawP)) {
	case "", "openmp":
	case "llvm":
		llvm = true
	default:
		fmt.Fprintf(stderr, "gompt: GOMPT_TOOL_PROFILE=%q is not valid (use openmp or llvm); using openmp\n", rawP)
		vlogf("GOMPT_TOOL_PROFILE = %q is not valid; using openmp.", rawP)
	}
	switch {
	case llvm && v60:
		fmt.Fprintf(stderr, "gompt: GOMPT_TOOL_PROFILE=llvm follows LLVM's runtime, which reports OpenMP 5.x data-op kinds: GOMPT_OMPT_VERSION=%q is ignored\n", rawV)
		vlogf("GOMPT_TOOL_PROFILE = llvm with GOMPT_OMPT_VERSION = %q: the llvm profile, 5.x kinds.", rawV)
		return ModeLLVM
	case llvm:
		vlogf("GOMPT_TOOL_PROFILE = llvm: target_map and target_map_emi answer ompt_set_never, and the host is -1 in data operations, as in LLVM.")
		return ModeLLVM
	case v60:
		vlogf("GOMPT_OMPT_VERSION = 6.0: OpenMP 6.0's tools interface.")
		return Mode60
	}
	return Mode52
}

// bufferLimits is ompt_get_buffer_limits (6.0): the delivery goroutine
// holds one tool buffer per device at a time (it completes a full buffer
// before it requests the next), and a buffer of recommendedBufferBytes
// holds some 10,000 records, several batches of the record queue.
var bufferLimits = ompt.GetBufferLimitsFunc(func(dh *ompt.DeviceHandle) (int, uint64, bool) {
	if !traceable(devOf(dh)) {
		return 0, 0, false
	}
	return 1, recommendedBufferBytes, true
})

const recommendedBufferBytes = 1 << 20
