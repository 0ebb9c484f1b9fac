// Package omptlink joins package ompt (the tools-facing types) to the
// engine that implements them (target/internal/omptrt) without an import
// cycle: ompt imports omptlink and fills most of it in its init, the
// engine reads it (and fills TraceStats, which ompt reads). It also
// holds the trace buffer's entry format, which ompt's record readers
// (Records, RecordAt) and the engine's writer and entry points share.
package omptlink

import (
	"reflect"
	"sync"
	"unsafe"
)

// Tool is one RegisterTool call: Start is an ompt.StartFunc.
type Tool struct {
	Name  string
	Start any
}

var (
	mu    sync.Mutex
	tools []Tool
)

// Register appends a tool; it panics if name is taken (RegisterTool's
// contract).
func Register(name string, start any) {
	mu.Lock()
	defer mu.Unlock()
	for _, r := range tools {
		if r.Name == name {
			panic("ompt: RegisterTool called twice for tool " + name)
		}
	}
	tools = append(tools, Tool{name, start})
}

// Tools returns the registered tools in registration order.
func Tools() []Tool {
	mu.Lock()
	defer mu.Unlock()
	return append([]Tool(nil), tools...)
}

// Set by package ompt in its init.
var (
	// NewDeviceHandle returns a new *ompt.DeviceHandle for device num of
	// type typ, as unsafe.Pointer.
	NewDeviceHandle func(num int, typ string) unsafe.Pointer
	// CallbackType returns the Go callback type of dispatched event ev
	// (an ompt.Callback), nil for any other.
	CallbackType func(ev int32) reflect.Type
)

// Set by the engine in its init.
var (
	// TraceStats reports the trace entries written into tool buffers and
	// those lost for device num since it was initialized (0, 0 for an
	// unknown device).
	TraceStats func(num int) (written, lost uint64)
)

// The trace buffer's entries (see ompt/record.go): an OMPT record
// (ompt_record_ompt_t, OMPTSize bytes) starts with its event number, a
// native entry with a Header. The engine's ring decoder
// (target/internal/omptrt/trace_ring.go) writes both; EntryAt and the record
// getters read them.
const (
	OMPTSize   = 104
	HeaderSize = int(unsafe.Sizeof(Header{}))
	NativeMax  = 64 // the largest native record, bytes
	MaxEntry   = HeaderSize + NativeMax
	Marker     = 0x4e415456 // "NATV"

	// The events of the OMPT records gompt writes (omp-tools.h's
	// ompt_callback_target, _target_data_op, _target_submit; package
	// ompt's tests check them against its Callback constants).
	EventTarget, EventDataOp, EventSubmit = 8, 9, 10

	// entry kinds, ompt_record_t
	KindOMPT, KindNative, KindInvalid = 1, 2, 3
)

// Header precedes each native record in a buffer. Its first two fields
// are what EntryAt reads to tell an entry's kind and size.
type Header struct {
	Marker   int32  // Marker, where an OMPT record has its event number
	Size     uint32 // whole entry, header included, multiple of 8
	HostOpID uint64
	Class    int32  // ompt.NativeClass
	TypeIdx  uint32 // index into the engine's native type names
	Start    uint64
	End      uint64
	HWID     uint64
}

// head is the first 8 bytes of every entry: Header's first two fields.
type head struct {
	Marker int32
	Size   uint32
}

// head's fields are Header's.
var _ = [1]struct{}{}[unsafe.Offsetof(Header{}.Size)-unsafe.Offsetof(head{}.Size)]

// EntryAt classifies the entry at cursor in b[:limit] and returns its
// kind (Kind*) and size. It reads only within b[:limit].
func EntryAt(b []byte, limit, cursor uint64) (int, uint64) {
	if limit > uint64(len(b)) {
		limit = uint64(len(b))
	}
	if cursor >= limit || limit-cursor < 8 {
		return KindInvalid, 0
	}
	p := unsafe.Pointer(&b[cursor])
	if uintptr(p)&7 != 0 {
		return KindInvalid, 0
	}
	h := (*head)(p) // an OMPT record's event number is where Marker is
	switch typ := h.Marker; {
	case typ == EventTarget || typ == EventDataOp || typ == EventSubmit:
		if limit-cursor < OMPTSize {
			return KindInvalid, 0
		}
		return KindOMPT, OMPTSize
	case typ == Marker:
		size := uint64(h.Size)
		// A native entry always holds data after its header (the runtime
		// writes at least 8 bytes), so get_record_native's pointer past
		// the header stays inside the buffer.
		if size <= uint64(HeaderSize) || size > uint64(MaxEntry) || size&7 != 0 || limit-cursor < size {
			return KindInvalid, 0
		}
		return KindNative, size
	}
	return KindInvalid, 0
}

// FirstOffset returns the first 8-byte aligned offset in b.
func FirstOffset(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(-uintptr(unsafe.Pointer(&b[0])) & 7)
}

// Reset forgets every registered tool (for the engine's tests).
func Reset() {
	mu.Lock()
	tools = nil
	mu.Unlock()
}
