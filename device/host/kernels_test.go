package host

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/gompt/gompt/device"
)

// Test kernels of this package: Go images with Samples, so the conformance
// suite can run them without the kernel library.

func f32bytes(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// testSaxpy: y[i] = a*x[i] + y[i] for i < n.
var testSaxpy = &device.Kernel{
	Name: "test_saxpy",
	Params: []device.Param{
		{Name: "n", Kind: device.ParamInt64},
		{Name: "a", Kind: device.ParamFloat32},
		{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32, Len: "n"},
		{Name: "y", Kind: device.ParamBuffer, Elem: device.ParamFloat32, Len: "n"},
	},
	Dims: 1,
	Images: []device.Image{
		{Kind: "opencl-c", Source: "__kernel void test_saxpy(long n, float a, __global const float *x, __global float *y) {}"},
		{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, _, _ int) {
			n, alpha := a.Int(0), a.Float32(1)
			x, y := a.F32(2), a.F32(3)
			for i := r.Lo[0]; i < min(r.Hi[0], n); i++ {
				y[i] = alpha*x[i] + y[i]
			}
		}},
	},
	Sample: func(n int, seed int64) device.Sample {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = r.Float32()*2-1, r.Float32()*2-1
		}
		return device.Sample{
			Shape: device.Shape{Size: [3]int{n}},
			Bufs:  [][]byte{nil, nil, f32bytes(x), f32bytes(y)},
			Args:  []device.Arg{{Bits: uint64(n)}, {Bits: uint64(math.Float32bits(1.5))}, {}, {}},
			Tol:   1e-6,
		}
	},
}

// testPartials: each team writes the sum of its chunk of x into
// partial[team], and 0 into slots beyond teams; a fixed number of teams, more
// than the iterations for small n, so some chunks are empty.
var testPartials = &device.Kernel{
	Name: "test_partials",
	Params: []device.Param{
		{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat64, Len: "Shape.Size[0]"},
		{Name: "partial", Kind: device.ParamBuffer, Elem: device.ParamFloat64, Len: "Shape.Teams"},
	},
	Dims: 1,
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
		x, p := a.F64(0), a.F64(1)
		s := 0.0
		for i := r.Lo[0]; i < r.Hi[0]; i++ {
			s += x[i]
		}
		p[team] = s
	}}},
	Sample: func(n int, seed int64) device.Sample {
		const teams = 8
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		x := make([]byte, 8*n)
		for i := range n {
			binary.LittleEndian.PutUint64(x[8*i:], math.Float64bits(r.NormFloat64()))
		}
		return device.Sample{
			Shape: device.Shape{Size: [3]int{n}, Teams: teams},
			Bufs:  [][]byte{x, make([]byte, 8*teams)},
			Args:  make([]device.Arg, 2),
			Tol:   1e-12,
		}
	},
}

// testGrid: a 2D kernel, out[j*w+i] = in[j*w+i]*3 + i - j, over int32.
var testGrid = &device.Kernel{
	Name: "test_grid",
	Params: []device.Param{
		{Name: "w", Kind: device.ParamInt32},
		{Name: "in", Kind: device.ParamBuffer, Elem: device.ParamInt32, Len: "w*Shape.Size[1]"},
		{Name: "out", Kind: device.ParamBuffer, Elem: device.ParamInt32, Len: "w*Shape.Size[1]"},
	},
	Dims: 2,
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, _, _ int) {
		w := a.Int(0)
		in, out := a.I32(1), a.I32(2)
		for j := r.Lo[1]; j < r.Hi[1]; j++ {
			for i := r.Lo[0]; i < r.Hi[0]; i++ {
				out[j*w+i] = in[j*w+i]*3 + int32(i-j)
			}
		}
	}}},
	Sample: func(n int, seed int64) device.Sample {
		w := 37
		h := max(2, (n+w-1)/w)
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		in := make([]byte, 4*w*h)
		for i := range w * h {
			binary.LittleEndian.PutUint32(in[4*i:], r.Uint32()>>4)
		}
		return device.Sample{
			Shape: device.Shape{Size: [3]int{w, h}},
			Bufs:  [][]byte{nil, in, make([]byte, 4*w*h)},
			Args:  []device.Arg{{Bits: uint64(w)}, {}, {}},
		}
	},
}

// testOpenCLOnly has no Go image.
var testOpenCLOnly = &device.Kernel{
	Name:   "test_opencl_only",
	Params: []device.Param{{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}},
	Images: []device.Image{
		{Kind: "opencl-c", Source: "__kernel void test_opencl_only(__global float *x) {}"},
		{Kind: "ptx", Source: "// ptx"},
	},
}

// testPanics panics in the team given by its argument.
var testPanics = &device.Kernel{
	Name:   "test_panics",
	Params: []device.Param{{Name: "team", Kind: device.ParamInt32}},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, _ device.Range, team, _ int) {
		if team == a.Int(0) {
			panic("test_panics: team " + string(rune('0'+team)))
		}
	}}},
}

// testEmpty does nothing.
var testEmpty = &device.Kernel{
	Name:   "test_empty",
	Images: []device.Image{{Kind: device.ImageHost, Host: func(*device.HostArgs, device.Range, int, int) {}}},
}

var testKernels = []*device.Kernel{testSaxpy, testPartials, testGrid, testOpenCLOnly, testEmpty}
