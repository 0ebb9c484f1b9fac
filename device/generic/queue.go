package generic

import (
	"fmt"

	"github.com/gompt/gompt/device"
)

// Launcher is the vendor part of a plugin queue's launch: what Queue's
// Launch calls around its checks. The methods are called by the
// goroutine using the queue.
type Launcher interface {
	// KernelOf returns the kernel of f, and checks that f is a function
	// of the plugin, loaded on the queue's device, and that the queue
	// takes work: it is not released, the device is not closed or
	// broken. Its errors are the plugin's own (the plugin's messages, as
	// device.Errors). It is called first, before any argument check.
	KernelOf(f device.Function) (k *device.Kernel, err error)

	// EnqueueLaunch enqueues f, which KernelOf accepted, of kernel k,
	// over shape with args, which Queue has checked (CheckLaunch; for a
	// LaunchChecked only the number of arguments, CheckTrusted), and
	// converts a buffer pointer the device does not know into an error
	// of its own. shape is read during the call only. faults reports
	// that the launch passed the queue's fault record to the kernel (a
	// checked kernel, device.Kernel.Checked, or a plugin's own guard),
	// even where the launch then failed: Queue notes k in its fault log,
	// which Sync reads (ReadFaults).
	EnqueueLaunch(f device.Function, k *device.Kernel, shape *device.Shape, args []device.Arg) (faults bool, err error)
}

// QueueConfig describes a queue to Queue.Init.
type QueueConfig struct {
	// ID and Info are the device's: CheckLaunch's errors name ID and it
	// checks Info.MaxTeams. Info is read at each launch; it must not
	// change.
	ID   string
	Info *device.Info

	// ExactThreads refuses a launch whose Shape.Threads is beyond
	// Info.MaxThreadsPerTeam or the kernel's MaxThreads, for a device
	// that runs teams of exactly the threads asked (the host device);
	// otherwise the plugin lowers the team size (a GPU's work-group).
	ExactThreads bool
}

// Queue is the generic part of a plugin's queue, as Device is of its
// device: a plugin's queue type embeds it, calls Init once before the
// queue is used, and implements Launcher. Queue implements
// device.Queue's Launch (the plugin's KernelOf, the launch checks, its
// EnqueueLaunch, the fault log) and device.Profiler (whether the queue
// profiles, and the Timing of the operation enqueued last, which the
// plugin sets with SetLast); a plugin that implements
// device.CheckedLauncher makes the same steps in its LaunchChecked with
// the one check its caller leaves (CheckTrusted). Used by one goroutine
// at a time, as device.Queue is.
type Queue struct {
	impl   Launcher
	c      QueueConfig
	shape  device.Shape // Launch's shape, kept here so that it does not escape per call
	prof   bool
	last   device.Timing
	faults FaultLog
}

// Init makes q the queue of impl, on the device c describes. It panics on
// a nil impl or a config without ID or Info.
func (q *Queue) Init(impl Launcher, c QueueConfig) {
	if impl == nil || c.ID == "" || c.Info == nil {
		panic("generic: Queue.Init needs a Launcher, the device's ID and its Info")
	}
	q.impl, q.c = impl, c
}

// Launch implements device.Queue: the plugin's KernelOf, then the
// launch checks (CheckLaunch and, with QueueConfig.ExactThreads, the
// team size), then its EnqueueLaunch, whose kernel goes into the fault
// log if it got the fault record.
func (q *Queue) Launch(f device.Function, shape device.Shape, args []device.Arg) error {
	k, err := q.impl.KernelOf(f)
	if err != nil {
		return err
	}
	q.shape = shape
	if err := q.checkLaunch(k, &q.shape, args); err != nil {
		return err
	}
	faults, err := q.impl.EnqueueLaunch(f, k, &q.shape, args)
	q.Launched(k, faults)
	return err
}

// CheckTrusted is the one launch check of device.CheckedLauncher's
// LaunchChecked, whose caller has made the others for this device and
// kernel: one argument per parameter of k. A plugin's LaunchChecked
// calls its KernelOf, then CheckTrusted, then its EnqueueLaunch and
// Launched, as Launch does with the full checks, directly: through
// Queue's Launcher the two dynamic calls and a frame cost about 50
// instructions, 5% of an empty target region on the host device.
func (q *Queue) CheckTrusted(k *device.Kernel, args []device.Arg) error {
	if len(args) != len(k.Params) {
		return q.argsErr(k, args)
	}
	return nil
}

// argsErr is CheckTrusted's error for a launch with args that are not
// one per parameter of k.
func (q *Queue) argsErr(k *device.Kernel, args []device.Arg) error {
	return launchErr(q.c.ID, k, k.CheckArgs(args))
}

// Launched notes k in the fault log if its launch passed the queue's
// fault record (faults, EnqueueLaunch's), as Launch does.
func (q *Queue) Launched(k *device.Kernel, faults bool) {
	if faults {
		q.faults.Launched(k)
	}
}

