package omptrt

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

// Runtime is what the offload runtime (package target) tells the tools
// interface about itself. NumDevices returns the number of offload
// devices N; the initial (host) device is device number N. It is called
// during Start and by ompt_get_num_devices, from any goroutine.
type Runtime interface {
	NumDevices() int
}

// Finder searches for tools outside the Go registry; package target/internal/cabi
// registers one that looks for a C ompt_start_tool in the address space
// and then in OMP_TOOL_LIBRARIES. It is called during Start, after every
// Go tool has been asked, only when tool-var is enabled. It calls each
// candidate's start function with the given version values and returns
// the tools that accepted (the C search stops at its first non-NULL
// result, as the standard says). log writes one line to the
// OMP_TOOL_VERBOSE_INIT log (a no-op when logging is off).
type Finder func(ompVersion int, runtimeVersion string, log func(msg string)) []Found

// Found is a tool a Finder activated.
type Found struct {
	Name   string
	Result *ompt.StartResult
	// Native marks a tool whose callbacks are another language's, called
	// through Go glue of the Finder's package (target/internal/cabi's C tools): its
	// target callbacks (target, data op, submit, map) are dispatched
	// without the recover that detaches a Go tool whose callback panics,
	// which a foreign callback cannot do (a Go panic cannot cross its
	// frames), and which costs about 8 ns per callback.
	Native bool
}

type registered struct {
	name  string
	start ompt.StartFunc
}

type finder struct {
	name string
	find Finder
}

// tool is one activated tool.
type tool struct {
	name   string
	res    *ompt.StartResult
	lookup ompt.LookupFunc
	done   atomic.Bool // detached: no callback is dispatched to it any more
	native bool        // Found.Native: callbacks dispatched without guard

	detached bool // detach has begun; under mu

	devMu sync.Mutex
	devs  map[int]bool // devices it got device_initialize for: true once device_finalize was sent

	// guarded by mu
	initializing bool
	cbs          [numCallbacks]any

	// devLookup is the device lookup this tool gets in device_initialize:
	// its ompt_start_trace makes the tool the owner of the device's trace,
	// whose records then carry the ids the tool holds.
	devLookup ompt.LookupFunc

	idx int // its index among the tools found at Start: its slots in each thread (threads.go)

	lives atomic.Int64 // the thread lives it is in (threads.go): ends detach still owes it
	final atomic.Bool  // its finalizer is due: the lives it is still in end without callbacks
}

const numCallbacks = ompt.CallbackError + 1 // one past the largest event number

// guard recovers a panic of one of t's callbacks, deferred around each
// call with returned set once the callback returns: the tool is detached
// (no callback reaches it any more), the program goes on, and stderr and
// the OMP_TOOL_VERBOSE_INIT log say why. A panic must not take the
// application down with it. A callback that calls runtime.Goexit (as a
// test's t.FailNow does) ends the goroutine that dispatched it, and no
// recover stops that: the tool is detached too, and the constructs the
// goroutine was in are abandoned (see abandonConstructs), so that the
// tool's finalization does not wait for their end, which never comes.
func (t *tool) guard(returned *bool) {
	if *returned {
		return
	}
	t.callbackFailed(recover(), "")
}

// callbackFailed detaches t after its callback (name, for the
// OMP_TOOL_VERBOSE_INIT log, or "") panicked with r, or, r nil, called
// runtime.Goexit: the constructs of the goroutine that dispatched it are
// abandoned then, since it ends inside them.
func (t *tool) callbackFailed(r any, name string) {
	what := fmt.Sprintf("a callback panicked: %v", r)
	if r == nil {
		what = "a callback called runtime.Goexit, which ended the goroutine inside a construct"
		abandonConstructs(getg())
	}
	switch {
	case name == "":
	case r == nil:
		vlogf("Tool %q: %s callback called runtime.Goexit.", t.name, name)
	default:
		vlogf("Tool %q: %s callback panicked: %v.", t.name, name, r)
	}
	if !t.done.Swap(true) {
		fmt.Fprintf(stderr, "gompt: OMPT tool %q: %s; the tool is detached\n", t.name, what)
		if name == "" {
			vlogf("Go tool %q: %s; detached.", t.name, what)
		}
	}
}

var (
	mu         sync.Mutex // guards the registry, tools and publishing
	finders    []finder
	started    bool
	starting   bool // initializers are running: detach must not change the state
	finalized  bool
	active     []*tool // tools that passed initialize and are not detached
	runtimeIfc Runtime

	state atomic.Int32               // State
	cur   atomic.Pointer[dispatcher] // nil: no tool; the one hot-path load

	stderr io.Writer = os.Stderr // warnings; tests replace it
	getenv           = os.Getenv
)

