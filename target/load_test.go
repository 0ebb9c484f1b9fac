package target

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
)

// A device remembers the kernel it loaded last (dev.last) to skip the map
// lookup: goroutines launching different kernels on one device in turn
// must each run their own kernel's code, never the one found last.
func TestAlternatingKernelsRunTheirOwn(t *testing.T) {
	dev := -1
	for _, d := range Devices() {
		if d.ID == "host:0" {
			dev = d.Num
		}
	}
	if dev < 0 {
		t.Skip("no host:0 device")
	}
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			x, y := make([]float32, n), make([]float32, n)
			for i := range 50 {
				v := float32(g*100 + i)
				if err := Target(Region{Device: Dev(dev), Kernel: kernels.Fill, Shape: N(n),
					Args: []Arg{Int(n), Float32(v), Slice(x)}}); err != nil {
					errs <- err
					return
				}
				clear(y)
				if err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(n),
					Args: []Arg{Int(n), Float32(2), Slice(x), Slice(y)}}); err != nil {
					errs <- err
					return
				}
				if x[n-1] != v || y[0] != 2*v || y[n-1] != 2*v {
					errs <- fmt.Errorf("goroutine %d round %d: fill gave %v, saxpy %v and %v; want %v and %v", g, i, x[n-1], y[0], y[n-1], v, 2*v)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}
