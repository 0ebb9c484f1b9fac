//go:build !cgo

package cl

import "errors"

// Available reports whether this build can call OpenCL (cgo is on).
const Available = false

// ErrNoCgo is Init's error in a build without cgo.
var ErrNoCgo = errors.New("not available: built without cgo")

// Init fails: a build without cgo cannot load OpenCL.
func Init() error { return ErrNoCgo }

// Library returns "" in a build without cgo.
func Library() string { return "" }

// Probe fails in a build without cgo.
func Probe(names ...string) error { return ErrNoCgo }
