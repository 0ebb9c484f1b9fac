package polybench

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
)

// Size is a PolyBench dataset.
type Size int

const (
	Mini Size = iota
	Small
	Medium
	Large
)

var sizeNames = [...]string{"MINI", "SMALL", "MEDIUM", "LARGE"}

func (s Size) String() string {
	if s < 0 || int(s) >= len(sizeNames) {
		return fmt.Sprintf("Size(%d)", int(s))
	}
	return sizeNames[s]
}

// ParseSize reads MINI, SMALL, MEDIUM or LARGE (any case).
func ParseSize(s string) (Size, error) {
	for i, n := range sizeNames {
		if strings.EqualFold(s, n) {
			return Size(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dataset %q: want MINI, SMALL, MEDIUM or LARGE", s)
}

// Instance is one benchmark's arrays, initialised as PolyBench
// initialises them. Each method runs the benchmark once on them, in
// place; make a new Instance for each run.
type Instance interface {
	// Ref runs the plain-Go reference (ref.go).
	Ref()
	// Run runs the gompt kernels on device dev (an OpenMP device number,
	// or target.InitialDevice) through their launchers, inside one
	// target data region where there are several launches.
	Run(dev int) error
	// Outputs are the live-out arrays (those PolyBench prints), in the
	// order the C program hashes them.
	Outputs() [][]float64
}

// Bench is one PolyBench kernel.
type Bench struct {
	Name    string                 // PolyBench's name: "gemm", "jacobi-2d"
	Params  string                 // the parameters' names, in order: "NI NJ NK"
	Sizes   [4][]int               // the parameters of each dataset, Mini to Large
	Kernels []*device.Kernel       // the gompt kernels it launches
	New     func(p []int) Instance // p as Sizes gives them
}

// Args are b's parameters for dataset s.
func (b *Bench) Args(s Size) []int { return b.Sizes[s] }

// Hash is the FNV-1a 64-bit hash of the outputs' bytes (each float64
// little-endian, the arrays one after another), as the C program computes
// it: equal hashes mean equal bits.
func Hash(outs [][]float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, o := range outs {
		for _, v := range o {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return h.Sum64()
}

// All lists the 15 benchmarks, in the order of issue 42.
var All = []*Bench{
	{Name: "gemm", Params: "NI NJ NK", Sizes: [4][]int{{20, 25, 30}, {60, 70, 80}, {200, 220, 240}, {1000, 1100, 1200}},
		Kernels: []*device.Kernel{GemmKernel}, New: newGemm},
	{Name: "2mm", Params: "NI NJ NK NL", Sizes: [4][]int{{16, 18, 22, 24}, {40, 50, 70, 80}, {180, 190, 210, 220}, {800, 900, 1100, 1200}},
		Kernels: []*device.Kernel{TwoMM1Kernel, TwoMM2Kernel}, New: new2mm},
	{Name: "3mm", Params: "NI NJ NK NL NM", Sizes: [4][]int{{16, 18, 20, 22, 24}, {40, 50, 60, 70, 80}, {180, 190, 200, 210, 220}, {800, 900, 1000, 1100, 1200}},
		Kernels: []*device.Kernel{MatMulKernel}, New: new3mm},
	{Name: "atax", Params: "M N", Sizes: [4][]int{{38, 42}, {116, 124}, {390, 410}, {1900, 2100}},
		Kernels: []*device.Kernel{AtaxTmpKernel, AtaxYKernel}, New: newAtax},
	{Name: "bicg", Params: "M N", Sizes: [4][]int{{38, 42}, {116, 124}, {390, 410}, {1900, 2100}},
		Kernels: []*device.Kernel{BicgSKernel, BicgQKernel}, New: newBicg},
	{Name: "mvt", Params: "N", Sizes: [4][]int{{40}, {120}, {400}, {2000}},
		Kernels: []*device.Kernel{MvtX1Kernel, MvtX2Kernel}, New: newMvt},
	{Name: "gesummv", Params: "N", Sizes: [4][]int{{30}, {90}, {250}, {1300}},
		Kernels: []*device.Kernel{GesummvKernel}, New: newGesummv},
	{Name: "syrk", Params: "M N", Sizes: [4][]int{{20, 30}, {60, 80}, {200, 240}, {1000, 1200}},
		Kernels: []*device.Kernel{SyrkKernel}, New: newSyrk},
	{Name: "syr2k", Params: "M N", Sizes: [4][]int{{20, 30}, {60, 80}, {200, 240}, {1000, 1200}},
		Kernels: []*device.Kernel{Syr2kKernel}, New: newSyr2k},
	{Name: "gemver", Params: "N", Sizes: [4][]int{{40}, {120}, {400}, {2000}},
		Kernels: []*device.Kernel{GemverAKernel, GemverXKernel, GemverZKernel, GemverWKernel}, New: newGemver},
	{Name: "jacobi-2d", Params: "TSTEPS N", Sizes: [4][]int{{20, 30}, {40, 90}, {100, 250}, {500, 1300}},
		Kernels: []*device.Kernel{Jacobi2DKernel}, New: newJacobi2D},
	{Name: "fdtd-2d", Params: "TMAX NX NY", Sizes: [4][]int{{20, 20, 30}, {40, 60, 80}, {100, 200, 240}, {500, 1000, 1200}},
		Kernels: []*device.Kernel{FdtdEyKernel, FdtdExKernel, FdtdHzKernel}, New: newFdtd2D},
	{Name: "heat-3d", Params: "TSTEPS N", Sizes: [4][]int{{20, 10}, {40, 20}, {100, 40}, {500, 120}},
		Kernels: []*device.Kernel{Heat3DKernel}, New: newHeat3D},
	{Name: "covariance", Params: "M N", Sizes: [4][]int{{28, 32}, {80, 100}, {240, 260}, {1200, 1400}},
		Kernels: []*device.Kernel{ColMeanKernel, CovCenterKernel, CovKernel}, New: newCovariance},
	{Name: "correlation", Params: "M N", Sizes: [4][]int{{28, 32}, {80, 100}, {240, 260}, {1200, 1400}},
		Kernels: []*device.Kernel{ColMeanKernel, CorrStddevKernel, CorrCenterKernel, CorrKernel}, New: newCorrelation},
}

// fill sets a[i*cols+j] = f(i, j) for a rows x cols array.
func fill(rows, cols int, f func(i, j int) float64) []float64 {
	a := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			a[i*cols+j] = f(i, j)
		}
	}
	return a
}

// fdiv is PolyBench's (DATA_TYPE) a / b for integers a and b.
func fdiv(a, b int) float64 { return float64(a) / float64(b) }

func dev(d int) target.DeviceClause { return target.Dev(d) }

// data runs body in a target data region on dev with maps.
func data(d int, maps []target.Map, body func(target.DeviceClause) error) error {
	return target.Data(d, maps, func() error { return body(dev(d)) })
}

// gemm

type gemm struct {
	ni, nj, nk  int
	alpha, beta float64
	C, A, B     []float64
}

func newGemm(p []int) Instance {
	ni, nj, nk := p[0], p[1], p[2]
	return &gemm{ni: ni, nj: nj, nk: nk, alpha: 1.5, beta: 1.2,
		C: fill(ni, nj, func(i, j int) float64 { return fdiv((i*j+1)%ni, ni) }),
		A: fill(ni, nk, func(i, j int) float64 { return fdiv(i*(j+1)%nk, nk) }),
		B: fill(nk, nj, func(i, j int) float64 { return fdiv(i*(j+2)%nj, nj) })}
}

func (g *gemm) Ref() { refGemm(g.ni, g.nj, g.nk, g.alpha, g.beta, g.C, g.A, g.B) }
func (g *gemm) Run(d int) error {
	return RunGemm(dev(d), g.ni, g.nj, g.nk, g.alpha, g.beta, g.C, g.A, g.B)
}
func (g *gemm) Outputs() [][]float64 { return [][]float64{g.C} }

// 2mm

type twoMM struct {
	ni, nj, nk, nl  int
	alpha, beta     float64
	tmp, A, B, C, D []float64
}

func new2mm(p []int) Instance {
	ni, nj, nk, nl := p[0], p[1], p[2], p[3]
	return &twoMM{ni: ni, nj: nj, nk: nk, nl: nl, alpha: 1.5, beta: 1.2,
		tmp: make([]float64, ni*nj),
		A:   fill(ni, nk, func(i, j int) float64 { return fdiv((i*j+1)%ni, ni) }),
		B:   fill(nk, nj, func(i, j int) float64 { return fdiv(i*(j+1)%nj, nj) }),
		C:   fill(nj, nl, func(i, j int) float64 { return fdiv((i*(j+3)+1)%nl, nl) }),
		D:   fill(ni, nl, func(i, j int) float64 { return fdiv(i*(j+2)%nk, nk) })}
}

func (m *twoMM) Ref() { ref2mm(m.ni, m.nj, m.nk, m.nl, m.alpha, m.beta, m.tmp, m.A, m.B, m.C, m.D) }
func (m *twoMM) Run(d int) error {
	maps := []target.Map{target.Alloc(m.tmp), target.To(m.A), target.To(m.B), target.To(m.C), target.ToFrom(m.D)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunTwoMM1(dv, m.ni, m.nj, m.nk, m.alpha, m.tmp, m.A, m.B); err != nil {
			return err
		}
		return RunTwoMM2(dv, m.ni, m.nj, m.nl, m.beta, m.tmp, m.C, m.D)
	})
}
func (m *twoMM) Outputs() [][]float64 { return [][]float64{m.D} }

// 3mm

type threeMM struct {
	ni, nj, nk, nl, nm  int
	E, A, B, F, C, D, G []float64
}

func new3mm(p []int) Instance {
	ni, nj, nk, nl, nm := p[0], p[1], p[2], p[3], p[4]
	return &threeMM{ni: ni, nj: nj, nk: nk, nl: nl, nm: nm,
		E: make([]float64, ni*nj), F: make([]float64, nj*nl), G: make([]float64, ni*nl),
		A: fill(ni, nk, func(i, j int) float64 { return fdiv((i*j+1)%ni, 5*ni) }),
		B: fill(nk, nj, func(i, j int) float64 { return fdiv((i*(j+1)+2)%nj, 5*nj) }),
		C: fill(nj, nm, func(i, j int) float64 { return fdiv(i*(j+3)%nl, 5*nl) }),
		D: fill(nm, nl, func(i, j int) float64 { return fdiv((i*(j+2)+2)%nk, 5*nk) })}
}

func (m *threeMM) Ref() { ref3mm(m.ni, m.nj, m.nk, m.nl, m.nm, m.E, m.A, m.B, m.F, m.C, m.D, m.G) }
func (m *threeMM) Run(d int) error {
	maps := []target.Map{target.Alloc(m.E), target.Alloc(m.F), target.From(m.G),
		target.To(m.A), target.To(m.B), target.To(m.C), target.To(m.D)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunMatMul(dv, m.ni, m.nj, m.nk, m.E, m.A, m.B); err != nil {
			return err
		}
		if err := RunMatMul(dv, m.nj, m.nl, m.nm, m.F, m.C, m.D); err != nil {
			return err
		}
		return RunMatMul(dv, m.ni, m.nl, m.nj, m.G, m.E, m.F)
	})
}
func (m *threeMM) Outputs() [][]float64 { return [][]float64{m.G} }

// atax

type atax struct {
	m, n         int
	A, x, y, tmp []float64
}

func newAtax(p []int) Instance {
	m, n := p[0], p[1]
	a := &atax{m: m, n: n, y: make([]float64, n), tmp: make([]float64, m),
		A: fill(m, n, func(i, j int) float64 { return fdiv((i+j)%n, 5*m) })}
	fn := float64(n)
	a.x = fill(1, n, func(_, i int) float64 { return 1 + float64(i)/fn })
	return a
}

func (a *atax) Ref() { refAtax(a.m, a.n, a.A, a.x, a.y, a.tmp) }
func (a *atax) Run(d int) error {
	maps := []target.Map{target.To(a.A), target.To(a.x), target.Alloc(a.tmp), target.From(a.y)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunAtaxTmp(dv, a.m, a.n, a.A, a.x, a.tmp); err != nil {
			return err
		}
		return RunAtaxY(dv, a.n, a.m, a.A, a.tmp, a.y)
	})
}
func (a *atax) Outputs() [][]float64 { return [][]float64{a.y} }

