package main

import (
	"flag"
	"fmt"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ptxgen"
	"os"
	"path/filepath"
)

const usage = `gompt-kernels: Go functions to gompt kernels (OpenCL C, PTX, a Go image, a launcher).

Usage, in a package's source (go generate runs it in the package's folder):

	//go:generate go run github.com/gompt/gompt/cmd/gompt-kernels

	// Heat is one explicit step of the 2-D heat equation.
	//
	//gompt:kernel dims=nx,ny
	func Heat(x, y int, nx, ny int, alpha float32, in, out []float32) { ... }

	//gompt:kernel dims=n reduce=+
	func Dot(i int, n int, x, y []float32) float32 { return x[i] * y[i] }

The directive, in the function's doc comment:

	//gompt:kernel dims=nx[,ny[,nz]] [reduce=+|*|min|max] [len(buf)=EXPR ...] [arg(p)=FUNC ...] [check=off] [name=NAME] [var=VAR]
	//gompt:kernel dims=n reduce(buf)=+|*|min|max len(buf)=N [...]
	//gompt:kernel team=N dims=teams [len(buf)=EXPR ...] [arg(teams)=FUNC] [name=NAME] [var=VAR]
	//gompt:variant of=BASE device=SEL[,SEL...]     (after a //gompt:kernel line)

  dims=     names 1 to 3 int parameters as the extents of the iteration space; the
            function's first 1 to 3 parameters (as many) are the point's int indices,
            over [0,nx)x[0,ny)x[0,nz) (the first varies fastest on a device). They are
            the kernel's device.Kernel.Extents: every device runs those points, a
            target.Region's Shape.Size being set to them.
  reduce=   the function returns one number per point, combined over all points with
            +, *, min or max; the launcher returns the result.
  reduce(buf)=+|*|min|max
            an array reduction: the points combine values into buf's elements with
            the operator, and do nothing else to buf: buf[b] += v, -= v, ++ or --;
            buf[b] *= v; buf[b] = min(buf[b], v, ...); buf[b] = max(buf[b], v, ...)
            (for min and max the index is written the same way on both sides and
            calls nothing but conversions: the device evaluates it once).
            Elements are int32, uint32, int64, uint64, int, uint, float32 or float64.
            Each team combines into a private copy at the operator's identity
            (OpenCL __local memory, local atomics or compare-and-swap loops; an
            array in the Go image) and combines the copy into buf once, atomically;
            the result is buf's values combined with the points'. Integers, and
            floats' min and max, are exact on every device; float sums and products
            are combined in another order. One dimension; len(buf)= a whole number
            up to 16384, the private copies together at most 48 KiB. The launcher
            runs kernelrt.Teams(n) teams of kernelrt.MaxThreads threads.

	//gompt:kernel dims=n reduce(h)=+ len(h)=256
	func Histogram(i int, n int, v []uint8, h []uint32) { h[v[i]]++ }

  len(buf)= how many elements slice parameter buf holds: sums and differences of products
            of whole numbers and signed integer parameters, with Go's precedence and no
            spaces or parentheses (len(A)=m*k, len(rowPtr)=rows+1, len(y)=2*n-1); its
            value as Go computes it, 0 where it is 0 or negative (a launch where it
            leaves an int64 is refused). The default is the product of the extents.
            Inside a kernel, len(buf) is this length on every device.
  check=off no run-time checks of indices and divisors for this kernel (see below):
            an index outside its slice is then undefined behaviour everywhere.
  team=     a team kernel: teams of N threads (1 to 1024) that share team arrays and
            wait at barriers. The function's first parameters are the team's index
            in [0, teams) and the thread's index in [0, N); dims= names the number of
            teams. Arrays declared at the top of its body (var tile [256]float32) are
            the team's, one per team (OpenCL __local, CUDA .shared), zero on the host
            and undefined on a device until written; kernelrt.Barrier() waits for the
            team's threads and makes their writes visible. Every thread must reach the
            same barriers: a barrier under an if or loop whose condition depends on
            the thread is an error, as are a return and a break out of a loop around
            a barrier. The launcher runs teams teams of N threads on every device; a
            device runs a team as one work-group (the launch must have Threads = N),
            the Go image its threads one after another between barriers.

	//gompt:kernel team=64 dims=teams len(in)=teams*64 len(sums)=teams
	func BlockSum(t, th int, teams int, in []float32, sums []float32) {
		var part [64]float32
		part[th] = in[t*64+th]
		for s := 32; s > 0; s /= 2 {
			kernelrt.Barrier()
			if th < s {
				part[th] += part[th+s]
			}
		}
		if th == 0 {
			sums[t] = part[0]
		}
	}

  arg(p)=FUNC
            the launchers compute scalar parameter p as FUNC(...), a function of the package
            (exported with -launchers) whose parameters are named as, and typed as, parameters
            of the kernel that the caller passes, and whose one result has p's type; the
            launchers drop p from their parameters. A team kernel's number of teams:

	func Tiles(m, n int) int { return (m + 63) / 64 * ((n + 63) / 64) }

	//gompt:kernel team=256 dims=teams len(C)=m*n arg(teams)=Tiles
	func MatmulTiled(t, th int, teams int, m, n, k int, A, B, C []float32) { ... }

  name=     device.Kernel.Name (default: the function's name); the OpenCL and PTX entry
            point is gompt_NAME.
  var=      the generated kernel variable (default FuncKernel); the launchers are
            RunVar and RunVarNowait (runVar... when Var is unexported; RunFunc for the default).

//gompt:variant of=BASE device=SEL[,SEL...] makes the kernel a variant of kernel BASE (a Go
function of the package), as OpenMP's declare variant(V) match(device={arch(SEL)}) on BASE:
BASE's launchers run this kernel on a device that matches a selector, and BASE elsewhere;
the choice is made per launch from the device the clause names (target.MatchDevice). A
selector is a backend (host, opencl, cuda: device.Info.Backend), a device type (gpu, cpu,
accelerator: device.Info.Type) or initial (the initial device). The variant's launchers take
BASE's parameters (its own, less those arg(p)= computes), in order, and return what BASE's
return; a difference is an error naming it. Two variants of one BASE may not share a
selector, and a variant has no variants. BASEVariant(dev) (MatmulVariant) returns the kernel
BASE's launchers run on dev.

	//gompt:kernel dims=n,m len(A)=m*k len(B)=k*n len(C)=m*n
	func Matmul(j, i int, m, n, k int, A, B, C []float32) { ... }

	//gompt:kernel team=256 dims=teams len(A)=m*k len(B)=k*n len(C)=m*n arg(teams)=Tiles
	//gompt:variant of=Matmul device=opencl,cuda
	func MatmulTiled(t, th int, teams int, m, n, k int, A, B, C []float32) { ... }

  RunMatmul(dev, m, n, k, A, B, C) runs MatmulTiled on OpenCL and CUDA devices, Matmul on
  the host device and the initial device.

//gompt:func marks a helper that kernels may call (it is translated too).

Files written beside the source: gompt_kernels.go (the kernel variables, Go images,
Samples and launchers, for the whole package), and per kernel gompt_NAME.cl and
gompt_NAME.ptx. A kernel variable records what its device code needs beyond what
every device has (device.Kernel.Needs: float64, 64-bit atomics, team-local memory,
a team size), each with the line that first needs it; a device that lacks one
refuses the kernel at load, before anything is copied ("kernel Accel (nbody.go:31)
uses float64; opencl:1 (llvmpipe) has no cl_khr_fp64", a *device.NeedError).
A launcher has the function's parameters less the indices:

	func RunHeat(dev target.DeviceClause, nx, ny int, alpha float32, in, out []float32) error
	func RunDot(dev target.DeviceClause, n int, x, y []float32) (float32, error)

and a nowait form of each (target nowait), which returns at once and takes depend items
(target.DependIn, DependOut, DependInOut, DependOn) that order it as they order
target.TargetNowait; a reduction's returns a *target.Result whose Wait gives the value once
the kernel has run (the only way to read it). An error found before the launch (a short
slice, no such device) is the task's, returned by its Wait:

	func RunHeatNowait(dev target.DeviceClause, nx, ny int, alpha float32, in, out []float32, deps ...target.Map) *target.Task
	func RunDotNowait(dev target.DeviceClause, n int, x, y []float32, deps ...target.Map) *target.Result[float32]

dev may carry OpenMP's num_teams and thread_limit (target.Dev(0).NumTeams(64).ThreadLimit(128)):
the launch runs exactly that many teams (a reduction's partial results follow them; a team
kernel's teams are its work, and another count is refused), of at most that many threads.
Without num_teams the runtime chooses; on host devices it weighs each point by Kernel.Work,
the turns of its loops that the generator writes over the parameters ("n", "k*m+m"), so
that a few heavy points still spread over the cores.

It maps each slice by its use: read only: to; read and written: tofrom; written
only: from when the generator proves that every path stores at the point's own
linear index (x + nx*y + nx*ny*z) and the slice holds one element per point, else
tofrom (from would copy back, over elements the kernel never wrote, what device
memory held). Data already present (a Data region) is not copied.

The kernel variable's Params are named as the OpenCL C entry's arguments, which
the OpenCL plugin checks by name: the Go names, but for one OpenCL C cannot take
(a keyword such as global, a built-in such as min, the prefix gompt_, a letter
outside ASCII), suffixed there (global_), as the variable's comment says.
A kernel's or helper's own names (parameters, locals, labels) must not start
with gompt, unless with gompt_: the generated Go uses that prefix. Two kernels whose function names
differ only in their first letter's case (f and F) would get the same generated
Go functions and are refused.

The subset of Go:
  types      bool, int, int8-int64, uint, uint8-uint64, float32, float64, and slices of
             them (not []bool) as parameters; locals of those scalar types; constants;
             views of slice parameters (below).
  statements assignments (=, :=, op=, ++, --), var, if/else, for (three-clause,
             condition-only, infinite, range over an int, a slice or a team array:
             for i := range x, for i, v := range x, for _, v := range x, and = forms),
             switch (no fallthrough), break, continue (with labels), return.
  views      row := A[i*n : (i+1)*n] (also A[lo:], A[:hi], A[lo:hi:max], a view of a
             view, rv, rc := vals[lo:hi], cols[lo:hi]): a local slice of a slice
             parameter, declared once, as Go's slice: its bounds are checked against
             the parent's capacity (a buffer's is its length) and fail with Go's "slice
             bounds out of range", an index of it is checked against its own length,
             len(row) is its length. Index it, range over it (range A[lo:hi] too),
             slice it, or pass it to a //gompt:func helper; reads and writes through it
             are its buffer's (the maps). The range over a slice takes its length once,
             and its value is a copy of the element read as each iteration starts.
  operators  all arithmetic, comparison, logical and bit operators, shifts.
  calls      conversions between numeric types; //gompt:func helpers; len of a slice
             parameter or a view; min and max; math: %s
             exactly as Go; and %s
             within a few ulps of Go's on a device (the Sample's tolerance says so);
             sync/atomic's AddT, CompareAndSwapT and LoadT, T one of Int32, Uint32,
             Int64 and Uint64, on an element of a slice parameter:
             atomic.AddUint32(&hist[b], 1) (64-bit ones need cl_khr_int64_base_atomics
             on OpenCL, as POCL and NVIDIA have; a device without it refuses the kernel).
Not supported, each an error with its position:
  functions  methods, generic functions, variadic parameters, functions without a body;
             more than one result, named results; parameters and results of other types
             (strings, maps, pointers, structs, arrays, defined types such as
             type celsius float32, []bool).
  data       strings, maps (map literals, indexing), pointers (& only in an atomic's
             &buf[i], no * dereference), structs (field selectors), arrays (but a team
             kernel's team arrays), complex numbers, channels (send, receive, select),
             interfaces (type assertions, type switches), nil, function values and
             closures, package-level variables, constants of other types, values of other
             types, locals of other types, type declarations in a function.
  slices     local slice variables but views; assigning to a slice parameter or a view,
             or using one as a value (w := v, v == nil: index it, range over it, slice
             it, take its len, pass it to a helper); a slice expression outside a
             view's declaration or a range (f(buf[1:]): declare the view first), or of
             anything but a slice parameter or a view (a team array); a range over a
             team array with a value while the loop writes it (Go ranges over a copy);
             indexing anything but a slice parameter, a view or a team array.
  allocation make, new, append (a kernel cannot grow a slice), composite literals (map
             literals, slice, array and struct literals).
  statements goroutines, defer, goto, fallthrough, labels on anything but loops and
             switches, an expression statement that is not a call, a call whose value is
             unused, an assignment of several values from one call, assigning to anything
             but locals and elements, range over anything but an int, a slice or a team
             array.
  calls      method calls and method values; calls of functions that are not //gompt:func
             (a helper refused at its declaration is reported there), of kernels and calls
             of function values; recursion; functions of other packages but math and
             sync/atomic; the other math functions; other sync/atomic functions and types;
             the other built-ins (panic, recover, print, println, copy, clear, cap, delete,
             close, complex, real, imag); len of anything but a slice parameter or a view;
             conversions to other types; a helper's slice argument that is not a slice
             parameter or a view; kernelrt.Barrier outside a team kernel's body or with arguments.

Go semantics on every device: int is 64 bits; integer arithmetic wraps; shifts by the
width or more give 0 (or -1 for a negative value shifted right); / and %% truncate,
MinInt/-1 == MinInt and MinInt%%-1 == 0; float arithmetic is not contracted (no fma
unless math.FMA); float32 division and sqrt are correctly rounded; min and max follow
Go's NaN and signed-zero rules. A map kernel's result is the Go function's, bit for
bit. Go's checks too: an index outside its slice, or an integer division by zero,
fails the launch on every device with Go's words, the kernel and the source line
("kernel Heat (heat.go:14): index out of range [1048576] with length 1048576", a
*device.KernelFault), and the construct copies nothing back. On OpenCL and CUDA the
first work-item that fails records it in the kernel's fault record (the last
argument of its device code; device.Kernel.Faults lists the checks) and stops; the
Go image panics with Go's own check. Indices the generator proves in range are not
checked. A proof may rest on a bound over the int parameters not wrapping (n-1 in
for j := 0; j < n-1; j++ is math.MaxInt for n at math.MinInt, and the loop would
run past every slice's end; m*k in b[0:m*k]): such bounds are the kernel's
device.Kernel.Bounds, and a launch whose arguments make one leave an int64 is
refused before it runs ("bound n-1 leaves an int64 with these arguments"). A negative shift count,
which panics in Go, shifts by more than the width on a device.

Flags:
`

