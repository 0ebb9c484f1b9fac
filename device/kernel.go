package device

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// ParamKind is the type of one kernel parameter: ParamBuffer, a device
// pointer (global memory), or a scalar passed by value (ParamInt32,
// ParamUint32, ParamInt64, ParamFloat32, ParamFloat64), which also names a
// typed buffer's elements (Param.Elem). Each constant is declared on its
// own so that `go doc device.ParamKind` lists them all.
type ParamKind uint8

// ParamBuffer is a buffer: a device pointer (__global T* in OpenCL C).
const ParamBuffer ParamKind = 1

// ParamInt32 is an int32 scalar (OpenCL C int).
const ParamInt32 ParamKind = 2

// ParamUint32 is a uint32 scalar (OpenCL C uint).
const ParamUint32 ParamKind = 3

// ParamInt64 is an int64 scalar (OpenCL C long).
const ParamInt64 ParamKind = 4

// ParamFloat32 is a float32 scalar (OpenCL C float).
const ParamFloat32 ParamKind = 5

// ParamFloat64 is a float64 scalar (OpenCL C double).
const ParamFloat64 ParamKind = 6

// ParamInt8 names int8 buffer elements (OpenCL C char). It is a buffer
// element type only (Param.Elem), as are ParamUint8, ParamInt16,
// ParamUint16 and ParamUint64: a scalar of those types is passed as a
// ParamInt32, ParamUint32 or ParamInt64 and converted in the device code.
const ParamInt8 ParamKind = 7

// ParamUint8 names uint8 (byte) buffer elements (OpenCL C uchar).
const ParamUint8 ParamKind = 8

// ParamInt16 names int16 buffer elements (OpenCL C short).
const ParamInt16 ParamKind = 9

// ParamUint16 names uint16 buffer elements (OpenCL C ushort).
const ParamUint16 ParamKind = 10

// ParamUint64 names uint64 buffer elements (OpenCL C ulong).
const ParamUint64 ParamKind = 11

var paramNames = [...]string{"", "buffer", "int32", "uint32", "int64", "float32", "float64",
	"int8", "uint8", "int16", "uint16", "uint64"}

func (k ParamKind) String() string {
	if int(k) < len(paramNames) && k > 0 {
		return paramNames[k]
	}
	return fmt.Sprintf("param(%d)", int(k))
}

// Size returns the size in bytes of a scalar of this kind as passed to a
// device kernel (8 for a buffer pointer), or of one buffer element of an
// element-only kind (1 for ParamInt8).
func (k ParamKind) Size() int {
	switch k {
	case ParamInt8, ParamUint8:
		return 1
	case ParamInt16, ParamUint16:
		return 2
	case ParamInt32, ParamUint32, ParamFloat32:
		return 4
	default:
		return 8
	}
}

// ElemOnly reports whether k names buffer elements only (ParamInt8,
// ParamUint8, ParamInt16, ParamUint16, ParamUint64): a kind no scalar
// parameter has.
func (k ParamKind) ElemOnly() bool { return k >= ParamInt8 && k <= ParamUint64 }

// Param describes one kernel parameter.
type Param struct {
	Name string
	Kind ParamKind

	// Elem is the element type of a buffer parameter (ParamFloat32 for
	// float*); 0 for scalars. The runtime passes such a buffer only a
	// slice of the matching Go type (float32, float64, int8, uint8, int16,
	// uint16, int32, uint32, int64 or int, uint64 or uint, or a type
	// defined on one of them). Elem 0 on a buffer makes it untyped (void*,
	// uchar*): any slice of a pointer-free element type is passed, and Len
	// counts bytes.
	Elem ParamKind

	// Len is how many elements a buffer parameter must hold for a launch:
	// as many as the device code may read or write. It is a sum and
	// difference ('+', '-') of products ('*') of terms, with Go's
	// precedence and no parentheses; a term is a whole number, the name of
	// an integer scalar parameter (its value in the launch), Shape.Size[0],
	// Shape.Size[1] or Shape.Size[2] (1 for a dimension not in use), or
	// Shape.Teams (which the launch must then set): "n", "m*k", "2*n",
	// "rows+1", "n-1", "m*k+n", "Shape.Teams". Its value is the expression's
	// as Go computes it on int64s (two negative factors make a positive
	// product); a value of 0 or less makes the length 0, a value (or a
	// part of one) outside an int64 is an error. The runtime refuses a
	// launch whose buffer is shorter, on every device, before any device
	// work. Empty means undeclared: the runtime cannot check the buffer,
	// and device code that indexes past it corrupts memory, so declare it.
	// Scalars leave it empty.
	Len string
}