// bicg

type bicg struct {
	m, n          int
	A, s, q, p, r []float64
}

func newBicg(pp []int) Instance {
	m, n := pp[0], pp[1]
	return &bicg{m: m, n: n, s: make([]float64, m), q: make([]float64, n),
		p: fill(1, m, func(_, i int) float64 { return fdiv(i%m, m) }),
		r: fill(1, n, func(_, i int) float64 { return fdiv(i%n, n) }),
		A: fill(n, m, func(i, j int) float64 { return fdiv(i*(j+1)%n, n) })}
}

func (b *bicg) Ref() { refBicg(b.m, b.n, b.A, b.s, b.q, b.p, b.r) }
func (b *bicg) Run(d int) error {
	maps := []target.Map{target.To(b.A), target.To(b.p), target.To(b.r), target.From(b.s), target.From(b.q)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunBicgS(dv, b.m, b.n, b.A, b.r, b.s); err != nil {
			return err
		}
		return RunBicgQ(dv, b.n, b.m, b.A, b.p, b.q)
	})
}
func (b *bicg) Outputs() [][]float64 { return [][]float64{b.s, b.q} }

// mvt

type mvt struct {
	n                 int
	x1, x2, y1, y2, A []float64
}

func newMvt(p []int) Instance {
	n := p[0]
	vec := func(off int) []float64 { return fill(1, n, func(_, i int) float64 { return fdiv((i+off)%n, n) }) }
	return &mvt{n: n, x1: vec(0), x2: vec(1), y1: vec(3), y2: vec(4),
		A: fill(n, n, func(i, j int) float64 { return fdiv(i*j%n, n) })}
}

