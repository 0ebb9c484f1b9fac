package devicetest

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/hostexec"
)

// upload allocates the sample's buffers (freed when the test ends), copies
// their contents in, and returns the pointers (0 for scalars) and the launch
// arguments.
func (s *suite) upload(t *testing.T, q device.Queue, k *device.Kernel, smp device.Sample) ([]device.DevicePtr, []device.Arg) {
	t.Helper()
	ptrs := make([]device.DevicePtr, len(k.Params))
	args := make([]device.Arg, len(k.Params))
	copy(args, smp.Args)
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer {
			continue
		}
		var b []byte
		if i < len(smp.Bufs) {
			b = smp.Bufs[i]
		}
		ptrs[i] = alloc(t, s.dev, max(len(b), 1))
		args[i] = device.Arg{Ptr: ptrs[i]}
		must(t, "CopyIn "+p.Name, q.CopyIn(ptrs[i], b))
	}
	return ptrs, args
}

// download copies the sample's buffers out and syncs.
func download(t *testing.T, q device.Queue, smp device.Sample, ptrs []device.DevicePtr) [][]byte {
	t.Helper()
	got := make([][]byte, len(ptrs))
	for i, p := range ptrs {
		if p != 0 && i < len(smp.Bufs) {
			got[i] = make([]byte, len(smp.Bufs[i]))
			must(t, "CopyOut", q.CopyOut(got[i], p))
		}
	}
	must(t, "Sync", q.Sync())
	return got
}

// reference runs k's Go image rounds times on copies of the sample's
// buffers.
func reference(k *device.Kernel, smp device.Sample, rounds int) [][]byte {
	ha := &device.HostArgs{Bufs: make([][]byte, len(k.Params)), Args: make([]device.Arg, len(k.Params)), Kernel: k}
	copy(ha.Args, smp.Args)
	for i, p := range k.Params {
		if p.Kind == device.ParamBuffer && i < len(smp.Bufs) {
			ha.Bufs[i] = slices.Clone(smp.Bufs[i])
			if ha.Bufs[i] == nil {
				ha.Bufs[i] = []byte{}
			}
		}
	}
	for range rounds {
		hostexec.Default().Run(k.Host(), ha, smp.Shape)
	}
	return ha.Bufs
}

// compareBufs compares every buffer of a run with the reference.
func compareBufs(t *testing.T, k *device.Kernel, smp device.Sample, got, want [][]byte, rounds int) {
	t.Helper()
	tol := smp.Tol * float64(rounds)
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer || i >= len(got) {
			continue
		}
		what := fmt.Sprintf("kernel %s buffer %d (%s)", k.Name, i, p.Name)
		g, w := got[i], want[i]
		switch p.Elem {
		case device.ParamFloat32:
			n := len(g) / 4 * 4
			gf, wf := view32(g[:n]), view32(w[:n])
			bad := 0
			for j := range gf {
				if !near(float64(gf[j]), float64(wf[j]), tol) {
					if bad < 5 {
						t.Errorf("%s: element %d = %v, want %v (tolerance %g)", what, j, gf[j], wf[j], tol)
					}
					bad++
				}
			}
			if bad > 5 {
				t.Errorf("%s: %d of %d elements differ", what, bad, len(gf))
			}
			sameBytes(t, what+" trailing bytes", g[n:], w[n:])
		case device.ParamFloat64:
			n := len(g) / 8 * 8
			gf, wf := view64(g[:n]), view64(w[:n])
			bad := 0
			for j := range gf {
				if !near(gf[j], wf[j], tol) {
					if bad < 5 {
						t.Errorf("%s: element %d = %v, want %v (tolerance %g)", what, j, gf[j], wf[j], tol)
					}
					bad++
				}
			}
			if bad > 5 {
				t.Errorf("%s: %d of %d elements differ", what, bad, len(gf))
			}
			sameBytes(t, what+" trailing bytes", g[n:], w[n:])
		default:
			sameBytes(t, what, g, w)
		}
	}
}

// near reports whether a and b agree within relative tolerance tol, with
// magnitudes below 1 counted as 1; NaNs agree with NaNs.
func near(a, b, tol float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	scale := max(math.Abs(a), math.Abs(b), 1)
	return math.Abs(a-b) <= tol*scale
}

func view32(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return f
}

func view64(b []byte) []float64 {
	f := make([]float64, len(b)/8)
	for i := range f {
		var v uint64
		for j := 7; j >= 0; j-- {
			v = v<<8 | uint64(b[8*i+j])
		}
		f[i] = math.Float64frombits(v)
	}
	return f
}

// equalWithin is compareBufs for one buffer, without reporting.
func equalWithin(g, w []byte, elem device.ParamKind, tol float64) bool {
	if len(g) != len(w) {
		return false
	}
	switch elem {
	case device.ParamFloat32:
		n := len(g) / 4 * 4
		gf, wf := view32(g[:n]), view32(w[:n])
		for j := range gf {
			if !near(float64(gf[j]), float64(wf[j]), tol) {
				return false
			}
		}
		return bytes.Equal(g[n:], w[n:])
	case device.ParamFloat64:
		n := len(g) / 8 * 8
		gf, wf := view64(g[:n]), view64(w[:n])
		for j := range gf {
			if !near(gf[j], wf[j], tol) {
				return false
			}
		}
		return bytes.Equal(g[n:], w[n:])
	}
	return bytes.Equal(g, w)
}