// ElemSize returns the size in bytes of one element of buffer parameter p:
// 4 or 8 for a typed buffer, 1 for an untyped one (Elem 0).
func (p Param) ElemSize() int {
	if p.Elem == 0 {
		return 1
	}
	return p.Elem.Size()
}

// Arg is one argument of a launch: a device pointer for a buffer parameter,
// or the bits of a scalar (float32 and float64 as their IEEE bits, integers
// zero- or sign-extended into the 64 bits).
type Arg struct {
	Ptr  DevicePtr
	Bits uint64
}

// Float32 returns the argument's bits as a float32.
func (a Arg) Float32() float32 { return math.Float32frombits(uint32(a.Bits)) }

// Float64 returns the argument's bits as a float64.
func (a Arg) Float64() float64 { return math.Float64frombits(a.Bits) }

// ImageKind names the form of a kernel image: the name of a format, such
// as "host" (ImageHost) or a name a plugin chose for the code its devices
// build ("opencl-c": OpenCL C source, "ptx": PTX text; each plugin's
// package declares its kinds as constants, and its Registration.Images
// lists them). A kind is only a name: a plugin with a new format picks
// one and lists it, and nothing here changes. Kernels carry images of
// the kinds they were written for; a device loads the first of its kinds
// a kernel has.
type ImageKind string

// ImageHost is a Go function (Image.Host, a HostFunc): the image the host
// device and the initial device run.
const ImageHost ImageKind = "host"

func (k ImageKind) String() string { return string(k) }

// Image is one form of a kernel's code. Source holds the text of a source
// image (OpenCL C, PTX); Host holds a Go function (an ImageHost image's,
// or one of a plugin's own kind that runs Go). An image with neither is
// empty: no device loads it.
// Entry is the function's name inside Source (the kernel's Name when
// empty). Options are build options of a source image, handed to the
// plugin's compiler as they are ("-cl-fp32-correctly-rounded-divide-sqrt"
// to clBuildProgram); a plugin whose compiler takes none ignores them.
type Image struct {
	Kind    ImageKind
	Entry   string
	Source  string
	Host    HostFunc
	Options string
}

// Kernel is one named kernel with several images that all compute the same
// result. A Kernel is immutable once built and may be shared by goroutines
// and devices; plugins cache what they build from it keyed by its pointer.
type Kernel struct {
	Name   string
	Params []Param
	Images []Image

	// Dims is the number of dimensions of the iteration space the device
	// code and the Go image iterate over (1 to 3; 0 means 1). The runtime
	// refuses a launch shape that uses more: the images would split the
	// extra dimensions differently.
	Dims int

	// Extents, when not nil, are the kernel's points: for each dimension
	// it iterates over (Dims of them, Size[0]'s first), the index in
	// Params of the integer scalar parameter whose value is its extent
	// there ([]int{0} for a kernel over [0, n) whose first parameter is
	// n). Such a kernel's device code runs the points [0, extent 0) x
	// [0, extent 1) ... whatever the launch shape's Size (it strides over
	// them, and guards a larger Size), and its Go image runs the Size's
	// points clamped to them. So the runtime launches it with its Size
	// set to the extents (FitExtents), and every device runs the same
	// points, split alike among teams: a Shape's Size is then a hint, as
	// its Teams and Threads are. gompt-kernels writes them, and its
	// launchers pass Size equal to them. A hand-written kernel whose
	// device code iterates over Size leaves them nil. A plugin's Launch
	// does not read them.
	Extents []int

	// MaxThreads, when not 0, is the largest team size the device code
	// supports (a kernel with a fixed-size local scratch array, say).
	MaxThreads int

	// Work, when not empty, is about how many times one point's inner
	// loops run, as an expression of Param.Len's form over the integer
	// scalar parameters ("n", "m*k+n"): gompt-kernels writes it for a
	// point with loops. A runtime that chooses the number of teams
	// (Shape.Teams 0) weighs the points by it (PointWork), so that a few
	// heavy points still spread over the cores. Empty is one.
	Work string

	// Bounds are int expressions of Param.Len's form over the integer
	// scalar parameters that must fit an int64 in a launch: bounds of
	// loops and slice expressions that the device code's dropped bounds
	// checks rely on (n-1 in for j := 0; j < n-1; j++, which for n at
	// math.MinInt is math.MaxInt in Go, and the loop then runs past every
	// buffer's end; m*k in b[0:m*k]). The runtime refuses a launch in
	// which one does not (CheckBounds), before any device work, as it
	// refuses a Len that leaves an int64. gompt-kernels writes them; most
	// kernels have none.
	Bounds []string

	// Faults lists the run-time checks the kernel's code makes (buffer
	// indices, integer divisors), as gompt-kernels generates them; nil
	// for a kernel that makes none. When it is not empty, the OpenCL C
	// and PTX images take one argument more than Params, last: a
	// __global long* to a fault record of FaultRecordSize bytes, which
	// the plugin passes zeroed and reads back once the kernel has run: a
	// failed check fails the launch (reported by the queue's Sync) with
	// a *KernelFault. The Go image reports a failed check by panicking
	// with the *KernelFault. Callers of Launch pass Params' arguments
	// only.
	Faults []FaultSite

	// Needs lists what the device code needs of a device beyond what every
	// device gives (Caps): float64, 64-bit atomics, team-local memory, a
	// fixed team size, each with where the Go source first needs it, as
	// gompt-kernels records them. A device that cannot meet one refuses
	// the kernel at load with a *NeedError (CheckNeeds), before anything
	// is copied. A kernel with a NeedTeamSize runs teams of exactly that
	// size on every device (TeamSize). Hand-written kernels may declare
	// theirs; undeclared needs surface as the driver's build or launch
	// errors.
	Needs []Need

	// Sample, when not nil, returns a representative problem of about n
	// iterations, deterministic for (n, seed): the launch shape, the
	// initial contents of each buffer parameter (nil for scalars) and the
	// scalar arguments (zero for buffers). devicetest runs it on a device
	// and on the Go image and compares every buffer afterwards, so a
	// user's own kernels get the same conformance check as the library's.
	Sample func(n int, seed int64) Sample
}