func (v *mvt) Ref() { refMvt(v.n, v.x1, v.x2, v.y1, v.y2, v.A) }
func (v *mvt) Run(d int) error {
	maps := []target.Map{target.To(v.A), target.To(v.y1), target.To(v.y2), target.ToFrom(v.x1), target.ToFrom(v.x2)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunMvtX1(dv, v.n, v.A, v.y1, v.x1); err != nil {
			return err
		}
		return RunMvtX2(dv, v.n, v.A, v.y2, v.x2)
	})
}
func (v *mvt) Outputs() [][]float64 { return [][]float64{v.x1, v.x2} }

// gesummv

type gesummv struct {
	n               int
	alpha, beta     float64
	A, B, tmp, x, y []float64
}

func newGesummv(p []int) Instance {
	n := p[0]
	return &gesummv{n: n, alpha: 1.5, beta: 1.2, tmp: make([]float64, n), y: make([]float64, n),
		x: fill(1, n, func(_, i int) float64 { return fdiv(i%n, n) }),
		A: fill(n, n, func(i, j int) float64 { return fdiv((i*j+1)%n, n) }),
		B: fill(n, n, func(i, j int) float64 { return fdiv((i*j+2)%n, n) })}
}

func (g *gesummv) Ref() { refGesummv(g.n, g.alpha, g.beta, g.A, g.B, g.tmp, g.x, g.y) }
func (g *gesummv) Run(d int) error {
	return RunGesummv(dev(d), g.n, g.alpha, g.beta, g.A, g.B, g.x, g.tmp, g.y)
}
func (g *gesummv) Outputs() [][]float64 { return [][]float64{g.y} }

