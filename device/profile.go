package device

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// NativeKind names the type of a plugin's native trace record: each
// plugin registers its own (RegisterNative), and the runtime hands the
// records on as bytes that a tool reads as that type (ompt_record_native's
// payload).
type NativeKind uint8

// NativeNone is the kind of no record.
const NativeNone NativeKind = 0

// NativeType describes a registered native record type: what a tool that
// does not import the plugin needs to read its records (Field), and what
// a Go tool that does reads them with (RecordOf).
type NativeType struct {
	Kind   NativeKind
	Name   string // the name it was registered under: its plugin's
	Size   int    // bytes
	Fields []NativeField
	goType reflect.Type
	check  func(Native) error
}

// NativeField is one field of a native record: its Go name, where it is,
// and how its bits read.
type NativeField struct {
	Name   string // "Start"
	Offset int
	Size   int  // bytes: 1, 2, 4 or 8
	Signed bool // a signed integer
	Float  bool // a float32 or float64
}

// String lists t's fields: "host {Start int64 @0, End int64 @8, Queue
// uint64 @16}".
func (t NativeType) String() string {
	var b strings.Builder
	b.WriteString(t.Name + " {")
	for i, f := range t.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		kind := "uint"
		switch {
		case f.Float:
			kind = "float"
		case f.Signed:
			kind = "int"
		}
		fmt.Fprintf(&b, "%s %s%d @%d", f.Name, kind, 8*f.Size, f.Offset)
	}
	b.WriteString("}")
	return b.String()
}

// Field returns the bits of field name of record b, a record of type t,
// widened to 64 bits (sign-extended for a signed integer), and whether
// t has that field and b holds it.
func (t NativeType) Field(b []byte, name string) (uint64, bool) {
	for _, f := range t.Fields {
		if f.Name != name || f.Offset+f.Size > len(b) {
			continue
		}
		var v uint64
		for i := f.Size - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[f.Offset+i])
		}
		if f.Signed && f.Size < 8 && v>>(8*f.Size-1)&1 == 1 {
			v |= ^uint64(0) << (8 * f.Size)
		}
		return v, true
	}
	return 0, false
}

// Check reports the first way n, a record of type t, breaks the rules its
// plugin registered for it (the check given to RegisterNative), beyond
// what devicetest checks of every record: Start and End equal to the
// operation's times.
func (t NativeType) Check(n Native) error {
	if t.check == nil {
		return nil
	}
	return t.check(n)
}

var (
	nativeMu    sync.Mutex
	nativeTable atomic.Pointer[[]NativeType] // by kind; index 0 is NativeNone's
)

func nativeTypes() []NativeType {
	if p := nativeTable.Load(); p != nil {
		return *p
	}
	return nil
}

// maxNative is the size of the largest native record: a Native holds it
// in four words.
const maxNative = 32

// RegisterNative registers R, a plugin's native record type, under name
// (the plugin's), and returns its kind; a plugin calls it once, for a
// package-level variable. R must be a struct of integer and float fields
// (no pointers), at most 32 bytes, with fields Start and End of 64 bits:
// the operation's interval on the device clock (Device.Now ns). check,
// when not nil, says what else a record of the plugin must satisfy
// (devicetest calls it through NativeType.Check). It panics on any other
// R, or an R registered before.
func RegisterNative[R any](name string, check func(r R, n Native) error) NativeKind {
	typ := reflect.TypeFor[R]()
	if typ.Kind() != reflect.Struct || typ.Size() > maxNative || typ.Size() == 0 {
		panic(fmt.Sprintf("device: RegisterNative(%q): %v is not a struct of at most %d bytes", name, typ, maxNative))
	}
	t := NativeType{Name: name, Size: int(typ.Size()), goType: typ}
	for i := range typ.NumField() {
		f := typ.Field(i)
		nf := NativeField{Name: f.Name, Offset: int(f.Offset), Size: int(f.Type.Size())}
		switch f.Type.Kind() {
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			nf.Signed = true
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		case reflect.Float32, reflect.Float64:
			nf.Float = true
		default:
			panic(fmt.Sprintf("device: RegisterNative(%q): field %s of %v is a %v; want fixed-size integers and floats", name, f.Name, typ, f.Type))
		}
		t.Fields = append(t.Fields, nf)
	}
	for _, want := range []string{"Start", "End"} {
		f, ok := typ.FieldByName(want)
		if !ok || f.Type.Size() != 8 || f.Type.Kind() == reflect.Float64 {
			panic(fmt.Sprintf("device: RegisterNative(%q): %v has no 64-bit integer field %s (the operation's interval on the device clock)", name, typ, want))
		}
	}
	if check != nil {
		t.check = func(n Native) error {
			r, ok := RecordOf[R](n)
			if !ok {
				return fmt.Errorf("native record of kind %d is not a %v", n.Kind, typ)
			}
			return check(r, n)
		}
	}
	nativeMu.Lock()
	defer nativeMu.Unlock()
	old := nativeTypes()
	if len(old) == 0 {
		old = []NativeType{{Name: "none"}}
	}
	for _, o := range old[1:] {
		if o.goType == typ {
			panic(fmt.Sprintf("device: RegisterNative(%q): %v is registered already, as %q", name, typ, o.Name))
		}
	}
	if len(old) > 255 {
		panic("device: RegisterNative: more than 255 native record types")
	}
	t.Kind = NativeKind(len(old))
	ts := append(old[:len(old):len(old)], t)
	nativeTable.Store(&ts)
	return t.Kind
}