// Sample is one problem instance of a kernel; see Kernel.Sample.
type Sample struct {
	Shape Shape
	Bufs  [][]byte
	Args  []Arg
	// Tol is the relative tolerance for comparing floating-point buffer
	// elements (0 means exact).
	Tol float64
}

// DeviceParams returns the parameters of k's OpenCL C and PTX entry
// points: Params, and for a checked kernel (Faults) the fault record after
// them, a buffer of four int64 named gompt_fault.
func (k *Kernel) DeviceParams() []Param {
	if !k.Checked() {
		return k.Params
	}
	return append(k.Params[:len(k.Params):len(k.Params)], FaultParam)
}

// FaultParam is the last parameter of a checked kernel's device code:
// its fault record (see Kernel.Faults).
var FaultParam = Param{Name: "gompt_fault", Kind: ParamBuffer, Elem: ParamInt64, Len: "4"}

// Image returns k's image of the given kind, if it has one.
func (k *Kernel) Image(kind ImageKind) (*Image, bool) {
	for i := range k.Images {
		if k.Images[i].Kind == kind {
			return &k.Images[i], true
		}
	}
	return nil, false
}

// Host returns k's Go image, or nil.
func (k *Kernel) Host() HostFunc {
	if img, ok := k.Image(ImageHost); ok {
		return img.Host
	}
	return nil
}

// CheckArgs reports an error naming the first argument that does not fit
// k's parameters. It does not check that buffer pointers are valid.
func (k *Kernel) CheckArgs(args []Arg) error {
	if len(args) != len(k.Params) {
		return fmt.Errorf("kernel %s takes %d arguments (%s), got %d", k.Name, len(k.Params), k.signature(), len(args))
	}
	for i, p := range k.Params {
		if p.Kind == ParamBuffer && args[i].Ptr == 0 {
			return fmt.Errorf("kernel %s argument %d (%s): nil device pointer", k.Name, i, p.Name)
		}
	}
	return nil
}

func (k *Kernel) signature() string {
	s := ""
	for i, p := range k.Params {
		if i > 0 {
			s += ", "
		}
		s += p.Name + " " + p.Kind.String()
	}
	return s
}

// Shape is the launch shape of a target region: an iteration space of up to
// three dimensions (Size[0] varies fastest, as OpenCL's dimension 0), and the
// requested numbers of teams and threads per team; 0 lets the plugin choose.
// Device code iterates over Size with grid-stride loops, so any number of
// teams and threads computes the same result. A kernel with Extents has
// its own points; package target sets Size to them (Kernel.Extents).
type Shape struct {
	Size    [3]int
	Teams   int
	Threads int
}

// Dims returns the number of dimensions in use (1 to 3).
func (s Shape) Dims() int {
	switch {
	case s.Size[2] > 1:
		return 3
	case s.Size[1] > 1:
		return 2
	}
	return 1
}

