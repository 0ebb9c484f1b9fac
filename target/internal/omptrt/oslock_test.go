//go:build linux

package omptrt

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threadGone reports whether OS thread tid of this process ends within
// wait. Go ends a thread only when a goroutine exits while it holds the
// thread (runtime.LockOSThread with no matching unlock); an idle thread
// is kept for later goroutines.
func threadGone(tid uint64, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// assertThreadKept runs f on a goroutine of its own that then returns,
// and fails if the goroutine's OS thread ended with it: f left the thread
// locked. A goroutine that happens to run on the process's main thread
// cannot show it (Go wedges that thread rather than ending it), so one
// call can miss a leak; the tests make several.
func assertThreadKept(t *testing.T, name string, f func()) {
	t.Helper()
	tid := make(chan uint64, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		f()
		// still on f's thread? Lock to read it the same way, then give
		// this lock back: only f's own lock, if it leaked, is left.
		runtime.LockOSThread()
		tid <- gettid()
		runtime.UnlockOSThread()
	}()
	<-exited
	assert.False(t, threadGone(<-tid, 300*time.Millisecond), "%s: the OS thread of the goroutine that ran it ended with the goroutine: it was left locked", name)
}

// TestConstructsGiveTheirOSThreadBack: a construct holds its goroutine's
// OS thread from its first event to its end, and gives it back at End. A
// goroutine that ran constructs (a synchronous one; the deferred task of a
// nowait one, begun on another goroutine) and then returns leaves its
// thread alive: had the construct kept the thread locked, Go would end
// the thread with the goroutine, and a C tool would see thread ids vanish
// (and thread-local state lost) after every construct.
func TestConstructsGiveTheirOSThreadBack(t *testing.T) {
	r := &recorder{emi: true}
	withTool(t, r, 1)
	run := func(name string, f func()) { t.Helper(); assertThreadKept(t, name, f) }
	run("a target construct", func() { region(ompt.KindTarget, 0, 0x11) })
	run("a device memory routine", func() {
		c := RoutineBegin(0x12)
		c.DataOpBegin(ompt.DataOpAlloc, 0x1000, ompt.InitialDevice, 0, 0, 8)
		c.DataOpEnd(0xd000)
		c.End()
	})
	var c *Target
	run("the encountering goroutine of a nowait construct", func() {
		c = TargetBegin(ompt.KindTargetNowait, 0, 0x13)
	})
	require.NotNil(t, c, "TargetBegin of a nowait construct")
	run("the deferred task of a nowait construct", func() {
		c.DataOpBegin(ompt.DataOpTransferToDeviceAsync, 0x1000, ompt.InitialDevice, 0xd000, 0, 16)
		c.DataOpEnd(0xd000)
		c.SubmitBegin(1)
		c.SubmitEnd()
		c.End()
	})
}

// TestNowaitRecordsCarryTheTaskThread: the trace records of a nowait
// construct carry the OS thread id of the thread that ran its deferred
// task (where its target begin, operations and end are dispatched), not
// the encountering thread's and never a made-up id.
func TestNowaitRecordsCarryTheTaskThread(t *testing.T) {
	tt := &traceTool{}
	clks := withTrace(t, tt, 1)
	begun, release := make(chan *Target), make(chan struct{})
	defer close(release)
	var encTID uint64
	go func() {
		runtime.LockOSThread() // kept until the test ends: the task runs on another thread
		defer runtime.UnlockOSThread()
		encTID = gettid()
		begun <- TargetBegin(ompt.KindTargetNowait, 0, 0x21)
		<-release
	}()
	c := <-begun
	require.NotNil(t, c, "TargetBegin of a nowait construct")
	taskTID := make(chan uint64)
	go func() {
		runtime.LockOSThread() // a thread of its own, other than the encountering one
		defer runtime.UnlockOSThread()
		tracedCopy(c, ompt.DataOpTransferToDeviceAsync, 0, 16, clks[0])
		c.End()
		taskTID <- gettid()
	}()
	tid := <-taskTID
	require.NotEqual(t, encTID, tid, "the task ran on the encountering thread")
	require.Equal(t, 1, tt.flush(0), "flush")
	tt.mu.Lock()
	defer tt.mu.Unlock()
	require.Len(t, tt.raw, 3, "records: target begin, data op, target end")
	for i, rec := range tt.raw {
		assert.Equal(t, tid, rec.ThreadID, "record %d: thread_id (the task's thread %d, the encountering thread %d)", i, tid, encTID)
	}
}
