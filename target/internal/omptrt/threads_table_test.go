package omptrt

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// countTool counts thread_begin and thread_end per thread_data slot.
type countTool struct {
	mu          sync.Mutex
	begun, ends map[*ompt.Data]int
	lookup      ompt.LookupFunc
}

func (c *countTool) start(int, string) *ompt.StartResult {
	c.begun, c.ends = map[*ompt.Data]int{}, map[*ompt.Data]int{}
	return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
		c.lookup = l
		set := l("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(_ int, d *ompt.Data) {
			c.mu.Lock()
			c.begun[d]++
			c.mu.Unlock()
		}))
		set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(d *ompt.Data) {
			c.mu.Lock()
			c.ends[d]++
			c.mu.Unlock()
		}))
		return 1
	}}
}

// TestManyThreadsAndCollidingIDs: a process whose OS threads outnumber
// the thread table (4096), and whose thread ids collide in it (here at
// its last slot, so the probe wraps around), still finds every thread's
// own record, never another's, and none for a thread never seen. The
// thread ids are made up (addThread is what Target.hold calls for a new
// OS thread): 4100 real threads would be slow to make.
func TestManyThreadsAndCollidingIDs(t *testing.T) {
	reset(t, nil)
	c := &countTool{}
	ompt.RegisterTool("count", c.start)
	runtime.LockOSThread() // the initial thread, looked up at the end
	defer runtime.UnlockOSThread()
	Start(fakeRuntime{1})
	d := cur.Load()
	require.NotNil(t, d, "no tool active")
	add := func(tid uint64) *threadRec { return addThread(tid) }
	var tids []uint64
	recs := map[uint64]*threadRec{}
	// three ids that hash to the table's last slot
	for tid := uint64(1 << 40); len(tids) < 3; tid++ {
		if threadHash(tid) == threadTabSize-1 {
			tids = append(tids, tid)
			recs[tid] = add(tid)
		}
	}
	for _, tid := range tids {
		assert.Same(t, recs[tid], lookupThread(tid), "colliding thread %#x: its record", tid)
	}
	// fill the table but one slot
	tid := uint64(1 << 41)
	for ; len(tids) < threadTabSize-2; tid++ { // and the initial thread
		tids = append(tids, tid)
		recs[tid] = add(tid)
	}
	free := -1
	for i := range threadTab {
		if threadTab[i].Load() == nil {
			require.Equal(t, -1, free, "more than one free slot")
			free = i
		}
	}
	require.NotEqual(t, -1, free, "no free slot")
	// a thread whose hash is the slot after the free one lands 4095
	// probes away from it, at the end of its probe sequence
	for far := uint64(1 << 43); ; far++ {
		if threadHash(far) == uint64(free+1)%threadTabSize {
			tids = append(tids, far)
			recs[far] = add(far)
			break
		}
	}
	require.Same(t, recs[tids[len(tids)-1]], threadTab[free].Load(), "setup: the last thread did not take the last free slot")
	assert.Same(t, recs[tids[len(tids)-1]], lookupThread(tids[len(tids)-1]), "the thread 4095 slots from its hash: its record")
	// overflow the table
	for ; len(tids) < threadTabSize+10; tid++ {
		tids = append(tids, tid)
		recs[tid] = add(tid)
	}
	require.True(t, threadFull.Load(), "the table did not overflow")
	for _, tid := range tids {
		th := lookupThread(tid)
		if !assert.NotNil(t, th, "thread %#x not found", tid) {
			break
		}
		if !assert.Equal(t, tid, th.tid, "thread %#x: another thread's record", tid) {
			break
		}
	}
	again := addThread(tids[len(tids)-1])
	assert.Same(t, recs[tids[len(tids)-1]], again, "a second insert of an overflowing thread: its record")
	assert.Nil(t, lookupThread(1<<42), "a thread never seen, with the table full")
	assert.NotNil(t, lookupThread(threadID()), "the initial thread, with the table full")

	// the initial thread still holds and ends its life, with the table full
	region(ompt.KindTarget, 0, 1)
	Finalize()
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Len(t, c.begun, 1, "threads given thread_begin")
	assert.Len(t, c.ends, 1, "threads given thread_end")
	for _, th := range recs {
		assert.Zero(t, c.begun[&th.slots[0].thread], "a made-up thread got thread_begin")
	}
}