// Iterations returns the product of the sizes in use.
func (s Shape) Iterations() int {
	n := 1
	for d := 0; d < s.Dims(); d++ {
		n *= s.Size[d]
	}
	return n
}

// Check reports an error for a shape with a zero or negative size (a
// dimension below the last one in use counts as in use), sizes whose
// product (Iterations) does not fit an int, or negative teams or threads.
func (s Shape) Check() error { return CheckShape(&s) }

// CheckShape is s.Check() for a shape the caller holds by pointer. It is
// what runtimes call on their launch path: it reads the fields in place
// instead of copying the shape, whose 40 bytes, copied again from a copy
// just written, stall the processor on store forwarding.
func CheckShape(s *Shape) error {
	// The common shape, checked in a few instructions: every size in
	// 1..fastSize (so the product fits an int), teams and threads not
	// negative.
	if uint(s.Size[0]-1) < fastSize && uint(s.Size[1]-1) < fastSize && uint(s.Size[2]-1) < fastSize && s.Teams|s.Threads >= 0 {
		return nil
	}
	return s.check()
}

// fastSize bounds each size of the shapes CheckShape passes without
// computing their product: 2^20 on 64-bit machines, 2^9 where an int has
// 32 bits, so that three such sizes multiply within an int.
const fastSize = 1 << (bits.UintSize/3 - 1)

func (s *Shape) check() error {
	if s.Size[0] <= 0 {
		return fmt.Errorf("launch shape: size %v: dimension 0 must be at least 1", s.Size)
	}
	for d := 1; d < 3; d++ {
		if s.Size[d] < 0 {
			return fmt.Errorf("launch shape: size %v: dimension %d is negative", s.Size, d)
		}
		if s.Size[d] == 0 && d < s.Dims()-1 {
			return fmt.Errorf("launch shape: size %v: dimension %d is 0 while dimension %d is in use; use 1 for an unused dimension", s.Size, d, s.Dims()-1)
		}
	}
	if s.Teams < 0 || s.Threads < 0 {
		return fmt.Errorf("launch shape: teams %d, threads %d: must be 0 (runtime picks) or positive", s.Teams, s.Threads)
	}
	n := uint64(s.Size[0])
	for d, dims := 1, s.Dims(); d < dims; d++ {
		hi, lo := bits.Mul64(n, uint64(s.Size[d]))
		if hi != 0 || lo > math.MaxInt {
			return fmt.Errorf("launch shape: size %v: more iterations than an int counts (%d)", s.Size, math.MaxInt)
		}
		n = lo
	}
	return nil
}

// Range is a box of a kernel's iteration space, [Lo, Hi) in each dimension.
type Range struct {
	Lo, Hi [3]int
}

// HostFunc is a kernel's Go image. It computes the iterations in r, and is
// called once per team: team is the team number in [0, teams). Calls for
// different teams run concurrently; together their ranges cover the
// iteration space exactly once. a holds the arguments, buffers as host
// memory (the device's own on an offload device, the program's slices on
// the initial device).
type HostFunc func(a *HostArgs, r Range, team, teams int)

// HostArgs are the arguments of a HostFunc, by position (Bufs, Args, and
// the methods F32, Int... taking a parameter's index) or by name (Slice
// and Value, which need Kernel).
type HostArgs struct {
	Bufs [][]byte // per parameter; nil for scalars
	Args []Arg    // per parameter; scalar bits

	// Kernel is the kernel being run; the runtime and the host device set
	// it, so that Slice and Value find parameters by name.
	Kernel *Kernel
}

// index returns the position of k's parameter name; it panics (which the
// runtime reports as the launch's error) when there is none, naming the
// parameters there are.
func (a *HostArgs) index(name string, want string) int {
	if a.Kernel == nil {
		panic("device: HostArgs has no Kernel: cannot find parameter " + name + " by name")
	}
	for i := range a.Kernel.Params {
		if a.Kernel.Params[i].Name == name {
			if (a.Kernel.Params[i].Kind == ParamBuffer) != (want == "buffer") {
				panic(fmt.Sprintf("kernel %s: parameter %s is a %s, not a %s", a.Kernel.Name, name, a.Kernel.Params[i].Kind, want))
			}
			return i
		}
	}
	panic(fmt.Sprintf("kernel %s has no parameter %q (its parameters: %s)", a.Kernel.Name, name, a.Kernel.signature()))
}

