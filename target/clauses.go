package target

import (
	"fmt"
	"math"

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
type DeviceClause struct {
	n   int
	set bool
}

// Dev returns the device clause device(n): n is 0..NumDevices()-1, or
// InitialDevice or NumDevices() for the initial device, or DefaultDevice.
func Dev(n int) DeviceClause { return DeviceClause{n: n, set: true} }

// Num returns the device number the clause names, DefaultDevice for the
// zero DeviceClause; the functions that take a device number accept it.
func (c DeviceClause) Num() int {
	if !c.set {
		return DefaultDevice
	}
	return c.n
}

// String formats the clause as "device(1)", or "no device clause".
func (c DeviceClause) String() string {
	if !c.set {
		return "no device clause"
	}
	return fmt.Sprintf("device(%d)", c.n)
}

// Region is a target construct: a kernel run on a device over a shape,
// with map clauses and arguments (one per kernel parameter, in order).
type Region struct {
	// Device is the device clause: Dev(n) for device n (Dev(0) for
	// device 0), Dev(InitialDevice) for the initial device. The zero
	// value runs on the default device (OMP_DEFAULT_DEVICE,
	// SetDefaultDevice).
	Device DeviceClause
	Kernel *Kernel
	Shape  Shape
	Maps   []Map
	Args   []Arg
}
