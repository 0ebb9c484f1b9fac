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

// Check reads the record with read, once the queue's launches since the
// last Check have completed, decodes it (Read), and when a check failed
// zeroes the device's copy with zero for the launches to come. read and
// zero are the plugin's vendor calls, each returning its error wrapped.
func (l *FaultLog) Check(read func(rec *[4]int64) error, zero func() error) error {
	var rec [4]int64
	if err := read(&rec); err != nil {
		l.Read([4]int64{})
		return err
	}
	ferr := l.Read(rec)
	if rec[0] != 0 {
		if err := zero(); err != nil && ferr == nil {
			ferr = err
		}
	}
	return ferr
}

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