// TestNewThreadWordOnlyForNativeTools: the word a face hangs beside a
// thread's slots (toolslot.NewThread, target/internal/cabi's C memory) is made for
// each native tool of each new thread, and only for native tools: a Go
// tool's slots get none (the face would leak it, and has nothing to keep
// there).
func TestNewThreadWordOnlyForNativeTools(t *testing.T) {
	reset(t, nil)
	var made []unsafe.Pointer
	var mmu sync.Mutex
	toolslot.NewThread = func() unsafe.Pointer {
		p := unsafe.Pointer(new([8]uint64))
		mmu.Lock()
		made = append(made, p)
		mmu.Unlock()
		return p
	}
	t.Cleanup(func() { toolslot.NewThread = nil })
	// the test's goroutine keeps the initial thread, so the construct
	// below runs on another one
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	goTool, native := &countTool{}, &countTool{}
	ompt.RegisterTool("go", goTool.start)
	RegisterFinder("natives", func(int, string, func(string)) []Found {
		return []Found{{Name: "c", Result: native.start(0, ""), Native: true}}
	})
	Start(fakeRuntime{1})
	require.NotNil(t, native.lookup, "the native tool was not initialized")
	mmu.Lock()
	assert.Len(t, made, 1, "words made for the initial thread")
	mmu.Unlock()
	// a second OS thread enters the runtime
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		region(ompt.KindTarget, 0, 1)
	}()
	<-done
	mmu.Lock()
	assert.Len(t, made, 2, "words made for two threads")
	mmu.Unlock()
	native.mu.Lock()
	goTool.mu.Lock()
	defer native.mu.Unlock()
	defer goTool.mu.Unlock()
	// only the second thread has had a life: Start makes the initial
	// thread's slots, its thread_begin waits for its first event
	assert.Len(t, native.begun, 1, "native tool: threads begun")
	for s := range native.begun {
		assert.Contains(t, made, toolslot.ThreadWord(unsafe.Pointer(s), toolslot.ThreadOffset), "a native tool's thread word is one NewThread made")
	}
	assert.Len(t, goTool.begun, 1, "Go tool: threads begun")
	for s := range goTool.begun {
		assert.Nil(t, toolslot.ThreadWord(unsafe.Pointer(s), toolslot.ThreadOffset), "a Go tool's thread word")
	}
}

// TestGoToolsHaveSlotsOfTheirOwn: two Go tools each keep their own
// thread_data on the same thread: what one stores in thread_begin is what
// its get_thread_data returns later, untouched by the other.
func TestGoToolsHaveSlotsOfTheirOwn(t *testing.T) {
	reset(t, nil)
	mk := func(v uint64, seen, got *ompt.Data) ompt.StartFunc {
		return func(int, string) *ompt.StartResult {
			return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
				get := lookup("ompt_get_thread_data").(ompt.GetThreadDataFunc)
				set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
				set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(_ int, d *ompt.Data) { d.Value = v }))
				set(ompt.CallbackTarget, ompt.TargetCallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) { *seen = *get() }))
				set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(d *ompt.Data) { *got = *d }))
				return 1
			}}
		}
	}
	var seenA, seenB, endA, endB ompt.Data
	ompt.RegisterTool("a", mk(11, &seenA, &endA))
	ompt.RegisterTool("b", mk(22, &seenB, &endB))
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	assert.Equal(t, uint64(11), seenA.Value, "tool a's thread data in its target callback")
	assert.Equal(t, uint64(22), seenB.Value, "tool b's thread data in its target callback")
	Finalize() // the life ends (unless this goroutine's thread was locked: then at the construct's end)
	assert.Equal(t, uint64(11), endA.Value, "tool a's thread_end data")
	assert.Equal(t, uint64(22), endB.Value, "tool b's thread_end data")
}

// TestInitializerThatBlocksKeepsItsThread: Start holds its OS thread
// while the initializers run, so an initializer that blocks (here it waits
// for a goroutine on another thread, 20 times) is still on the thread it
// began on afterwards: get_thread_data answers, the same slot, and the
// thread's first event gives thread_begin that slot.
func TestInitializerThatBlocksKeepsItsThread(t *testing.T) {
	reset(t, nil)
	runtime.LockOSThread() // the construct below runs on Start's thread
	defer runtime.UnlockOSThread()
	req, resp := make(chan struct{}), make(chan struct{})
	go func() { // a goroutine on a thread of its own
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for range req {
			resp <- struct{}{}
		}
	}()
	defer close(req)
	var before, after, inBegin, begun *ompt.Data
	var tid0, tid1 int
	ompt.RegisterTool("waiter", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			get := l("ompt_get_thread_data").(ompt.GetThreadDataFunc)
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(_ int, d *ompt.Data) { begun, inBegin = d, get() }))
			before, tid0 = get(), unix.Gettid()
			for range 20 {
				req <- struct{}{}
				<-resp
			}
			after, tid1 = get(), unix.Gettid()
			return 1
		}}
	})
	Start(fakeRuntime{1})
	assert.Equal(t, tid0, tid1, "the initializer's OS thread changed")
	assert.NotNil(t, before, "get_thread_data in initialize")
	assert.Same(t, before, after, "get_thread_data in initialize, after it waited")
	assert.Nil(t, begun, "thread_begin before the thread's first event")
	region(ompt.KindTarget, 0, 1)
	assert.Same(t, before, begun, "thread_begin of the initial thread: the slot get_thread_data answered in initialize")
	assert.Same(t, begun, inBegin, "get_thread_data inside thread_begin against its thread_data")
}

