// Package internal holds the kernel compiler gompt-kernels, one package a
// phase, as Go's own compiler and TinyGo are cut. A kernel flows through
// them in order, driven by the command's generatePkg (../gen.go):
//
//   - load reads the package (go list, go/types) and its directives:
//     //gompt:kernel, //gompt:func and //gompt:variant become the model's
//     kernels and helpers (ir.Kernel, ir.Fn).
//   - check decides what is in the subset and reports everything else at
//     its position; it also finds the calls between functions (recursion,
//     which slices a helper reads and writes) and checks names and
//     launchers.
//   - plan makes each kernel's plan once, after the checks pass
//     (plan.Kernel): the indexes proven in range, the run-time checks and
//     their numbers (Sites), what the kernel needs of a device (Needs),
//     a point's work for the runtime to weigh (Work), the form of its
//     Go image (lanes, buffers resliced, rows of its loops, a stencil's
//     split, jammed loops; a team
//     kernel's team plan is made with the checks, by plan.CheckTeams),
//     and the points a CPU OpenCL device's work-item runs together
//     (Wide). Everything an emitter needs to know about a
//     kernel is in its plan.
//   - emitc writes the OpenCL C, emitgo the Go file (device.Kernel
//     values, Go images, samples) and the launchers, and ptxgen drives
//     clang and libclc from that C to PTX. The emitters read the plan;
//     none writes it, and none reads another's output.
//
// ir is the model every phase shares: the kernel, its parameters and
// functions, their plans, errors, and the facts of Go's types the phases
// agree on (a scalar's C and Go names, the math functions, the atomics).
//
// Inside a phase, a file a construct: adding one (an operator, a statement
// form, a kind of kernel) edits the same file name in each phase it
// touches:
//
//	construct          load            check           plan                emitc              emitgo
//	statements, exprs                  stmt.go         prove.go poly.go    stmt.go assign.go  body.go
//	                                                   env.go walk.go      expr.go
//	                                                   inrange.go
//	calls, helpers                     calls.go                            calls.go file.go   file.go
//	atomics                            atomics.go      needs.go            atomics.go         atomics.go
//	team kernels       team.go         team.go         team.go             team.go            team.go
//	reduce(buf)=       reducearray.go  reducearray.go                      reducearray.go     reducearray.go
//	views, range                       view.go         view.go             view.go            view.go
//	variants, arg()    variant.go      variant.go                                             launchers.go
//	run-time checks                                    sites.go            sites.go
//	a point's work                                     work.go                                file.go
//	Go image form                                      host.go lanes.go                       lanes.go rows.go split.go
//	                                                   reslice.go rows.go                     pointjam.go
//	                                                   split.go pointjam.go
//	                                                   looprows.go sumjam.go                  sumjam.go
//	points together                                    wide.go             wide.go file.go
//
// load.go reads the package, directive.go the //gompt:kernel keys, and
// launchdir.go the -launchers folder; prelude.go is the C helpers a file
// needs (checked loads, Go's division and shifts, conversions),
// file.go the C file and its entry points, and func.go one C function of
// it (what the functions of a file share, and a function's signature,
// whose body stmt.go, assign.go and expr.go write); file.go in emitgo is
// the Go file, launchers.go its launchers. kernel.go in plan orders the
// planning of one kernel.
package internal
