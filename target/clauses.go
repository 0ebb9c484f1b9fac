package target

import (
	"fmt"
	"math"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
)

// Kernel is a kernel with several images; see package kernels.
type Kernel = device.Kernel

// Shape is a launch shape: iteration space, teams and threads.
type Shape = device.Shape

// DevicePtr is an address in a device's memory.
type DevicePtr = device.DevicePtr

// N returns a one-dimensional shape of n iterations.
func N(n int) Shape { return Shape{Size: [3]int{n, 1, 1}} }

// N2 returns a two-dimensional shape; x varies fastest.
func N2(x, y int) Shape { return Shape{Size: [3]int{x, y, 1}} }

// Map is one list item of a map clause (or of a motion clause of Update).
// Build it with To, From, ToFrom, Alloc, Release or Delete. The same list
// also takes the items of a depend clause (DependIn, DependOut,
// DependInOut, DependOn), which map nothing and order the construct. Only slices of
// pointer-free element types can be mapped: a construct given a map of
// another type (pointers, strings, slices, interfaces, or structs holding
// them) fails before any device work, naming the type.
type Map struct {
	item mapping.Item
	bad  *elemType // T, when it holds Go pointers
	dep  depKind   // a depend list item (DependIn, ...), not a map item
	task *Task     // DependOn's task
}

func newMap[T any](s []T, t mapping.Type) Map {
	return Map{item: mapping.Item{Host: device.Bytes(s), Type: t}, bad: badElem[T]()}
}

// To maps s to the device: copied in when it becomes present.
func To[T any](s []T) Map { return newMap(s, mapping.To) }

// From maps s from the device: copied out when it stops being present.
func From[T any](s []T) Map { return newMap(s, mapping.From) }

// ToFrom maps s both ways.
func ToFrom[T any](s []T) Map { return newMap(s, mapping.ToFrom) }

// Alloc maps s without copying.
func Alloc[T any](s []T) Map { return newMap(s, mapping.Alloc) }

// Release decrements s's reference count (exit data).
func Release[T any](s []T) Map { return newMap(s, mapping.Release) }

// Delete sets s's reference count to zero and unmaps it (exit data).
func Delete[T any](s []T) Map { return newMap(s, mapping.Delete) }

// Always returns m with the always modifier: copies happen even when the
// item is already present or stays present.
func (m Map) Always() Map { m.item.Always = true; return m }

// Present returns m with the present modifier: the item must already be
// present, or the construct fails.
func (m Map) Present() Map { m.item.Present = true; return m }

// Named returns m labelled for error messages and GOMPT_INFO ("a", "x[2:]").
func (m Map) Named(name string) Map { m.item.Name = name; return m }

type argKind uint8

const (
	argScalar argKind = iota + 1
	argSlice
	argPtr
)

// Arg is one kernel argument: a slice (its device copy inside the region),
// a device pointer, or a scalar. The zero Arg is none of these, and a
// region with one fails.
type Arg struct {
	kind   argKind
	scalar device.ParamKind // for a scalar: ParamInt64, ParamFloat32 or ParamFloat64
	host   []byte
	et     *elemType // a slice's element type
	bits   uint64
	ptr    DevicePtr
}

// Slice passes s to the kernel as its device address in the region. If s
// is not mapped by the construct and not already present, it is mapped
// tofrom for the region, as OpenMP maps arrays used in a target region.
// T must be the parameter's element type (float32 for a ParamFloat32
// buffer, or a type defined on it), or any pointer-free type for an untyped
// buffer; s must hold at least the parameter's Len elements.
func Slice[T any](s []T) Arg { return Arg{kind: argSlice, host: device.Bytes(s), et: elemOf[T]()} }

// Ptr passes a device pointer from AllocMem as is (is_device_ptr). The
// runtime knows no element type for it; where it knows the allocation (from
// AllocMem, or a mapped buffer) it checks that the bytes from p to its end
// hold the parameter's Len elements.
func Ptr(p DevicePtr) Arg { return Arg{kind: argPtr, ptr: p} }

// Int passes an integer scalar (int32, uint32 or int64 parameters). A value
// outside the parameter's range is an error.
func Int(v int) Arg { return Arg{kind: argScalar, scalar: device.ParamInt64, bits: uint64(int64(v))} }

// Float32 passes a float32 scalar.
func Float32(v float32) Arg {
	return Arg{kind: argScalar, scalar: device.ParamFloat32, bits: uint64(math.Float32bits(v))}
}

// Float64 passes a float64 scalar.
func Float64(v float64) Arg {
	return Arg{kind: argScalar, scalar: device.ParamFloat64, bits: math.Float64bits(v)}
}