// syrk

type syrk struct {
	m, n        int
	alpha, beta float64
	C, A        []float64
}

func newSyrk(p []int) Instance {
	m, n := p[0], p[1]
	return &syrk{m: m, n: n, alpha: 1.5, beta: 1.2,
		A: fill(n, m, func(i, j int) float64 { return fdiv((i*j+1)%n, n) }),
		C: fill(n, n, func(i, j int) float64 { return fdiv((i*j+2)%m, m) })}
}

func (s *syrk) Ref() { refSyrk(s.n, s.m, s.alpha, s.beta, s.C, s.A) }
func (s *syrk) Run(d int) error {
	return RunSyrk(dev(d), s.n, s.m, s.alpha, s.beta, s.C, s.A)
}
func (s *syrk) Outputs() [][]float64 { return [][]float64{s.C} }

// syr2k

type syr2k struct {
	m, n        int
	alpha, beta float64
	C, A, B     []float64
}

func newSyr2k(p []int) Instance {
	m, n := p[0], p[1]
	return &syr2k{m: m, n: n, alpha: 1.5, beta: 1.2,
		A: fill(n, m, func(i, j int) float64 { return fdiv((i*j+1)%n, n) }),
		B: fill(n, m, func(i, j int) float64 { return fdiv((i*j+2)%m, m) }),
		C: fill(n, n, func(i, j int) float64 { return fdiv((i*j+3)%n, m) })}
}

func (s *syr2k) Ref() { refSyr2k(s.n, s.m, s.alpha, s.beta, s.C, s.A, s.B) }
func (s *syr2k) Run(d int) error {
	return RunSyr2k(dev(d), s.n, s.m, s.alpha, s.beta, s.C, s.A, s.B)
}
func (s *syr2k) Outputs() [][]float64 { return [][]float64{s.C} }

