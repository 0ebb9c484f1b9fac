// Package curaw holds the CUDA raw baselines of cmd/ompt-bench: the work
// of a benchmark case done through the cuda plugin's driver binding alone
// (device/cuda/internal/cu), with none of the runtime around it, so that
// the runtime's figure and the driver's can be compared in one run.
// device/opencl/clraw is OpenCL's.
//
// It is benchmark scaffolding: no production package imports it, so it
// stays out of offload programs. It reaches a device's CUDA context
// through BindingContext, an exported method of the plugin's unexported
// device type, which only this package asserts.
package curaw