// NativeTypeOf returns the registered type of kind k.
func NativeTypeOf(k NativeKind) (NativeType, bool) {
	ts := nativeTypes()
	if k == NativeNone || int(k) >= len(ts) {
		return NativeType{}, false
	}
	return ts[k], true
}

// NativeTypes returns every registered native record type, by kind.
func NativeTypes() []NativeType {
	ts := nativeTypes()
	if len(ts) == 0 {
		return nil
	}
	return append([]NativeType(nil), ts[1:]...)
}

// Native is a plugin's own record of one operation, for device tracing.
type Native struct {
	Kind NativeKind
	size uint8     // bytes of the record
	rec  [4]uint64 // the record of type Kind, as NewNative stored it
	Type string    // a short constant name: "host copy in", "opencl kernel"
	HWID uint64    // where it ran: queue, stream or compute unit; 0 if none
	// Teams is, for a launch, the number of teams the device ran; 0 if
	// unknown.
	Teams int
}

// NewNative returns the Native that carries r, a record of the type
// registered as kind k, with the operation's type name, where it ran and,
// for a launch, the teams it ran. It allocates nothing (a plugin calls it
// for every traced operation); the caller keeps k and R in step.
func NewNative[R any](k NativeKind, r R, typ string, hwid uint64, teams int) Native {
	n := Native{Kind: k, size: uint8(unsafe.Sizeof(r)), Type: typ, HWID: hwid, Teams: teams}
	if unsafe.Sizeof(r) > unsafe.Sizeof(n.rec) {
		panic("device: NewNative: a record larger than 32 bytes")
	}
	*(*R)(unsafe.Pointer(&n.rec)) = r
	return n
}

// Bytes returns the bytes of n's record (nil for NativeNone), which alias
// n: what the runtime hands the tools.
func (n *Native) Bytes() []byte {
	if n.Kind == NativeNone {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&n.rec)), n.size)
}

// RecordOf returns n's record if it is of type R (the type registered
// for n.Kind).
func RecordOf[R any](n Native) (r R, ok bool) {
	t, ok := NativeTypeOf(n.Kind)
	if !ok || t.goType != reflect.TypeFor[R]() {
		return r, false
	}
	return *(*R)(unsafe.Pointer(&n.rec)), true
}

// Profiler is an optional interface of a Queue that times its own
// operations with the device's clock, as OpenCL event profiling or CUDA
// events do. The runtime uses it only while a tool traces the device;
// without it, the runtime brackets operations with Record events.
type Profiler interface {
	// Profile starts (on) or stops (off) timing of the operations
	// enqueued from now on. Off costs nothing per operation.
	Profile(on bool)
	// Last returns the timing of the operation enqueued last (CopyIn,
	// CopyOut, Copy or Launch) while profiling was on. Its methods may
	// wait for the operation to complete.
	Last() Timing
}

// Timing is the device's timing of one operation.
type Timing interface {
	// Times waits for the operation and returns its begin and end on
	// the device clock (Device.Now nanoseconds) and the plugin's native
	// record, or the operation's error.
	Times() (begin, end int64, native Native, err error)
}

// SpanTiming is an optional interface of a Timing: Span returns what
// Times does but the native record (begin, end and the teams of a
// launch, which Times gives as Native.Teams), and waits as Times does.
// The runtime calls it for operations whose native records no tool
// asked for, so a plugin that builds its record in Times (the host
// device does) builds none for them.
type SpanTiming interface {
	Span() (begin, end int64, teams int, err error)
}

// ReadyTiming is an optional interface of a Timing: Ready reports, without
// waiting, whether Times would return at once (the operation has
// completed, as one a queue ran inline has). The runtime then writes the
// operation's record at once instead of keeping it until the construct's
// queue syncs.
type ReadyTiming interface {
	Ready() bool
}