// TestImplicitTaskEndArguments: at the end of a thread's life its
// implicit task ends as it began: the same task_data and parallel_data,
// index 1, flags ompt_task_initial; the team size is 0 at the end, as in
// LLVM's libomp.
func TestImplicitTaskEndArguments(t *testing.T) {
	reset(t, nil)
	type call struct {
		e         ompt.Endpoint
		par, task *ompt.Data
		size, idx uint32
		flags     int
	}
	var got []call
	ompt.RegisterTool("tasks", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(e ompt.Endpoint, par, task *ompt.Data, size, idx uint32, flags int) {
				got = append(got, call{e, par, task, size, idx, flags})
			}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	Finalize()
	require.Len(t, got, 2, "implicit_task calls")
	b, e := got[0], got[1]
	assert.Equal(t, ompt.ScopeBegin, b.e, "first implicit_task")
	assert.Equal(t, [2]uint32{1, 1}, [2]uint32{b.size, b.idx}, "implicit_task begin: team size, index")
	assert.Equal(t, ompt.ScopeEnd, e.e, "second implicit_task")
	assert.Equal(t, [2]uint32{0, 1}, [2]uint32{e.size, e.idx}, "implicit_task end: team size, index")
	assert.Equal(t, ompt.TaskInitial, e.flags, "implicit_task end: flags")
	assert.Same(t, b.task, e.task, "implicit_task end: task_data against begin's")
	assert.Same(t, b.par, e.par, "implicit_task end: parallel_data against begin's")
}

// TestFinalizeToolInInitializeLeavesTheInterfaceActive: a tool that
// calls ompt_finalize_tool from its initializer leaves no tool active for
// a moment, but the interface stays active for the next tool's
// initializer (start-up is not over), which is kept.
func TestFinalizeToolInInitializeLeavesTheInterfaceActive(t *testing.T) {
	reset(t, nil)
	quitter := &threadTool{finalizeInInit: true}
	ompt.RegisterTool("quitter", quitter.start)
	var during State
	ompt.RegisterTool("next", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int {
			during = CurrentState()
			return 1
		}}
	})
	Start(fakeRuntime{1})
	assert.Equal(t, StateActive, during, "state during the second tool's initializer")
	assert.Equal(t, StateActive, CurrentState(), "state after Start")
	assert.True(t, Enabled(), "Enabled after Start")
}

// TestPanickingImplicitTaskBegin: a Go tool whose implicit_task begin
// callback panics (at a thread's first event) is detached, named on
// stderr; the construct does not panic, and the other tool keeps
// getting events.
func TestPanickingImplicitTaskBegin(t *testing.T) {
	warn := reset(t, nil)
	ompt.RegisterTool("crashy", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(ompt.Endpoint, *ompt.Data, *ompt.Data, uint32, uint32, int) {
				panic("task begin boom")
			}))
			return 1
		}}
	})
	r := &recorder{plain: true}
	ompt.RegisterTool("rec", r.start)
	Start(fakeRuntime{1})
	require.NotPanics(t, func() { region(ompt.KindTarget, 0, 1) }, "a construct with a panicking implicit_task begin")
	assert.Contains(t, warn.String(), `OMPT tool "crashy": a callback panicked: task begin boom; the tool is detached`, "stderr")
	assert.Contains(t, strings.Join(r.got(), "\n"), "target", "the other tool's events")
}

// TestPanickingThreadBeginAndEnd: a Go tool whose thread_begin callback
// panics is detached, and the construct does not panic; one whose
// thread_end panics (when the thread's life ends, with the construct)
// still gets its finalizer, and the OMP_TOOL_VERBOSE_INIT log names the
// callback.
func TestPanickingThreadBeginAndEnd(t *testing.T) {
	warn, read := verboseLog(t, nil)
	ompt.RegisterTool("begins", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) { panic("begin boom") }))
			return 1
		}}
	})
	finalized := false
	ompt.RegisterTool("ends", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{
			Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
				l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) { panic("end boom") }))
				return 1
			},
			Finalize: func(*ompt.Data) { finalized = true },
		}
	})
	Start(fakeRuntime{1})
	require.NotPanics(t, func() { region(ompt.KindTarget, 0, 1) }, "a construct with a panicking thread_begin and thread_end")
	assert.Contains(t, warn.String(), `OMPT tool "begins": a callback panicked: begin boom; the tool is detached`, "stderr")
	require.NotPanics(t, Finalize, "Finalize")
	assert.True(t, finalized, "the tool whose thread_end panicked was not finalized")
	log := read()
	assert.Contains(t, log, `Tool "ends": thread_end callback panicked: end boom.`, "verbose log")
	assert.NotContains(t, log, `Tool "begins": thread_end`, "verbose log")
}

// TestFinalizeToolEndsDevicesInOrder: a tool that calls
// ompt_finalize_tool gets device_finalize for its live devices in device
// number order, whatever order they were initialized in.
func TestFinalizeToolEndsDevicesInOrder(t *testing.T) {
	reset(t, nil)
	var got []int
	var l ompt.LookupFunc
	ompt.RegisterTool("devs", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l = lookup
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) {}))
			set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(n int) { got = append(got, n) }))
			return 1
		}}
	})
	Start(fakeRuntime{3})
	for _, n := range []int{2, 0, 1} {
		require.NoError(t, DeviceInitialize(n, "tick", newTick(0)))
	}
	l("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
	assert.Equal(t, []int{0, 1, 2}, got, "device_finalize order")
}
