// Package cu is the small part of the CUDA driver API that the cuda plugin
// (device/cuda) and its raw baselines (device/cuda/curaw) use, called
// through a C table of function pointers filled by dlopen and dlsym at run
// time (in the manner of LLVM's offload/plugins-nextgen/cuda/dynamic_cuda),
// so a binary that imports it
// starts on machines without the driver. Names mirror the C ones without the
// cu prefix (MemAlloc is cuMemAlloc), so NVIDIA's documentation applies.
//
// Load must succeed before any other function is called. Every function that
// needs a context takes the context as its first argument and makes it
// current on the calling thread inside the same C call as the driver call,
// so goroutines that move between OS threads never use a stale current
// context. All functions are safe for concurrent use as the driver's are.
//
// A function that releases an object (MemFree, StreamDestroy, ...) and fails
// with a sticky result (Result.Sticky) stops counting the object as live:
// it goes with the context, which its owner must release.
//
// Host memory passed to a function is read or written only during the call,
// except for the async copies, whose caller keeps it alive and pinned until
// the stream has passed the copy.
//
// In a build without cgo the driver cannot be loaded: Load always fails
// with "not available: built without cgo".
package cu