// checkLaunch is CheckLaunch, and with ExactThreads the refusal of more
// threads per team than the device or the kernel runs.
func (q *Queue) checkLaunch(k *device.Kernel, shape *device.Shape, args []device.Arg) error {
	if err := CheckLaunch(q.c.ID, q.c.Info, k, shape, args); err != nil {
		return err
	}
	if q.c.ExactThreads {
		maxThreads := q.c.Info.MaxThreadsPerTeam
		if k.MaxThreads > 0 && (maxThreads <= 0 || k.MaxThreads < maxThreads) {
			maxThreads = k.MaxThreads
		}
		if maxThreads > 0 && shape.Threads > maxThreads {
			return device.Errorf(q.c.ID, "launch "+k.Name, device.CodeInvalidArgument,
				"launch shape: %d threads per team: want at most %d", shape.Threads, maxThreads)
		}
	}
	return nil
}

// Profile implements device.Profiler: while on, the plugin times each
// operation it enqueues (Profiling) and sets it as the last (SetLast).
func (q *Queue) Profile(on bool) { q.prof = on }

// Profiling reports whether the queue profiles the operations enqueued
// now.
func (q *Queue) Profiling() bool { return q.prof }

// Last implements device.Profiler: the timing of the operation enqueued
// last while profiling was on, or nil if there is none.
func (q *Queue) Last() device.Timing { return q.last }

// SetLast makes t the timing of the operation enqueued last.
func (q *Queue) SetLast(t device.Timing) { q.last = t }

// FaultsPending reports whether a launch passed the queue's fault record
// since it was last read: Sync then reads it (ReadFaults) once the
// queue's work is done.
func (q *Queue) FaultsPending() bool { return q.faults.Pending() }

// ReadFaults reads the queue's fault record with the plugin's read and,
// where a check failed, zeroes it with zero (FaultLog.Check), once the
// launches since the last read have completed, and returns the
// *device.KernelFault of the kernel that failed. Nil at once when no
// launch passed the record since.
func (q *Queue) ReadFaults(read func(rec *[4]int64) error, zero func() error) error {
	if !q.faults.Pending() {
		return nil
	}
	return q.faults.Check(read, zero)
}

// MaxTimings bounds the profiled operations a queue keeps unread
// (Timings).
const MaxTimings = 4096

// Timings is a queue's profiled operations whose times are not yet read,
// in order: a plugin whose Timings hold driver events (CUDA's, OpenCL's)
// reads and releases them at Sync (Take), and keeps at most MaxTimings,
// so that a queue that profiles and never syncs holds a bounded number.
// Not safe for concurrent use.
type Timings[T any] struct {
	ts []T
}

// Add appends t and, beyond MaxTimings, returns the oldest half, which
// the caller reads (waiting for them) and releases.
func (l *Timings[T]) Add(t T) (old []T) {
	l.ts = append(l.ts, t)
	if len(l.ts) <= MaxTimings {
		return nil
	}
	n := len(l.ts) / 2
	old = append(old, l.ts[:n]...)
	m := copy(l.ts, l.ts[n:])
	clear(l.ts[m:])
	l.ts = l.ts[:m]
	return old
}

// Take returns every timing added and not yet returned, and empties the
// list.
func (l *Timings[T]) Take() []T {
	ts := l.ts
	l.ts = nil
	return ts
}

// Len returns the number of timings not yet returned.
func (l *Timings[T]) Len() int { return len(l.ts) }

// CheckLaunch checks a launch of k on a device whose limits are info, as
// device.Queue.Launch promises: one argument per parameter and no nil
// buffer pointer (Kernel.CheckArgs), a valid shape (device.CheckShape),
// no more teams than info.MaxTeams. Its errors have CodeInvalidArgument,
// operation "launch NAME" and device id. Queue's Launch makes it between
// the plugin's KernelOf and EnqueueLaunch; a device.CheckedLauncher's
// LaunchChecked compares only the number of arguments with the
// parameters (CheckTrusted). Threads per team beyond the device's or
// the kernel's limit are refused by a Queue with
// QueueConfig.ExactThreads (the host device), and lowered by the plugin
// otherwise (a GPU's work-group size).
func CheckLaunch(id string, info *device.Info, k *device.Kernel, shape *device.Shape, args []device.Arg) error {
	if err := k.CheckArgs(args); err != nil {
		return launchErr(id, k, err)
	}
	if err := device.CheckShape(shape); err != nil {
		return launchErr(id, k, err)
	}
	if info.MaxTeams > 0 && shape.Teams > info.MaxTeams {
		return launchErr(id, k, fmt.Errorf("launch shape: %d teams: want at most %d", shape.Teams, info.MaxTeams))
	}
	if t := k.TeamSize(); t > 0 && shape.Threads != 0 && shape.Threads != t {
		return launchErr(id, k, fmt.Errorf("launch shape: %d threads per team; the kernel runs teams of exactly %d threads (Kernel.TeamSize)", shape.Threads, t))
	}
	return nil
}

func launchErr(id string, k *device.Kernel, err error) error {
	return &device.Error{Op: "launch " + k.Name, Device: id, Code: device.CodeInvalidArgument, Err: err}
}
