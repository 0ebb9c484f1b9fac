//go:build cgo

package target

// cgoOn: this build has cgo, so the OpenCL plugin can find a device.
const cgoOn = true