// gemver

type gemver struct {
	n                             int
	alpha, beta                   float64
	A, u1, v1, u2, v2, w, x, y, z []float64
}

func newGemver(p []int) Instance {
	n := p[0]
	fn := float64(n)
	vec := func(f func(i int) float64) []float64 { return fill(1, n, func(_, i int) float64 { return f(i) }) }
	return &gemver{n: n, alpha: 1.5, beta: 1.2,
		u1: vec(func(i int) float64 { return float64(i) }),
		u2: vec(func(i int) float64 { return (float64(i+1) / fn) / 2.0 }),
		v1: vec(func(i int) float64 { return (float64(i+1) / fn) / 4.0 }),
		v2: vec(func(i int) float64 { return (float64(i+1) / fn) / 6.0 }),
		y:  vec(func(i int) float64 { return (float64(i+1) / fn) / 8.0 }),
		z:  vec(func(i int) float64 { return (float64(i+1) / fn) / 9.0 }),
		x:  make([]float64, n), w: make([]float64, n),
		A: fill(n, n, func(i, j int) float64 { return fdiv(i*j%n, n) })}
}

func (g *gemver) Ref() {
	refGemver(g.n, g.alpha, g.beta, g.A, g.u1, g.v1, g.u2, g.v2, g.w, g.x, g.y, g.z)
}
func (g *gemver) Run(d int) error {
	maps := []target.Map{target.ToFrom(g.A), target.To(g.u1), target.To(g.v1), target.To(g.u2), target.To(g.v2),
		target.To(g.y), target.To(g.z), target.ToFrom(g.x), target.ToFrom(g.w)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunGemverA(dv, g.n, g.A, g.u1, g.v1, g.u2, g.v2); err != nil {
			return err
		}
		if err := RunGemverX(dv, g.n, g.beta, g.A, g.y, g.x); err != nil {
			return err
		}
		if err := RunGemverZ(dv, g.n, g.z, g.x); err != nil {
			return err
		}
		return RunGemverW(dv, g.n, g.alpha, g.A, g.x, g.w)
	})
}
func (g *gemver) Outputs() [][]float64 { return [][]float64{g.w} }

// jacobi-2d

type jacobi2D struct {
	tsteps, n int
	A, B      []float64
}

func newJacobi2D(p []int) Instance {
	tsteps, n := p[0], p[1]
	fn := float64(n)
	return &jacobi2D{tsteps: tsteps, n: n,
		A: fill(n, n, func(i, j int) float64 { return (float64(i)*float64(j+2) + 2) / fn }),
		B: fill(n, n, func(i, j int) float64 { return (float64(i)*float64(j+3) + 3) / fn })}
}

func (s *jacobi2D) Ref() { refJacobi2D(s.tsteps, s.n, s.A, s.B) }
func (s *jacobi2D) Run(d int) error {
	return data(d, []target.Map{target.ToFrom(s.A), target.ToFrom(s.B)}, func(dv target.DeviceClause) error {
		for t := 0; t < s.tsteps; t++ {
			if err := RunJacobi2D(dv, s.n, s.A, s.B); err != nil {
				return err
			}
			if err := RunJacobi2D(dv, s.n, s.B, s.A); err != nil {
				return err
			}
		}
		return nil
	})
}
func (s *jacobi2D) Outputs() [][]float64 { return [][]float64{s.A} }

// fdtd-2d

type fdtd2D struct {
	tmax, nx, ny     int
	ex, ey, hz, fict []float64
}

func newFdtd2D(p []int) Instance {
	tmax, nx, ny := p[0], p[1], p[2]
	return &fdtd2D{tmax: tmax, nx: nx, ny: ny,
		fict: fill(1, tmax, func(_, i int) float64 { return float64(i) }),
		ex:   fill(nx, ny, func(i, j int) float64 { return float64(i) * float64(j+1) / float64(nx) }),
		ey:   fill(nx, ny, func(i, j int) float64 { return float64(i) * float64(j+2) / float64(ny) }),
		hz:   fill(nx, ny, func(i, j int) float64 { return float64(i) * float64(j+3) / float64(nx) })}
}