func main() {
	o := ir.Options{Warn: func(s string) { fmt.Fprintln(os.Stderr, s) }}
	flag.StringVar(&o.Out, "o", "", "write the generated files into this folder instead of the package's (tests compare them with the committed ones)")
	flag.StringVar(&o.Launchers, "launchers", "", "write the launchers into the package in this folder (relative to the package's) instead of beside the kernels; for a package that must not import target")
	flag.StringVar(&o.Clang, "clang", "", "the clang to build PTX with (default clang-19, or $CLANG)")
	flag.StringVar(&o.Libclc, "libclc", "", "libclc's nvptx64 bitcode (default "+ptxgen.DefaultLibclc+", or $LIBCLC)")
	flag.Usage = func() {
		exact, approx := ir.MathNames()
		fmt.Fprintf(flag.CommandLine.Output(), usage, join(exact), join(approx))
		flag.PrintDefaults()
	}
	flag.Parse()
	if o.Clang == "" {
		o.Clang = os.Getenv("CLANG")
	}
	if o.Libclc == "" {
		o.Libclc = os.Getenv("LIBCLC")
	}
	o.Dir = "."
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		o.Dir = flag.Arg(0)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run generates the package in o.dir and writes its files.
func run(o ir.Options) error {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	o.Dir = dir
	out, err := generate(o)
	if err != nil {
		return err
	}
	dest := o.Dir
	if o.Out != "" {
		dest = o.Out
	}
	return write(dest, out)
}

func join(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
			if i%10 == 0 {
				s += "\n             "
			}
		}
		s += n
	}
	return s
}