// Slice returns buffer parameter name of a Go image's arguments as a []T:
// device.Slice[float32](a, "x"). It panics, failing the launch with a
// message, when the kernel has no buffer parameter so named, or when T's
// size is not that of the buffer's element type (4 for ParamFloat32);
// any T goes for an untyped buffer (Elem 0).
func Slice[T any](a *HostArgs, name string) []T {
	i := a.index(name, "buffer")
	var z T
	if p := a.Kernel.Params[i]; p.Elem != 0 && p.Elem.Size() != int(unsafe.Sizeof(z)) {
		panic(fmt.Sprintf("kernel %s: buffer %s holds %s elements (%d bytes), not %T (%d bytes)", a.Kernel.Name, name, p.Elem, p.Elem.Size(), z, unsafe.Sizeof(z)))
	}
	return view[T](a.Bufs[i])
}

// Scalar is the Go type of a scalar argument read with Value.
type Scalar interface {
	~int | ~int32 | ~uint32 | ~int64 | ~float32 | ~float64
}

// Value returns scalar parameter name of a Go image's arguments as a T:
// device.Value[int](a, "n"), device.Value[float32](a, "alpha"). Integers
// are converted from the parameter's kind (an int32 or int64 is sign-,
// a uint32 zero-extended), floats from their bits; asking for a float of
// an integer parameter, or an integer of a float one, panics, failing the
// launch with a message, as does a name the kernel does not have.
func Value[T Scalar](a *HostArgs, name string) T {
	i := a.index(name, "scalar")
	k := a.Kernel.Params[i].Kind
	bits := a.Args[i].Bits
	var z T
	isFloat := k == ParamFloat32 || k == ParamFloat64
	switch any(z).(type) {
	case float32, float64:
		if !isFloat {
			panic(fmt.Sprintf("kernel %s: parameter %s is of kind %s, not %T", a.Kernel.Name, name, k, z))
		}
	default:
		if isFloat {
			panic(fmt.Sprintf("kernel %s: parameter %s is of kind %s, not %T", a.Kernel.Name, name, k, z))
		}
	}
	switch k {
	case ParamFloat32:
		return T(math.Float32frombits(uint32(bits)))
	case ParamFloat64:
		return T(math.Float64frombits(bits))
	case ParamInt32:
		return T(int32(bits))
	case ParamUint32:
		return T(uint32(bits))
	}
	return T(int64(bits))
}

// BufferParam returns a buffer parameter: name, the element type (0 for
// an untyped buffer) and Len, how many elements the device code touches
// ("n", "nx*ny"; see Param.Len).
func BufferParam(name string, elem ParamKind, len string) Param {
	return Param{Name: name, Kind: ParamBuffer, Elem: elem, Len: len}
}

// ScalarParam returns a scalar parameter of the given kind.
func ScalarParam(name string, kind ParamKind) Param {
	return Param{Name: name, Kind: kind}
}

// Clamp returns [lo, hi) of dimension d of r limited to [0, n), as a
// device loop "for (i = id; i < n; ...)" limits it; a negative n counts
// as 0. A Go image computes r.Clamp(0, n) of its range.
func (r Range) Clamp(d, n int) (lo, hi int) {
	n = max(n, 0)
	lo = min(max(r.Lo[d], 0), n)
	hi = min(max(r.Hi[d], lo), n)
	return lo, hi
}

// F32 returns buffer argument i as []float32.
func (a *HostArgs) F32(i int) []float32 { return view[float32](a.Bufs[i]) }

// F64 returns buffer argument i as []float64.
func (a *HostArgs) F64(i int) []float64 { return view[float64](a.Bufs[i]) }

// I32 returns buffer argument i as []int32.
func (a *HostArgs) I32(i int) []int32 { return view[int32](a.Bufs[i]) }

// U32 returns buffer argument i as []uint32.
func (a *HostArgs) U32(i int) []uint32 { return view[uint32](a.Bufs[i]) }

// Bytes returns buffer argument i as bytes.
func (a *HostArgs) Bytes(i int) []byte { return a.Bufs[i] }

// Int returns scalar argument i as a signed integer.
func (a *HostArgs) Int(i int) int { return int(int64(a.Args[i].Bits)) }

// Float32 returns scalar argument i as a float32.
func (a *HostArgs) Float32(i int) float32 { return a.Args[i].Float32() }

// Float64 returns scalar argument i as a float64.
func (a *HostArgs) Float64(i int) float64 { return a.Args[i].Float64() }

func view[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Bytes returns the memory of s as bytes, without copying. The result
// aliases s.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return s2b(s)
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

func s2b[T any](s []T) []byte {
	if s == nil {
		return nil
	}
	return []byte{}
}
