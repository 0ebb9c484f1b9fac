package ir

import (
	"go/token"
	"path/filepath"
)

// Needs: what a kernel's device code needs of a device beyond what every
// device gives it (device.Caps), each with the source position where it
// is first needed, as the generated device.Kernel's Needs records it. A
// device that lacks one refuses the kernel at load (device.CheckNeeds)
// with a message naming the kernel, this position and what the device
// lacks, before anything is copied; without the record the driver would
// fail the build, or the launch, in its own words.
//
// plan.Needs computes them from the checked kernel, in Go's terms (types,
// the directive, the team arrays), after the checks and before the
// emitters, which only read k.needs:
//
//   - NeedFP64: the device code computes with float64 (OpenCL C double):
//     a float64 parameter, slice, result, local, conversion, operation or
//     math call, in the kernel or in a //gompt:func helper it calls.
//   - NeedInt64Atomics: it uses 64-bit atomics (atomics.go's atom64,
//     cl_khr_int64_base_atomics): sync/atomic's Add and CompareAndSwap of
//     Int64 and Uint64 (a Load is a plain read), and an array reduction
//     of 64-bit elements (int64, uint64, int, uint, float64), whose team
//     copies are combined into the buffer with 64-bit atomics or
//     compare-and-swap loops on every device (reducearray.go).
//   - NeedLocalMem: the bytes of __local memory its entry declares: team
//     arrays, the array reductions' team copies, a reduction's scratch.
//   - NeedTeamSize: a team kernel's team=N (reqd_work_group_size).
//
// The generator's tests check each record against the OpenCL C of every
// kernel it makes.

// Need is one device.Need of a kernel.
type Need struct {
	Kind   string // the device.NeedKind constant: "NeedFP64", "NeedInt64Atomics", "NeedLocalMem", "NeedTeamSize"
	Amount int64  // bytes (NeedLocalMem), threads (NeedTeamSize)
	Use    string // what needs it, in Go's terms: "float64", "atomic.AddUint64", "teams of 64 threads (team=64)"
	Pos    string // where it is first needed: "file.go:line"
}

const (
	NeedFP64         = "NeedFP64"
	NeedInt64Atomics = "NeedInt64Atomics"
	NeedLocalMem     = "NeedLocalMem"
	NeedTeamSize     = "NeedTeamSize"
)

// needList is a kernel's needs (kernel.needs).
type needList []Need

// Has reports whether the list holds a need of kind.
func (l needList) Has(kind string) bool {
	for _, n := range l {
		if n.Kind == kind {
			return true
		}
	}
	return false
}

// Line is pos as the generated code's positions are: "file.go:line", the
// file's base name.
func (g *Program) Line(pos token.Pos) string {
	p := g.P.Fset.Position(pos)
	return filepath.Base(p.Filename) + ":" + Itoa(p.Line)
}

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
