package omptrt

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskEvents makes r register task_create and task_schedule as well;
// panicSchedule makes task_schedule panic.
func taskEvents(panicSchedule bool) func(*recorder) {
	return func(r *recorder) {
		set := r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackTaskCreate, ompt.TaskCreateCallback(func(enc *ompt.Data, _ *ompt.Frame, nt *ompt.Data, flags int, deps bool, code uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("task_create enc=%s new=%s flags=%#x deps=%v code=%#x", r.name(enc), r.name(nt), flags, deps, code)
		}))
		set(ompt.CallbackTaskSchedule, ompt.TaskScheduleCallback(func(prior *ompt.Data, status int, next *ompt.Data) {
			if panicSchedule {
				panic("tool bug in task_schedule")
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.add("task_schedule prior=%s status=%d next=%s", r.name(prior), status, r.name(next))
		}))
	}
}

// nowaitOn runs a nowait construct the way package target does: begun on
// the calling goroutine, its deferred task (one transfer) on another.
func nowaitOn(code uintptr) {
	tg := TargetBegin(ompt.KindTargetNowait, 0, code)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tg.DataOpBegin(ompt.DataOpTransferToDeviceAsync, 0x1000, ompt.InitialDevice, 0xd000, 0, 16)
		tg.DataOpEnd(0xd000)
		tg.End()
	}()
	<-done
}

// TestNowaitTargetTaskEvents: a tool that registers task_create and
// task_schedule sees, for each nowait construct, the target task created
// on the encountering thread, switched to before the construct's target
// begin and completed after its target end, with the construct's
// target_task_data slot; for each construct again when the scope is
// reused; a synchronous construct has no task events.
func TestNowaitTargetTaskEvents(t *testing.T) {
	r := &recorder{emi: true, extra: taskEvents(false)}
	withTool(t, r, 1)
	for range 2 {
		nowaitOn(0x77)
	}
	region(ompt.KindTarget, 0, 0x88)

	var seq []string
	for _, ev := range r.got()[2:] {
		if strings.HasPrefix(ev, "task_") || strings.HasPrefix(ev, "target_emi") {
			seq = append(seq, ev)
		}
	}
	require.Len(t, seq, 12, "events:\n%s", strings.Join(seq, "\n"))
	for c := range 2 {
		s := seq[c*5 : c*5+5]
		// the target task's slot: task_create's new task, ttd of the
		// target events, next of the switch and prior of the completion
		f := strings.Fields(s[0])
		require.Len(t, f, 6, s[0])
		ttd := strings.TrimPrefix(f[2], "new=")
		assert.Equal(t, fmt.Sprintf("task_create %s new=%s flags=%#x deps=false code=0x77", f[1], ttd, ompt.TaskTarget), s[0], "construct %d: task_create", c)
		sw := strings.Fields(s[1])
		require.Len(t, sw, 4, s[1])
		assert.Equal(t, fmt.Sprintf("task_schedule %s status=%d next=%s", sw[1], ompt.TaskSwitch, ttd), s[1], "construct %d: task_schedule switch to the target task", c)
		assert.Contains(t, s[2], "target_emi ompt_target_nowait begin", "construct %d", c)
		assert.Contains(t, s[2], "ttd="+ttd+" ", "construct %d: the begin's target_task_data", c)
		assert.Contains(t, s[3], "target_emi ompt_target_nowait end", "construct %d", c)
		assert.Contains(t, s[3], "ttd="+ttd+" ", "construct %d: the end's target_task_data", c)
		implicit := strings.TrimPrefix(sw[1], "prior=")
		assert.Equal(t, fmt.Sprintf("task_schedule prior=%s status=%d next=%s", ttd, ompt.TaskComplete, implicit), s[4], "construct %d: task_schedule back from the completed target task", c)
	}
	assert.Contains(t, seq[10], "target_emi ompt_target begin", "synchronous construct: no task events")
	assert.Contains(t, seq[11], "target_emi ompt_target end", "synchronous construct: no task events")
}

// TestTaskSchedulePanicDetachesTheTool: a Go tool whose task_schedule
// panics is detached with a warning; the construct runs on and the
// program does not crash.
func TestTaskSchedulePanicDetachesTheTool(t *testing.T) {
	r := &recorder{emi: true, extra: taskEvents(true)}
	withTool(t, r, 1)
	warn := stderr.(interface{ String() string })
	nowaitOn(0x77)
	nowaitOn(0x78)
	assert.Contains(t, warn.String(), "a callback panicked: tool bug in task_schedule")
	var targets []string
	for _, ev := range r.got() {
		if strings.HasPrefix(ev, "target_emi") {
			targets = append(targets, ev)
		}
	}
	assert.Empty(t, targets, "target events after the tool was detached (it panicked at the first switch, before the begin)")
}

