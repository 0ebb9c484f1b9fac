//go:build !cgo

package target

// cgoOn: this build has no cgo, so OpenCL has no device by design.
const cgoOn = false
