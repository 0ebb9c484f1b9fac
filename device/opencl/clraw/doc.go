// Package clraw holds the OpenCL raw baselines of cmd/ompt-bench: the work
// of a benchmark case done through the opencl plugin's driver binding
// alone (device/opencl/internal/cl), with none of the runtime around it,
// so that the runtime's figure and the driver's can be compared in one
// run. device/cuda/curaw is CUDA's.
//
// It is benchmark scaffolding: no production package imports it, so it
// stays out of offload programs. It reaches a device's OpenCL context
// through BindingQueue, an exported method of the plugin's unexported
// device type, which only this package asserts.
package clraw
