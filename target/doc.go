// Package target is what a Go program calls to offload work: OpenMP 5.2's
// target constructs, data-mapping rules and device memory routines, on any
// device a plugin provides (CUDA, OpenCL, the host offload device) and on
// the initial device (the program's own goroutines and slices).
//
// A target construct (Target, TargetNowait) runs one kernel
// (kernels.Saxpy, or your own device.Kernel) over a Shape on a device, with
// map clauses saying which slices go to the device and which come back:
//
//	err := target.Target(target.Region{
//		Device: target.DefaultDevice,
//		Kernel: kernels.Saxpy,
//		Shape:  target.N(n),
//		Maps:   []target.Map{target.To(x), target.ToFrom(y)},
//		Args:   []target.Arg{target.Int(n), target.Float32(a), target.Slice(x), target.Slice(y)},
//	})
//
// Data keeps slices on a device across several constructs (a target data
// region); EnterData, ExitData and Update (and their Nowait forms) map,
// unmap and refresh them outside one. Mapping follows OpenMP's reference
// counts: a slice already present is not copied again, and sub-slices of a
// mapped slice resolve inside its device buffer. AllocMem, FreeMem, Memcpy,
// MemcpyRect, Memset, Associate and IsPresent are the omp_target_* device
// memory routines.
//
// Devices are numbered 0..NumDevices()-1 across plugins in plugin order
// (GOMPT_PLUGINS); NumDevices() and InitialDevice name the initial device,
// and DefaultDevice the default-device ICV (OMP_DEFAULT_DEVICE). Devices
// lists them with their names. The runtime starts on the first call of any
// function here, reading the environment once (see the README's table); a
// bad value gets a one-line warning on standard error.
//
// Every function is safe for concurrent use by goroutines. Call Shutdown
// before the program exits: it waits for work in flight and finalizes the
// tools (package ompt).
//
// Files, by concern: target.go (the target construct's entry points,
// Target and TargetNowait, and its launch), data.go (Data, EnterData,
// ExitData, Update and their nowait forms), construct.go (one construct
// on one device: its queue, the mapping.Ops through which the present
// table reaches the device, the map events), check.go (the checks every
// region passes before any device work), initial.go (constructs on the
// initial device), task.go (Task, the nowait tasks), depend.go (depend
// clauses and Go tasks); the device memory routines: mem.go (AllocMem and
// FreeMem, and what the routines share), hostmem.go (the initial device's
// memory: its allocations, and the slices MappedPtr returned there),
// memcpy.go (Loc, Memset and Memcpy, and the copies row by row, traced,
// between devices), memcpyrect.go (MemcpyRect: a rectangle checked against
// both sides, as rows), associate.go (Associate and Disassociate),
// present.go (IsPresent, IsAccessible, MappedPtr); clauses.go and elem.go
// (map clauses, arguments and element types), runtime.go (start-up,
// devices, Shutdown), env.go (the environment), trace.go (what devices
// tell the tools), plugins.go (the plugins linked in), once.go and
// inspect.go (start-up's once, and what tests read of the present table).
package target
