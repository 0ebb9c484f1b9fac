package target_test

import (
	"fmt"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
)

// A target construct on the default device (a Region without a device
// clause; Device: target.Dev(n) names device n): y = 2*x + y, with x
// copied to the device and y copied there and back.
func ExampleTarget() {
	x := []float32{1, 2, 3, 4}
	y := []float32{10, 20, 30, 40}
	err := target.Target(target.Region{
		Kernel: kernels.Saxpy,
		Shape:  target.N(len(x)),
		Maps:   []target.Map{target.To(x), target.ToFrom(y)},
		Args:   []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Slice(y)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y)
	// Output: [12 24 36 48]
}

// A target data region keeps x and y on the device across two constructs:
// nothing is copied between them, and y comes back once, at the end.
func ExampleData() {
	dev := target.DefaultDevice
	x := []float32{1, 1, 1}
	y := []float32{0, 0, 0}
	saxpy := func(a float32) error {
		return target.Target(target.Region{
			Device: target.Dev(dev),
			Kernel: kernels.Saxpy,
			Shape:  target.N(len(x)),
			Args:   []target.Arg{target.Int(len(x)), target.Float32(a), target.Slice(x), target.Slice(y)},
		})
	}
	err := target.Data(dev, []target.Map{target.To(x), target.ToFrom(y)}, func() error {
		if err := saxpy(1); err != nil {
			return err
		}
		return saxpy(2)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y)
	// Output: [3 3 3]
}

// The device memory routines: allocate device memory, copy a slice in,
// run a kernel on the device pointer, copy the result out, free it.
func ExampleAllocMem() {
	dev := target.GetDefaultDevice()
	in := []float32{1, 2, 3}
	out := make([]float32, len(in))
	p, err := target.AllocMem(4*len(in), dev)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer target.FreeMem(p, dev)
	if err := target.Memcpy(target.On(dev, p), target.Host(in), 4*len(in)); err != nil {
		fmt.Println(err)
		return
	}
	err = target.Target(target.Region{
		Device: target.Dev(dev),
		Kernel: kernels.Saxpy, // y = 1*y + y: doubles the device copy in place
		Shape:  target.N(len(in)),
		Args:   []target.Arg{target.Int(len(in)), target.Float32(1), target.Ptr(p), target.Ptr(p)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := target.Memcpy(target.Host(out), target.On(dev, p), 4*len(out)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	// Output: [2 4 6]
}

// A nowait construct returns at once with a Task; Wait returns its error.
func ExampleTargetNowait() {
	n := 3
	x := make([]float32, n)
	t := target.TargetNowait(target.Region{
		Kernel: kernels.Fill,
		Shape:  target.N(n),
		Maps:   []target.Map{target.From(x)},
		Args:   []target.Arg{target.Int(n), target.Float32(7), target.Slice(x)},
	})
	// ... other work on the host ...
	if err := t.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x)
	// Output: [7 7 7]
}

// depend orders nowait constructs without blocking a goroutine: the second
// region reads y after the first has written it (depend(out: y), then
// depend(in: y)), and the update copies y back after both, whichever
// goroutine runs what. Without the depend items the second region could
// run first and y[0] would be 4, not 7.
func ExampleTargetNowait_depend() {
	x := []float32{1, 1}
	y := []float32{0, 0}
	dev := target.DefaultDevice
	if err := target.EnterData(dev, target.To(x), target.Alloc(y)); err != nil {
		fmt.Println(err)
		return
	}
	fill := target.TargetNowait(target.Region{ // y = 3
		Kernel: kernels.Fill,
		Shape:  target.N(len(y)),
		Maps:   []target.Map{target.DependOut(y)},
		Args:   []target.Arg{target.Int(len(y)), target.Float32(3), target.Slice(y)},
	})
	saxpy := target.TargetNowait(target.Region{ // y = 4*x + y
		Kernel: kernels.Saxpy,
		Shape:  target.N(len(x)),
		Maps:   []target.Map{target.DependIn(x), target.DependInOut(y)},
		Args:   []target.Arg{target.Int(len(x)), target.Float32(4), target.Slice(x), target.Slice(y)},
	})
	back := target.UpdateNowait(dev, target.From(y), target.DependIn(y))
	for _, t := range []*target.Task{fill, saxpy, back} {
		if err := t.Wait(); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := target.ExitData(dev, target.Release(x), target.Release(y)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y)
	// Output: [7 7]
}