// RegisterFinder adds a tool search that runs after the Go tools, in
// registration order (package target/internal/cabi registers the C search). It panics
// if f is nil or name is already registered.
func RegisterFinder(name string, f Finder) {
	if f == nil {
		panic("ompt: RegisterFinder " + name + " with nil finder")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range finders {
		if r.name == name {
			panic("ompt: RegisterFinder called twice for " + name)
		}
	}
	finders = append(finders, finder{name, f})
}

// CurrentState returns the interface state.
func CurrentState() State { return State(state.Load()) }

// Enabled reports whether any tool is active; one atomic load.
func Enabled() bool { return cur.Load() != nil }

// Listening reports whether a tool listens to constructs (listening): a
// tool is attached and registered a callback, or a device traces; two
// atomic loads. The runtime uses it to skip preparing event arguments
// (the user's call site) that no tool would see.
func Listening() bool { return listening() != nil }

// Start runs tool start-up, once per process: it reads OMP_TOOL and
// OMP_TOOL_VERBOSE_INIT, asks the registered tools and finders, and calls
// each found tool's initializer. The runtime calls it once, lazily, on its
// first OpenMP-level operation (the first construct, device query or
// device routine), after it knows its number of devices and before it
// initializes any device. Later calls, and calls after Finalize, do
// nothing. Safe for concurrent use: a second caller waits until start-up
// is done.
func Start(rt Runtime) {
	startMu.Lock()
	defer startMu.Unlock()
	mu.Lock()
	if started || finalized {
		mu.Unlock()
		return
	}
	started = true
	runtimeIfc = rt
	regs := omptlink.Tools() // RegisterTool's
	fnds := append([]finder(nil), finders...)
	mu.Unlock()

	// The log's lines are LLVM's libomp's (ompt-general.cpp) where the
	// step is the same; Go tools, which LLVM has not, add lines of their own.
	openVerbose()
	if !toolVarEnabled() {
		vlogf("OMP tool disabled. ")
		readMode() // its warnings only: a bad value is named whether or not a tool could use it
		state.Store(int32(StateInactive))
		return
	}
	vlogf("----- START LOGGING OF TOOL REGISTRATION -----")
	setMode(readMode(), rt.NumDevices())
	ended := false
	endLog := func() {
		if !ended {
			ended = true
			vlogf("----- END LOGGING OF TOOL REGISTRATION -----")
		}
	}
	defer endLog()
	state.Store(int32(StatePending))

	var found []*tool
	if len(regs) > 0 {
		vlogf("Searching Go tools (%d registered)...", len(regs))
	}
	for _, r := range regs {
		res, err := callStart(r.Start.(ompt.StartFunc))
		switch {
		case err != nil:
			vlogf("Go tool %q: start function panicked: %v; skipped.", r.Name, err)
		case res == nil:
			vlogf("Go tool %q: start function returned nil; skipped.", r.Name)
		case res.Initialize == nil:
			vlogf("Go tool %q: start result has no Initialize; skipped.", r.Name)
		default:
			vlogf("Go tool %q: start function returned a result; Success.", r.Name)
			t := newTool(r.Name, res)
			t.idx = len(found)
			found = append(found, t)
		}
	}
	for _, f := range fnds {
		list, err := callFinder(f.find)
		if err != nil {
			vlogf("%s: panicked: %v; skipped.", f.name, err)
			continue
		}
		for _, fd := range list {
			if fd.Result == nil || fd.Result.Initialize == nil {
				vlogf("%s: tool %q has no initializer; skipped.", f.name, fd.Name)
				continue
			}
			t := newTool(fd.Name, fd.Result)
			t.native = fd.Native
			t.idx = len(found)
			found = append(found, t)
		}
	}
	if len(found) == 0 {
		vlogf("No OMP tool loaded.")
		state.Store(int32(StateInactive))
		return
	}
	endLog() // LLVM ends the log before it calls the initializer
	toolsFound = found
	state.Store(int32(StateActive))

	// The thread that starts the tools has slots from now on: its task
	// answers get_task_info during initialize. It is an OpenMP thread
	// (thread_begin, implicit_task begin) at its first event, as every
	// thread is (threads.go), not right after the initializers as
	// LLVM's initial thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	addThread(threadID())

	mu.Lock()
	starting = true
	mu.Unlock()
	initial := initialDevice // N, or -1 in 6.0
	var kept []*tool
	for _, t := range found {
		mu.Lock()
		t.initializing = true
		mu.Unlock()
		ret, err := callInitialize(t, initial)
		mu.Lock()
		t.initializing = false
		mu.Unlock()
		switch {
		case err != nil:
			vlogf("Tool %q: initializer panicked: %v; tool dropped.", t.name, err)
			t.done.Store(true)
		case ret == 0:
			vlogf("Tool %q: initializer returned 0; tool dropped.", t.name)
			t.done.Store(true)
		case t.done.Load():
			vlogf("Tool %q: called ompt_finalize_tool during initialize; tool dropped.", t.name)
		default:
			kept = append(kept, t)
		}
	}
	mu.Lock()
	starting = false
	active = kept
	publishLocked()
	mu.Unlock()
	if len(kept) == 0 && len(found) > 0 {
		vlogf("No tool left after initialize: OMPT interface inactive.")
	}
}

var startMu sync.Mutex

// finalizing: a Finalize holds startMu and is shutting the interface
// down.
var finalizing atomic.Bool

// Finalize shuts the tools interface down, at runtime shutdown (the
// runtime's Shutdown routine; programs call it before exit). It
// dispatches device_finalize for every device that was initialized and not
// yet finalized, then calls each active tool's finalizer once, in
// activation order, and leaves the interface inactive. Calling it again,
// or before Start, is harmless; after it, Start does nothing.
//
// It returns once every tool's finalizer has run, also one that an
// ompt_finalize_tool on another thread is finalizing (except when
// called from a callback, which that finalization may be waiting for).
// Called from a tool callback (a construct's, the thread_end a
// finalization dispatches, a buffer callback) while another Finalize is
// in progress, it returns at once: that one may be waiting for the
// callback. Elsewhere a second Finalize waits for the first.
func Finalize() {
	fromCallback := inCallback()
	if fromCallback {
		for !startMu.TryLock() {
			if finalizing.Load() {
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
	} else {
		startMu.Lock()
	}
	defer startMu.Unlock()
	mu.Lock()
	if finalized {
		mu.Unlock()
		return
	}
	finalized = true
	mu.Unlock()
	finalizing.Store(true)
	defer finalizing.Store(false)

	finalizeDevices()

	mu.Lock()
	list := append([]*tool(nil), active...)
	mu.Unlock()
	for _, t := range list {
		detach(t)
	}
	if fromCallback {
		// from a callback, a detach under way may be waiting for its
		// construct: not for it
		waitDetaching()
	} else {
		waitDetaches()
	}
	mu.Lock()
	active = nil
	publishLocked()
	mu.Unlock()
	closeVerbose()
}

// devInit notes that t got device_initialize for device n.
func (t *tool) devInit(n int) {
	t.devMu.Lock()
	if t.devs == nil {
		t.devs = map[int]bool{}
	}
	t.devs[n] = false
	t.devMu.Unlock()
}

// devFinal reports whether device_finalize for device n is due to t (it
// got device_initialize and no device_finalize yet) and marks it sent.
func (t *tool) devFinal(n int) bool {
	t.devMu.Lock()
	defer t.devMu.Unlock()
	if sent, ok := t.devs[n]; !ok || sent {
		return false
	}
	t.devs[n] = true
	return true
}

// publishLocked builds the dispatcher from the active tools and stores it
// (nil when none). Constructs already begun keep the dispatcher they began
// with, so their begin/end pairs stay matched. mu must be held.
func publishLocked() {
	if len(active) == 0 {
		cur.Store(nil)
		if !starting {
			state.Store(int32(StateInactive))
		}
		return
	}
	cur.Store(newDispatcher(active))
	state.Store(int32(StateActive))
}

func newTool(name string, res *ompt.StartResult) *tool {
	t := &tool{name: name, res: res}
	entries := hostEntries(t)
	t.lookup = func(n string) any {
		if f, ok := entries[n]; ok {
			return f
		}
		return nil
	}
	start := ompt.StartTraceFunc(func(dh *ompt.DeviceHandle, request ompt.BufferRequestFunc, complete ompt.BufferCompleteFunc) int {
		h := devOf(dh)
		return startTraceFor(t, h, request, complete)
	})
	t.devLookup = func(n string) any {
		if n == "ompt_start_trace" {
			return start
		}
		return deviceLookup(n)
	}
	return t
}

func callStart(f ompt.StartFunc) (res *ompt.StartResult, err error) {
	err = catch(func() { res = f(ompVersion(), ompt.RuntimeVersion()) })
	return
}

func callFinder(f Finder) (list []Found, err error) {
	err = catch(func() { list = f(ompVersion(), ompt.RuntimeVersion(), func(s string) { vlogf("%s", s) }) })
	return
}

func callInitialize(t *tool, initial int) (ret int, err error) {
	err = catch(func() { ret = t.res.Initialize(t.lookup, initial, &t.res.ToolData) })
	return
}

// catch runs f and turns a panic into an error.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// State is the OMPT interface state of the start-up section of the
// standard.
type State int32

// Interface states.
const (
	StateInactive State = iota // no tool: nothing is dispatched
	StatePending               // tool-var enabled, search not finished
	StateActive                // a tool was found (and, after initialize, kept)
)

func (s State) String() string {
	switch s {
	case StateInactive:
		return "inactive"
	case StatePending:
		return "pending"
	case StateActive:
		return "active"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}
