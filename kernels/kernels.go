package kernels

import (
	"math"
	"math/rand/v2"

	"github.com/gompt/gompt/device"
)

// The PTX images (*.ptx) are generated from the OpenCL C (*.cl) and CUDA C
// (*.cu) sources beside them with clang-19 and libclc; see gen.sh.
//go:generate sh gen.sh

// All returns every kernel of the library, in a fixed order: Empty, Saxpy,
// VecAdd, Dot, Matmul, Jacobi, Fill, Copy32, SaxpyCUDA. The slice is new on each
// call and belongs to the caller; the kernels are shared and immutable.
func All() []*device.Kernel {
	return []*device.Kernel{Empty, Saxpy, VecAdd, Dot, Matmul, Jacobi, Fill, Copy32, SaxpyCUDA}
}

// ByName returns the library kernel called name ("saxpy", "dot_partial", ...), and
// false when there is none. Safe for concurrent use.
func ByName(name string) (*device.Kernel, bool) {
	for _, k := range All() {
		if k.Name == name {
			return k, true
		}
	}
	return nil, false
}

// Chunk returns the share [lo, hi) of team team out of teams in an
// iteration space [0, n): contiguous chunks of ceil(n/teams) iterations, the
// last ones shorter or empty. It is the split the Dot kernel's device code
// makes, and a host device that splits dimension 0 the same way gets the same
// partial sums. teams < 1 counts as 1; team outside [0, teams) gets an empty
// share.
func Chunk(n, teams, team int) (lo, hi int) {
	if teams < 1 {
		teams = 1
	}
	if n <= 0 || team < 0 || team >= teams {
		return 0, 0
	}
	c := n / teams
	if n%teams != 0 {
		c++
	}
	lo = min(team*c, n)
	hi = min(lo+c, n)
	return lo, hi
}

// bufParam is a float32 buffer parameter that must hold n elements (a
// Param.Len expression).
func bufParam(name, n string) device.Param {
	return device.Param{Name: name, Kind: device.ParamBuffer, Elem: device.ParamFloat32, Len: n}
}

func int64Param(name string) device.Param {
	return device.Param{Name: name, Kind: device.ParamInt64}
}

func float32Param(name string) device.Param {
	return device.Param{Name: name, Kind: device.ParamFloat32}
}

// images returns the three images of a kernel whose device code is OpenCL C.
func images(name, cl, ptx string, host device.HostFunc) []device.Image {
	return []device.Image{
		{Kind: device.ImageHost, Entry: name, Host: host},
		{Kind: device.ImageOpenCL, Entry: name, Source: cl},
		{Kind: device.ImagePTX, Entry: name, Source: ptx},
	}
}

func int64Arg(v int) device.Arg { return device.Arg{Bits: uint64(int64(v))} }

func float32Arg(v float32) device.Arg { return device.Arg{Bits: uint64(math.Float32bits(v))} }

// sampleRand returns the generator of kernel name's sample (n, seed).
func sampleRand(name string, n int, seed int64) *rand.Rand {
	h := uint64(14695981039346656037) // FNV-1a of the name keeps kernels apart
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(uint64(seed), h^uint64(n)))
}

// randFloats returns n floats uniform in [lo, hi) from r as bytes.
func randFloats(r *rand.Rand, n int, lo, hi float32) []byte {
	s := make([]float32, n)
	for i := range s {
		s[i] = lo + (hi-lo)*r.Float32()
	}
	return device.Bytes(s)
}

// isqrt returns the integer square root of n >= 0.
func isqrt(n int) int {
	s := int(math.Sqrt(float64(n)))
	for s*s > n {
		s--
	}
	for (s+1)*(s+1) <= n {
		s++
	}
	return s
}

func shape1(n int) device.Shape { return device.Shape{Size: [3]int{n, 1, 1}} }

// clampRange returns [lo, hi) of dimension d of r limited to [0, n), as the
// device code's loop bounds limit it; a negative n counts as 0.
func clampRange(r device.Range, d, n int) (lo, hi int) {
	n = max(n, 0)
	lo = min(max(r.Lo[d], 0), n)
	hi = min(max(r.Hi[d], lo), n)
	return lo, hi
}
