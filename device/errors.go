package device

import (
	"errors"
	"fmt"
)

// Code classifies a device error. It is small and stable so that callers can
// branch on it with errors.Is against the sentinels below, whatever the
// vendor error underneath.
type Code int

// Error codes, in the manner of LLVM's OffloadErrcodes.
const (
	CodeUnknown         Code = iota // anything not classified below
	CodeInvalidArgument             // a bad pointer, size, shape or argument
	CodeOutOfResources              // out of device memory, queues, handles
	CodeUnsupported                 // the device or driver cannot do this
	CodeInvalidDevice               // no such device, or the device is gone
	CodeInvalidBinary               // a kernel image failed to load or build
	CodeNotFound                    // a named kernel, symbol or library is missing
)

var codeNames = [...]string{
	CodeUnknown:         "unknown error",
	CodeInvalidArgument: "invalid argument",
	CodeOutOfResources:  "out of resources",
	CodeUnsupported:     "unsupported",
	CodeInvalidDevice:   "invalid device",
	CodeInvalidBinary:   "invalid binary",
	CodeNotFound:        "not found",
}

// String returns the code's name, e.g. "out of resources".
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// Sentinel errors, one per code, matched with errors.Is against any *Error.
var (
	ErrUnknown         = &sentinel{CodeUnknown}
	ErrInvalidArgument = &sentinel{CodeInvalidArgument}
	ErrOutOfResources  = &sentinel{CodeOutOfResources}
	ErrUnsupported     = &sentinel{CodeUnsupported}
	ErrInvalidDevice   = &sentinel{CodeInvalidDevice}
	ErrInvalidBinary   = &sentinel{CodeInvalidBinary}
	ErrNotFound        = &sentinel{CodeNotFound}

	// ErrNoDevice is returned by a plugin that found no usable device; the
	// wrapping *Error says why (no driver, no platform, driver too old).
	ErrNoDevice = errors.New("device: no device")
)

type sentinel struct{ code Code }

func (s *sentinel) Error() string { return "device: " + s.code.String() }

// Error is the one error type of the device layer, shaped like fs.PathError:
// the operation that failed, the device it failed on, a Code, and the
// underlying (often vendor) error.
type Error struct {
	Op     string // "alloc", "copy to device", "launch saxpy", "load"
	Device string // "host:0", "cuda:1"; empty when no device is concerned
	Code   Code
	Err    error // the cause; may be nil
}

// Error formats as "host:0: alloc: out of resources: <cause>".
func (e *Error) Error() string {
	s := ""
	if e.Device != "" {
		s = e.Device + ": "
	}
	if e.Op != "" {
		s += e.Op + ": "
	}
	s += e.Code.String()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	return ok && s.code == e.Code
}

// Errorf builds an *Error whose cause is a formatted message.
func Errorf(dev, op string, code Code, format string, args ...any) *Error {
	return &Error{Op: op, Device: dev, Code: code, Err: fmt.Errorf(format, args...)}
}

// CodeOf returns the Code of the first *Error in err's chain, or
// CodeUnknown if there is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	for _, s := range []*sentinel{ErrInvalidArgument, ErrOutOfResources, ErrUnsupported,
		ErrInvalidDevice, ErrInvalidBinary, ErrNotFound} {
		if errors.Is(err, s) {
			return s.code
		}
	}
	return CodeUnknown
}
