// Command prog is the timeline's end-to-end test program: with the real
// runtime, it runs veccopy's constructs and two overlapping nowait
// regions on every offload device, then shuts the runtime down.
package main

import (
	"fmt"
	"os"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	_ "github.com/gompt/gompt/tools/timeline"
)

const n = 1000

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "prog:", err)
		os.Exit(1)
	}
}

func main() {
	for d := range target.NumDevices() {
		a, b := make([]int32, n), make([]int32, n)
		for i := range b {
			b[i] = int32(i)
		}
		region := func(out, in []int32) target.Region {
			return target.Region{Device: target.Dev(d), Kernel: kernels.Copy32, Shape: target.N(n),
				Maps: []target.Map{target.From(out), target.To(in)},
				Args: []target.Arg{target.Int(n), target.Slice(in), target.Slice(out)}}
		}
		check(target.Target(region(a, b)))
		check(target.Data(d, []target.Map{target.ToFrom(a)}, func() error { return target.Update(d, target.To(a)) }))
		check(target.EnterData(d, target.To(b)))
		check(target.ExitData(d, target.From(b)))
		p, err := target.AllocMem(n*4, d)
		check(err)
		check(target.Memcpy(target.On(d, p), target.Host(b), n*4))
		check(target.FreeMem(p, d))
		// separate inputs: a shared one might be present for the second
		// region (mapped by the first), and its copies would not happen
		c, e, b2 := make([]int32, n), make([]int32, n), append([]int32(nil), b...)
		t1 := target.TargetNowait(region(c, b))
		t2 := target.TargetNowait(region(e, b2))
		check(t1.Wait())
		check(t2.Wait())
		for i := range a {
			if a[i] != b[i] || c[i] != b[i] || e[i] != b[i] {
				check(fmt.Errorf("device %d: wrong result at %d", d, i))
			}
		}
	}
	check(target.Shutdown())
	fmt.Println("prog: OK on", target.NumDevices(), "devices")
}
