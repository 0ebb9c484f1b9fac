//go:build !cgo

package cu

import "errors"

// Available reports whether this build can load the driver (cgo is on).
const Available = false

// DefaultLibrary is the driver library Load opens when given no name.
const DefaultLibrary = "libcuda.so.1"

// ErrNoCgo is returned by Load in a build without cgo.
var ErrNoCgo = errors.New("not available: built without cgo")

// Load fails: a build without cgo cannot load the driver.
func Load(name string) error { return ErrNoCgo }

// LiveObjects returns zero counts: nothing can be made without cgo.
func LiveObjects() Live { return Live{} }
