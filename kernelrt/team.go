package kernelrt

// Barrier waits, in a team kernel (//gompt:kernel team=N), until every
// thread of the team has reached it; the team's writes before it, to its
// team arrays and to buffers, are seen by its threads after it. Every
// thread must reach the same barriers. gompt-kernels translates the call:
// OpenCL C's barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE), and in
// the Go image the end of a loop over the team's threads. Called as an
// ordinary Go function (a team kernel's function called directly, one
// thread at a time), it does nothing: such a call runs the kernel
// correctly only where no thread reads what another wrote.
func Barrier() {}
