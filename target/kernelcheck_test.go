package target

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A kernel declared wrong (the mistakes device.Kernel.Check names) is
// refused by Target and TargetNowait on every device before any device
// work, with the mistake in the error: before, a repeated parameter name,
// Dims 7, no name or a negative MaxThreads ran (and returned nil), and an
// unknown kind gave a message about another parameter. A correct copy of
// the same kernel still runs afterwards, and a declaration that failed
// fails again at its next use (it is not remembered as checked).
func TestKernelDeclarationRefusedBeforeAnyWork(t *testing.T) {
	r, devs := everyDevice(t)
	cases := []struct {
		name string
		mod  func(k *device.Kernel)
		want string
	}{
		{"kind 0", func(k *device.Kernel) { k.Params[0].Kind = 0 }, "kernel saxpy parameter n: unknown kind"},
		{"kind 99", func(k *device.Kernel) { k.Params[1].Kind = 99 }, "kernel saxpy parameter a: unknown kind"},
		{"Dims 7", func(k *device.Kernel) { k.Dims = 7 }, "kernel saxpy: Dims 7: want 1 to 3"},
		{"repeated name", func(k *device.Kernel) { k.Params[1].Name = "n" }, "kernel saxpy: parameters 0 and 1 are both named n"},
		{"no name", func(k *device.Kernel) { k.Name = "" }, "kernel has no name"},
		{"negative MaxThreads", func(k *device.Kernel) { k.MaxThreads = -4 }, "kernel saxpy: MaxThreads -4 is negative"},
		{"Len on a scalar", func(k *device.Kernel) { k.Params[0].Len = "n" }, "kernel saxpy parameter n: kind int64 is a scalar"},
		{"Len naming no parameter", func(k *device.Kernel) { k.Params[2].Len = "m" }, `kernel saxpy parameter x: Len "m"`},
	}
	for _, dev := range devs {
		before, counted := kcMemInUse(r, dev)
		for _, c := range cases {
			k := *kernels.Saxpy
			k.Params = append([]device.Param(nil), k.Params...)
			c.mod(&k)
			x, y := vecs(16)
			reg := Region{Device: Dev(dev), Kernel: &k, Shape: N(16), Maps: []Map{To(x), ToFrom(y)},
				Args: []Arg{Int(16), Float32(2), Slice(x), Slice(y)}}
			for round := range 2 {
				wantErr(t, dev, c.name, Target(reg), "target: "+c.want)
				wantErr(t, dev, c.name+" nowait", TargetNowait(reg).Wait(), "target: "+c.want)
				assert.Equal(t, float32(10), y[5], "device %d: %s (round %d): y[5] after the refused constructs", dev, c.name, round)
			}
		}
		if counted {
			after, _ := kcMemInUse(r, dev)
			assert.Equal(t, before, after, "device %d: device memory in use after the refused constructs", dev)
		}
		// The declaration the copies came from is untouched and runs.
		x, y := vecs(16)
		require.NoError(t, Target(saxpyRegion(dev, 16, 2, x, y, To(x), ToFrom(y))), "device %d: saxpy", dev)
		assert.Equal(t, float32(2*5+10), y[5], "device %d: y[5] after saxpy", dev)
	}
}

// Kernels checked once are remembered by pointer: alternating between
// two correct kernels and a wrong one keeps refusing the wrong one and
// running the others, from several goroutines at once.
func TestKernelDeclarationCheckedConcurrently(t *testing.T) {
	hostRuntime(t)
	bad := *kernels.Fill
	bad.Params = append([]device.Param(nil), bad.Params...)
	bad.Params[0].Kind = 42
	const workers = 4
	errs := make(chan error, workers*3*20)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 20 {
				x := make([]float32, 8)
				errs <- Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(8), Maps: []Map{From(x)}, Args: []Arg{Int(8), Float32(float32(w + i)), Slice(x)}})
				if x[7] != float32(w+i) {
					errs <- assert.AnError
				}
				errs <- Target(Region{Device: Dev(0), Kernel: &bad, Shape: N(8), Maps: []Map{From(x)}, Args: []Arg{Int(8), Float32(1), Slice(x)}})
				y := make([]float32, 8)
				errs <- Target(saxpyRegion(0, 8, 1, x, y, To(x), ToFrom(y)))
			}
		}()
	}
	for range workers {
		<-done
	}
	close(errs)
	var refused, failed int
	for err := range errs {
		switch {
		case err == nil:
		case err == assert.AnError:
			failed++
		default:
			assert.ErrorContains(t, err, "target: kernel fill parameter n: unknown kind")
			refused++
		}
	}
	assert.Equal(t, workers*20, refused, "constructs of the wrong kernel refused")
	assert.Zero(t, failed, "fill constructs whose result was wrong")
}

// kcMemInUse is the bytes in use on offload device dev, where its plugin
// counts them (device.MemInfo).
func kcMemInUse(r *runtimeState, dev int) (int64, bool) {
	if dev < 0 || dev >= len(r.devs) {
		return 0, false
	}
	mi, ok := r.devs[dev].d.(device.MemInfo)
	if !ok {
		return 0, false
	}
	b, _ := mi.MemInUse()
	return b, true
}