func (s *fdtd2D) Ref() { refFdtd2D(s.tmax, s.nx, s.ny, s.ex, s.ey, s.hz, s.fict) }
func (s *fdtd2D) Run(d int) error {
	maps := []target.Map{target.ToFrom(s.ex), target.ToFrom(s.ey), target.ToFrom(s.hz)}
	return data(d, maps, func(dv target.DeviceClause) error {
		for t := 0; t < s.tmax; t++ {
			if err := RunFdtdEy(dv, s.nx, s.ny, s.fict[t], s.ey, s.hz); err != nil {
				return err
			}
			if err := RunFdtdEx(dv, s.nx, s.ny, s.ex, s.hz); err != nil {
				return err
			}
			if err := RunFdtdHz(dv, s.nx, s.ny, s.ex, s.ey, s.hz); err != nil {
				return err
			}
		}
		return nil
	})
}
func (s *fdtd2D) Outputs() [][]float64 { return [][]float64{s.ex, s.ey, s.hz} }

// heat-3d

type heat3D struct {
	tsteps, n int
	A, B      []float64
}

func newHeat3D(p []int) Instance {
	tsteps, n := p[0], p[1]
	A := make([]float64, n*n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				A[(i*n+j)*n+k] = float64(i+j+(n-k)) * 10 / float64(n)
			}
		}
	}
	return &heat3D{tsteps: tsteps, n: n, A: A, B: append([]float64(nil), A...)}
}

func (s *heat3D) Ref() { refHeat3D(s.tsteps, s.n, s.A, s.B) }
func (s *heat3D) Run(d int) error {
	return data(d, []target.Map{target.ToFrom(s.A), target.ToFrom(s.B)}, func(dv target.DeviceClause) error {
		for t := 1; t <= s.tsteps; t++ {
			if err := RunHeat3D(dv, s.n, s.A, s.B); err != nil {
				return err
			}
			if err := RunHeat3D(dv, s.n, s.B, s.A); err != nil {
				return err
			}
		}
		return nil
	})
}
func (s *heat3D) Outputs() [][]float64 { return [][]float64{s.A} }

// covariance

type covariance struct {
	m, n            int
	fn              float64
	data, cov, mean []float64
}

func newCovariance(p []int) Instance {
	m, n := p[0], p[1]
	return &covariance{m: m, n: n, fn: float64(n), cov: make([]float64, m*m), mean: make([]float64, m),
		data: fill(n, m, func(i, j int) float64 { return float64(i) * float64(j) / float64(m) })}
}

func (c *covariance) Ref() { refCovariance(c.m, c.n, c.fn, c.data, c.cov, c.mean) }
func (c *covariance) Run(d int) error {
	maps := []target.Map{target.To(c.data), target.Alloc(c.mean), target.From(c.cov)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunColMean(dv, c.m, c.n, c.fn, c.data, c.mean); err != nil {
			return err
		}
		if err := RunCovCenter(dv, c.n, c.m, c.data, c.mean); err != nil {
			return err
		}
		return RunCov(dv, c.m, c.n, c.fn, c.data, c.cov)
	})
}
func (c *covariance) Outputs() [][]float64 { return [][]float64{c.cov} }

// correlation

type correlation struct {
	m, n                     int
	fn                       float64
	data, corr, mean, stddev []float64
}

func newCorrelation(p []int) Instance {
	m, n := p[0], p[1]
	return &correlation{m: m, n: n, fn: float64(n), corr: make([]float64, m*m),
		mean: make([]float64, m), stddev: make([]float64, m),
		data: fill(n, m, func(i, j int) float64 { return float64(i*j)/float64(m) + float64(i) })}
}

func (c *correlation) Ref() { refCorrelation(c.m, c.n, c.fn, c.data, c.corr, c.mean, c.stddev) }
func (c *correlation) Run(d int) error {
	maps := []target.Map{target.To(c.data), target.Alloc(c.mean), target.Alloc(c.stddev), target.From(c.corr)}
	return data(d, maps, func(dv target.DeviceClause) error {
		if err := RunColMean(dv, c.m, c.n, c.fn, c.data, c.mean); err != nil {
			return err
		}
		if err := RunCorrStddev(dv, c.m, c.n, c.fn, c.data, c.mean, c.stddev); err != nil {
			return err
		}
		if err := RunCorrCenter(dv, c.n, c.m, c.fn, c.data, c.mean, c.stddev); err != nil {
			return err
		}
		return RunCorr(dv, c.m, c.n, c.data, c.corr)
	})
}
func (c *correlation) Outputs() [][]float64 { return [][]float64{c.corr} }