// TestWantsMapAndDependences: the runtime builds map and depend lists
// only when a tool listens; a nil scope (no tool), a tool without those
// callbacks and a device memory routine never want them.
func TestWantsMapAndDependences(t *testing.T) {
	var nilT *Target
	assert.False(t, nilT.WantsMap(), "nil scope: WantsMap")
	assert.False(t, nilT.WantsDependences(), "nil scope: WantsDependences")

	r := &recorder{} // device callbacks only
	withTool(t, r, 1)
	c := TargetBegin(ompt.KindTarget, 0, 0x10)
	require.NotNil(t, c)
	assert.False(t, c.WantsMap(), "WantsMap without a map callback")
	assert.False(t, c.WantsDependences(), "WantsDependences without a dependences callback")
	c.End()

	r = &recorder{emi: true, extra: func(r *recorder) {
		set := r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackDependences, ompt.DependencesCallback(func(*ompt.Data, []ompt.Dependence) {}))
	}}
	withTool(t, r, 1)
	c = TargetBegin(ompt.KindTarget, 0, 0x10)
	require.NotNil(t, c)
	assert.True(t, c.WantsMap(), "WantsMap with target_map_emi")
	assert.True(t, c.WantsDependences(), "WantsDependences with dependences")
	c.End()
	p := RoutineBegin(0x20)
	require.NotNil(t, p)
	assert.False(t, p.WantsMap(), "a routine has no map items")
	assert.False(t, p.WantsDependences(), "a routine has no depend items")
	p.End()
}

// TestNowaitTaskFirstEventBegins: a nowait construct's target begin (and
// its target task's switch) comes at its task's first event on the task
// goroutine, whichever event that is: its end (a construct with nothing
// to do) or its map (items already present: no data operation first).
func TestNowaitTaskFirstEventBegins(t *testing.T) {
	r := &recorder{emi: true, extra: taskEvents(false)}
	withTool(t, r, 1)
	run := func(task func(*Target)) []string {
		r.mu.Lock()
		n := len(r.events)
		r.mu.Unlock()
		tg := TargetBegin(ompt.KindTargetNowait, 0, 0x77)
		done := make(chan struct{})
		go func() { defer close(done); task(tg) }()
		<-done
		var kinds []string
		for _, ev := range r.got()[n:] {
			f := strings.Fields(ev)
			k := f[0]
			if k == "target_emi" || k == "task_schedule" {
				k += " " + f[2]
			}
			kinds = append(kinds, k)
		}
		return kinds
	}
	assert.Equal(t, []string{"task_create", "task_schedule status=7", "target_emi begin", "target_emi end", "task_schedule status=1"},
		run(func(c *Target) { c.End() }), "a nowait construct with no operations")
	assert.Equal(t, []string{"task_create", "task_schedule status=7", "target_emi begin", "map_emi", "target_emi end", "task_schedule status=1"},
		run(func(c *Target) {
			c.Map([]uintptr{0x1000}, []uintptr{0xd000}, []uint64{8}, []uint32{ompt.MapFlagTo})
			c.End()
		}), "a nowait construct whose first event is its map")
	var nilT *Target
	assert.Zero(t, nilT.ID(), "a nil scope's target_id")
}

// TestFinalizeToolWaitsForAHandedOffNowaitConstruct: ompt_finalize_tool
// counts a nowait construct whose task has not run yet (handed off by
// the encountering goroutine, owned by none) as in progress: it returns
// after the construct ended, and the finalizer comes last.
func TestFinalizeToolWaitsForAHandedOffNowaitConstruct(t *testing.T) {
	r := &recorder{emi: true}
	withTool(t, r, 1)
	tg := TargetBegin(ompt.KindTargetNowait, 0, 0x77)
	require.NotNil(t, tg)
	fin := r.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)
	finished := make(chan struct{})
	go func() { defer close(finished); fin() }()
	select {
	case <-finished:
		assert.Fail(t, "ompt_finalize_tool returned while a nowait construct's task had yet to run")
	case <-time.After(50 * time.Millisecond):
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tg.DataOpBegin(ompt.DataOpTransferToDeviceAsync, 0x1000, ompt.InitialDevice, 0xd000, 0, 16)
		tg.DataOpEnd(0xd000)
		tg.End()
	}()
	<-ended
	<-finished
	got := r.got()
	require.NotEmpty(t, got)
	assert.Equal(t, "finalize", got[len(got)-1], "the finalizer comes last")
}
