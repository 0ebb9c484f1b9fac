package device

import (
	"fmt"
	"strconv"
	"strings"
)

// Caps says what kernels may use on a device beyond what every device
// gives them (32- and 64-bit integers, float32, 32-bit atomics, barriers).
// Each plugin fills it in its devices' Info; Load refuses a kernel whose
// Needs the device cannot meet (CheckNeeds), before anything is copied.
type Caps struct {
	FP64         Feature // float64 arithmetic
	Int64Atomics Feature // 64-bit atomic add and compare-and-swap, in global and team-local memory
	LocalMem     Limit   // bytes of team-local memory one team may use
	TeamSize     Limit   // the most threads one team (work-group, block) may have
}

// Feature is one optional ability of a device, under the device's own
// name for it ("cl_khr_fp64"), which error messages and ompt-devinfo use.
type Feature struct {
	Has  bool
	Name string
}

// Limit is one limit of a device, and where its figure comes from
// ("CL_DEVICE_LOCAL_MEM_SIZE"), which error messages and ompt-devinfo
// show. N 0 means no such resource.
type Limit struct {
	N    int64
	From string
}

// NeedKind names what a kernel may need of a device (Need.Kind).
type NeedKind uint8

// NeedFP64 is float64 arithmetic (Caps.FP64).
const NeedFP64 NeedKind = 1

// NeedInt64Atomics is 64-bit atomics (Caps.Int64Atomics).
const NeedInt64Atomics NeedKind = 2

// NeedLocalMem is Need.Amount bytes of team-local memory (Caps.LocalMem).
const NeedLocalMem NeedKind = 3

// NeedTeamSize is teams of exactly Need.Amount threads (Caps.TeamSize):
// the device code is written for that team size (an OpenCL kernel's
// reqd_work_group_size), and every launch runs such teams
// (Kernel.TeamSize).
const NeedTeamSize NeedKind = 4

func (k NeedKind) String() string {
	switch k {
	case NeedFP64:
		return "fp64"
	case NeedInt64Atomics:
		return "int64 atomics"
	case NeedLocalMem:
		return "local memory"
	case NeedTeamSize:
		return "team size"
	}
	return "need(" + strconv.Itoa(int(k)) + ")"
}

// Need is one thing a kernel's device code needs of a device, with what in
// its source needs it, as gompt-kernels records it (Kernel.Needs).
type Need struct {
	Kind   NeedKind
	Amount int64  // bytes for NeedLocalMem, threads for NeedTeamSize; 0 otherwise
	Use    string // what needs it, in the source's terms: "float64", "atomic.AddUint64", "teams of 256 threads (team=256)"
	Pos    string // where in the source it is first needed: "nbody.go:31"; "" if unknown
}

// Lacks says what a device whose capabilities are c lacks to meet n
// ("has no cl_khr_fp64"), or "" if it meets it.
func (c Caps) Lacks(n Need) string {
	feature := func(f Feature, what string) string {
		if f.Has {
			return ""
		}
		if f.Name == "" {
			return "has no " + what
		}
		return "has no " + f.Name
	}
	limit := func(l Limit, unit string) string {
		if n.Amount <= l.N {
			return ""
		}
		s := "has at most " + strconv.FormatInt(l.N, 10) + " " + unit
		if l.From != "" {
			s += " (" + l.From + ")"
		}
		return s
	}
	switch n.Kind {
	case NeedFP64:
		return feature(c.FP64, "float64 arithmetic")
	case NeedInt64Atomics:
		return feature(c.Int64Atomics, "64-bit atomics")
	case NeedLocalMem:
		return limit(c.LocalMem, "bytes of team-local memory")
	case NeedTeamSize:
		return limit(c.TeamSize, "threads per team")
	}
	return "does not know what " + n.Kind.String() + " is"
}

// NeedError is the error of loading a kernel on a device that cannot run
// it: what the kernel needs, where its source first needs it, and what the
// device lacks. It matches ErrUnsupported, and is returned before anything
// is copied to the device.
type NeedError struct {
	Kernel string // the kernel's Name
	Need   Need
	Device string // "opencl:1"
	Name   string // the device's Info.Name
	Lacks  string // "has no cl_khr_fp64"
}

// Error reads "kernel Accel (nbody.go:31) uses float64; opencl:1
// (llvmpipe) has no cl_khr_fp64".
func (e *NeedError) Error() string {
	var sb strings.Builder
	sb.WriteString("kernel " + e.Kernel)
	if e.Need.Pos != "" {
		sb.WriteString(" (" + e.Need.Pos + ")")
	}
	use := e.Need.Use
	if use == "" {
		use = e.Need.Kind.String()
	}
	fmt.Fprintf(&sb, " uses %s; %s", use, e.Device)
	if e.Name != "" {
		sb.WriteString(" (" + e.Name + ")")
	}
	sb.WriteString(" " + e.Lacks)
	return sb.String()
}

// Is reports whether target is ErrUnsupported.
func (e *NeedError) Is(target error) bool { return target == ErrUnsupported }

// CheckNeeds returns nil if a device whose capabilities are c can run
// k, or a *NeedError for the first of k's Needs it cannot meet. id and
// name are the device's id ("opencl:1") and Info.Name.
func CheckNeeds(k *Kernel, id, name string, c Caps) error {
	for _, n := range k.Needs {
		if why := c.Lacks(n); why != "" {
			return &NeedError{Kernel: k.Name, Need: n, Device: id, Name: name, Lacks: why}
		}
	}
	return nil
}

// BuiltNeedError is the NeedError of kernel k, once built on device id
// (named name), asking amount of kind (a team size, team-local memory)
// beyond what lacks says the device gives it: where k declares a need of
// that kind, its use and source position, with the amount the built
// kernel asks; otherwise use. Plugins call it for what only the built
// kernel tells (its own team and local-memory limits).
func BuiltNeedError(k *Kernel, kind NeedKind, amount int64, use, id, name, lacks string) *NeedError {
	n := Need{Kind: kind, Amount: amount, Use: use}
	for _, kn := range k.Needs {
		if kn.Kind == kind {
			n.Pos = kn.Pos
			if kn.Amount == amount && kn.Use != "" {
				n.Use = kn.Use
			}
		}
	}
	return &NeedError{Kernel: k.Name, Need: n, Device: id, Name: name, Lacks: lacks}
}

// TeamSize returns the team size k's device code is written for (its
// NeedTeamSize), or 0 if it runs teams of any size.
func (k *Kernel) TeamSize() int {
	for _, n := range k.Needs {
		if n.Kind == NeedTeamSize {
			return int(n.Amount)
		}
	}
	return 0
}

// AllCaps is the capabilities of a device that runs Go images (the host
// device): every feature, no limit on team-local memory (a team array is
// Go memory), and teams of up to maxTeam threads.
func AllCaps(maxTeam int) Caps {
	return Caps{
		FP64:         Feature{Has: true, Name: "float64"},
		Int64Atomics: Feature{Has: true, Name: "sync/atomic"},
		LocalMem:     Limit{N: 1 << 62, From: "Go memory"},
		TeamSize:     Limit{N: int64(maxTeam), From: "MaxThreadsPerTeam"},
	}
}
