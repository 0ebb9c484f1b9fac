//go:build !cgo

package dl

import (
	"errors"
	"unsafe"
)

// Available reports whether this build can open libraries (cgo is on).
const Available = false

// ErrNoCgo is returned by every function of a build without cgo.
var ErrNoCgo = errors.New("not available: built without cgo")

// Lib is an open shared library.
type Lib struct{ Name string }

// Open fails: a build without cgo cannot load libraries.
func Open(names ...string) (*Lib, error) { return nil, ErrNoCgo }

// OpenLazy fails: a build without cgo cannot load libraries.
func OpenLazy(names ...string) (*Lib, error) { return nil, ErrNoCgo }

// FileOf returns "" in a build without cgo.
func FileOf(addr unsafe.Pointer) string { return "" }

// Sym fails in a build without cgo.
func (l *Lib) Sym(name string) (unsafe.Pointer, error) { return nil, ErrNoCgo }

// SymFirst fails in a build without cgo.
func (l *Lib) SymFirst(names ...string) (unsafe.Pointer, string, error) {
	return nil, "", ErrNoCgo
}

// Default returns nil in a build without cgo.
func Default(name string) unsafe.Pointer { return nil }

// Close does nothing in a build without cgo.
func (l *Lib) Close() error { return nil }