// DeviceClause is a construct's device clause. The zero DeviceClause is
// no clause: the construct runs on the default device (the
// default-device ICV: OMP_DEFAULT_DEVICE, SetDefaultDevice), as in
// OpenMP. Dev(n) names device n explicitly, device 0 included.
//
// It also carries the clauses of the teams construct that a combined
// target teams construct adds, num_teams and thread_limit (NumTeams,
// ThreadLimit), so that a generated launcher, whose first argument is a
// DeviceClause, takes them too: launch.RunMatmul(target.Dev(0).NumTeams(64), ...).
type DeviceClause struct {
	n   int
	set bool

	teams, threads       int // num_teams and thread_limit, where given
	hasTeams, hasThreads bool
}

// Dev returns the device clause device(n): n is 0..NumDevices()-1, or
// InitialDevice or NumDevices() for the initial device, or DefaultDevice.
func Dev(n int) DeviceClause { return DeviceClause{n: n, set: true} }

// NumTeams returns c with the clause num_teams(n): the target region runs
// exactly n teams (OpenMP's num_teams with its upper bound only, whose
// lower bound is the same), as Shape.Teams n does. n must be positive; a
// Region that also sets Shape.Teams must set it to n.
func (c DeviceClause) NumTeams(n int) DeviceClause {
	c.teams, c.hasTeams = n, true
	return c
}

// ThreadLimit returns c with the clause thread_limit(n): each team runs
// at most n threads, Shape.Threads where that is less or 0. n must be
// positive. A kernel whose teams have a fixed size (Kernel.TeamSize)
// larger than n cannot run under it: the construct fails.
func (c DeviceClause) ThreadLimit(n int) DeviceClause {
	c.threads, c.hasThreads = n, true
	return c
}

// Teams returns the value of c's num_teams clause, 0 where it has none.
func (c DeviceClause) Teams() int { return c.teams }

// Threads returns the value of c's thread_limit clause, 0 where it has
// none.
func (c DeviceClause) Threads() int { return c.threads }

// Num returns the device number the clause names, DefaultDevice for the
// zero DeviceClause; the functions that take a device number accept it.
func (c DeviceClause) Num() int {
	if !c.set {
		return DefaultDevice
	}
	return c.n
}

// String formats the clauses: "device(1)", "device(1) num_teams(64)
// thread_limit(128)", "num_teams(8)", or "no device clause".
func (c DeviceClause) String() string {
	var parts []string
	if c.set {
		parts = append(parts, fmt.Sprintf("device(%d)", c.n))
	}
	if c.hasTeams {
		parts = append(parts, fmt.Sprintf("num_teams(%d)", c.teams))
	}
	if c.hasThreads {
		parts = append(parts, fmt.Sprintf("thread_limit(%d)", c.threads))
	}
	if len(parts) == 0 {
		return "no device clause"
	}
	return strings.Join(parts, " ")
}

// teamsClauses applies r.Device's num_teams and thread_limit to r.Shape
// (NumTeams, ThreadLimit), or says what is wrong with them.
func teamsClauses(r *Region) error {
	c, s := &r.Device, &r.Shape
	if c.hasTeams {
		switch {
		case c.teams <= 0:
			return fmt.Errorf("target: kernel %s: num_teams(%d): the number of teams must be positive", kernelName(r), c.teams)
		case s.Teams == 0:
			s.Teams = c.teams
		case s.Teams != c.teams:
			return fmt.Errorf("target: kernel %s: num_teams(%d), but the launch shape asks for %d teams (Shape.Teams); give one or make them agree (a generated launcher sets it: a team kernel's teams are its work, and a reduction takes at most kernelrt.MaxClauseTeams from num_teams)", kernelName(r), c.teams, s.Teams)
		}
	}
	if c.hasThreads {
		if c.threads <= 0 {
			return fmt.Errorf("target: kernel %s: thread_limit(%d): the limit must be positive", kernelName(r), c.threads)
		}
		if r.Kernel != nil {
			if t := r.Kernel.TeamSize(); t > c.threads {
				return fmt.Errorf("target: kernel %s: thread_limit(%d), but the kernel runs teams of exactly %d threads (Kernel.TeamSize)", r.Kernel.Name, c.threads, t)
			}
		}
		if s.Threads == 0 || s.Threads > c.threads {
			s.Threads = c.threads
		}
	}
	return nil
}

func kernelName(r *Region) string {
	if r.Kernel == nil {
		return "(none)"
	}
	return r.Kernel.Name
}

// Region is a target construct: a kernel run on a device over a shape,
// with map clauses and arguments (one per kernel parameter, in order).
type Region struct {
	// Device is the device clause: Dev(n) for device n (Dev(0) for
	// device 0), Dev(InitialDevice) for the initial device. The zero
	// value runs on the default device (OMP_DEFAULT_DEVICE,
	// SetDefaultDevice). Its num_teams and thread_limit, where given
	// (DeviceClause.NumTeams, ThreadLimit), set Shape.Teams and cap
	// Shape.Threads.
	Device DeviceClause
	Kernel *Kernel
	// Shape is the launch shape. For a kernel with Extents (every
	// generated kernel) its Size is set to the kernel's extents, so every
	// device runs the same points, split alike among teams.
	Shape Shape
	Maps  []Map
	Args  []Arg
}
