// Command nowait is ctooltest's nowait program: four goroutines each run
// nowait constructs at once on one device (enter data, a target region,
// an update, exit data, each waited for), then the device memory routines
// a tool must see records of too: associate and disassociate, a copy of
// a buffer onto itself and over overlapping ranges of it.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

const n = 512

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "nowait:", err)
		os.Exit(1)
	}
}

func main() {
	dev := flag.Int("device", 0, "device number")
	flag.Parse()
	d := *dev
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, b := make([]int32, n), make([]int32, n)
			for i := range a {
				a[i] = int32(i + g)
			}
			check(target.EnterDataNowait(d, target.To(a), target.Alloc(b)).Wait())
			t := target.TargetNowait(target.Region{Device: target.Dev(d), Kernel: kernels.Copy32, Shape: target.N(n),
				Maps: []target.Map{target.To(a), target.From(b)}, Args: []target.Arg{target.Int(n), target.Slice(a), target.Slice(b)}})
			check(t.Wait())
			check(target.UpdateNowait(d, target.From(b)).Wait())
			check(target.ExitDataNowait(d, target.From(b), target.Delete(a)).Wait())
			for i := range b {
				if b[i] != a[i] {
					check(fmt.Errorf("goroutine %d: b[%d] = %d, want %d", g, i, b[i], a[i]))
				}
			}
		}()
	}
	wg.Wait()
	p, err := target.AllocMem(4*n, d)
	check(err)
	h := make([]int32, n)
	check(target.Associate(h, p, 0, d))
	check(target.Memcpy(target.On(d, p), target.On(d, p), 4*n))
	check(target.Memcpy(target.On(d, p).Add(4), target.On(d, p), 4*n-4))
	check(target.Disassociate(h, d))
	check(target.FreeMem(p, d))
	check(target.Shutdown())
	fmt.Println("nowait: OK")
}
