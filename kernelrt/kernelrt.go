// Package kernelrt is the support code of the Go files that gompt-kernels
// (cmd/gompt-kernels) generates: how a kernel's Go image views its buffers,
// how many teams a reduction runs and how its per-team partial results
// combine, and the random problems of a generated Sample. Programs use the
// generated kernels and launchers, not this package; its API follows the
// generator and may change with it.
package kernelrt

import (
	"math"
	"unsafe"

	"github.com/gompt/gompt/device"
)

// MaxThreads is the largest team a generated reduction runs: the size of
// its scratch array in the device's local memory (Kernel.MaxThreads).
const MaxThreads = 256

// Len returns the number of elements a buffer whose Param.Len is the
// product of terms holds (a sum or difference is one term, its value), as
// device.Kernel.NeedLen counts it: the product, or 0 when it is negative
// (an even number of negative terms makes it positive, as in Go). It is what len(buf) is inside a generated kernel,
// on every device. The runtime refuses a launch whose Len leaves an int64
// (NeedLen) before a kernel's Go image runs; a launcher's Len of one may
// wrap, and the runtime then refuses the launch.
//
// Len is kept out of line: inlined at the top of a Go image, its loop
// moved the image's own loops to other addresses, and jacobi_512 on host:0
// took 261-307 us against 202-246 us out of line (the same generated
// code, two binaries interleaved, 2026-12-06). A call per team costs
// nothing measurable.
//
//go:noinline
func Len(terms ...int) int {
	n := 1
	for _, t := range terms {
		n *= t
	}
	return max(n, 0)
}

// View returns the first n elements of the buffer b as a []T, without
// copying. It panics, failing the launch with a message, when b holds fewer
// than n elements (the runtime checks every buffer's Len before a launch,
// so a generated Go image never sees one).
func View[T any](b []byte, n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if n <= 0 {
		return nil
	}
	if len(b)/size < n {
		panic("kernelrt: buffer of " + itoa(len(b)/size) + " elements, the kernel needs " + itoa(n))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Apart reports whether the memory of a and of b do not overlap: a Go
// image runs a loop in a faster order (its turns jammed) only where the
// buffer it writes is apart from every buffer it reads there.
func Apart[T, U any](a []T, b []U) bool {
	var zt T
	var zu U
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	na, nb := uintptr(len(a))*unsafe.Sizeof(zt), uintptr(len(b))*unsafe.Sizeof(zu)
	return na == 0 || nb == 0 || pa+na <= pb || pb+nb <= pa
}

// Head returns s[:n] when s holds at least n elements, and s otherwise: a
// launcher maps exactly the elements a kernel touches, and leaves a slice
// that is too short to the runtime, which refuses it with a message.
func Head[T any](s []T, n int) []T {
	if n >= 0 && n <= len(s) {
		return s[:n]
	}
	return s
}

// Above returns the least int above e, e+1, or e itself where e is
// math.MaxInt, which no index reaches: where a Go image splits a stencil at
// x <= e or x > e, its interior starts or ends there, and e+1 would wrap
// to the smallest int.
func Above(e int) int {
	if e == math.MaxInt {
		return e
	}
	return e + 1
}

// MaxClauseTeams is the most teams a generated reduction's launcher takes
// from a num_teams clause (TeamsFor): it allocates one partial result per
// team before the runtime sees the clause.
const MaxClauseTeams = 1 << 20

// TeamsFor returns the number of teams a generated reduction's launcher
// runs over n points: clause, the value of its num_teams clause
// (target.DeviceClause.Teams), where it is in [1, MaxClauseTeams], and
// Teams(n) otherwise, which the runtime then finds at odds with the
// clause and refuses, naming it.
func TeamsFor(clause, n int) int {
	if clause >= 1 && clause <= MaxClauseTeams {
		return clause
	}
	return Teams(n)
}

// Teams returns the number of teams a generated reduction over n points
// runs: enough teams of MaxThreads threads that each thread combines about
// 16 points, at least 1 and at most 1024 (the split of kernels.DotTeams).
func Teams(n int) int {
	return min(max(n/(16*MaxThreads), 1), 1024)
}

// Int returns the launch argument of an integer scalar: its bits,
// sign-extended from v.
func Int(v int64) device.Arg { return device.Arg{Bits: uint64(v)} }

// Float32 returns the launch argument of a float32 scalar.
func Float32(v float32) device.Arg { return device.Arg{Bits: uint64(math.Float32bits(v))} }

// Float64 returns the launch argument of a float64 scalar.
func Float64(v float64) device.Arg { return device.Arg{Bits: math.Float64bits(v)} }

// Bool returns 1 for true and 0 for false: a bool scalar's launch value (a
// ParamInt32 parameter).
func Bool(v bool) int {
	if v {
		return 1
	}
	return 0
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	for n != 0 {
		d := n % 10
		if d < 0 {
			d = -d
		}
		i--
		b[i] = byte('0' + d)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
