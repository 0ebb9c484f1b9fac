package generic

import (
	"fmt"

	"github.com/gompt/gompt/device"
)

// FaultLog is a queue's account of the checked kernels
// (device.Kernel.Faults) it has launched since it last read its fault
// record: a GPU plugin passes every checked launch of a queue the same
// record (zeroed), reads it back when the queue syncs, and decodes it here
// into the launch's error. The queue's enqueuing goroutine owns it.
type FaultLog struct {
	kernels []*device.Kernel
}

// Launched notes a launch of checked kernel k.
func (l *FaultLog) Launched(k *device.Kernel) {
	for _, seen := range l.kernels {
		if seen == k {
			return
		}
	}
	l.kernels = append(l.kernels, k)
}

// Pending reports whether a checked kernel ran since the record was last
// read.
func (l *FaultLog) Pending() bool { return len(l.kernels) > 0 }

// Read decodes the record rec read back from the device, forgets the
// kernels launched so far, and returns the *device.KernelFault of the one
// whose tag rec carries; nil when no check failed. A record that names no
// kernel the queue launched (a device that wrote what no checked kernel
// writes) is an error too, never a silent pass.
func (l *FaultLog) Read(rec [4]int64) error {
	defer func() {
		clear(l.kernels)
		l.kernels = l.kernels[:0]
	}()
	if rec[0] == 0 {
		return nil
	}
	for _, k := range l.kernels {
		if f := k.Fault(rec); f != nil {
			return f
		}
	}
	return fmt.Errorf("a kernel's fault record names check %d of no kernel this queue launched (tag %#x)", rec[0], rec[3])
}
