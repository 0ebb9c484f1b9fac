// Package mainlife runs the real runtime under a tool with thread
// callbacks that calls ompt_finalize_tool from a target callback on the
// main thread, to which the program's main goroutine is locked (as GUI
// and OpenGL programs do), while a kernel of another goroutine runs on:
// its own test binary, since a tool attaches once per process, and the
// constructs run in TestMain, on the main goroutine.
package mainlife

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/testkit/watchdog"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

func init() {
	runtime.LockOSThread() // main runs on the main thread
	ompt.RegisterTool("mainlife", start)
}

var (
	lookup   ompt.LookupFunc
	armed    atomic.Bool
	quit     sync.Once
	returned atomic.Bool

	evMu   sync.Mutex
	events []string // "ev@tid"
	after  []string // events after the finalizer
	final  bool

	inKernel = make(chan struct{})
	release  = make(chan struct{})
	ran      bool // TestMain ran the constructs on the main thread
	errs     []string
)

func note(ev string) {
	evMu.Lock()
	defer evMu.Unlock()
	if final {
		after = append(after, ev)
	}
	events = append(events, fmt.Sprintf("%s@%d", ev, unix.Gettid()))
}

func start(int, string) *ompt.StartResult {
	return &ompt.StartResult{
		Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) { note("thread_begin") }))
			set(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(e ompt.Endpoint, _, _ *ompt.Data, _, _ uint32, _ int) {
				note("implicit_task " + e.String())
			}))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) { note("thread_end") }))
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _ *ompt.Data, _ uint64, _ uintptr) {
				note("target " + e.String())
				if e != ompt.ScopeBegin || !armed.Load() || unix.Gettid() != os.Getpid() {
					return
				}
				quit.Do(func() {
					stop := watchdog.Start(10*time.Second, "ompt_finalize_tool from a target callback is still waiting after 10 s")
					lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
					stop()
					returned.Store(true)
				})
			}))
			return 1
		},
		Finalize: func(*ompt.Data) {
			note("finalize")
			evMu.Lock()
			final = true
			evMu.Unlock()
		},
	}
}

// block is a kernel that runs until release is closed.
var block = &device.Kernel{
	Name: "block",
	Dims: 1,
	Images: []device.Image{{Kind: device.ImageHost, Entry: "block", Host: func(*device.HostArgs, device.Range, int, int) {
		select {
		case <-inKernel:
		default:
			close(inKernel)
		}
		<-release
	}}},
}

func TestMain(m *testing.M) {
	os.Setenv("GOMPT_PLUGINS", "host")
	os.Setenv("OMP_TOOL", "enabled")
	if unix.Gettid() == os.Getpid() && target.NumDevices() > 0 {
		ran = true
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := target.Target(target.Region{Device: target.Dev(0), Kernel: block, Shape: target.N(1)}); err != nil {
				errs = append(errs, "B: "+err.Error())
			}
		})
		<-inKernel
		armed.Store(true)
		if err := target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
			Args: []target.Arg{target.Int(1)}}); err != nil {
			errs = append(errs, "A: "+err.Error())
		}
		time.Sleep(50 * time.Millisecond)
		close(release)
		wg.Wait()
		if err := target.Shutdown(); err != nil {
			errs = append(errs, "Shutdown: "+err.Error())
		}
	}
	os.Exit(m.Run())
}

// TestFinalizeToolFromACallbackOnTheMainThreadEndsItsLife: the finalize
// returns (the other construct runs on), and the main thread's life,
// which the tool entered there, ends on it before the finalizer:
// implicit_task end and thread_end. Before, the tool never got them: the
// finalizer ran on another goroutine, whose sweep cannot reach the main
// thread, its goroutine locked to it.
func TestFinalizeToolFromACallbackOnTheMainThreadEndsItsLife(t *testing.T) {
	if !ran {
		t.Skip("no offload device, or TestMain was not on the main thread")
	}
	assert.Empty(t, errs)
	evMu.Lock()
	defer evMu.Unlock()
	assert.True(t, returned.Load(), "ompt_finalize_tool returned")
	assert.Empty(t, after, "events after the finalizer")
	main := fmt.Sprint(os.Getpid())
	var mine []string
	for _, e := range events {
		if ev, tid, _ := strings.Cut(e, "@"); tid == main {
			mine = append(mine, ev)
		}
	}
	assert.Equal(t, []string{"thread_begin", "implicit_task begin", "target begin", "implicit_task end", "thread_end"}, mine,
		"the main thread's events (all: %q)", events)
	assert.Equal(t, "finalize", strings.Split(events[len(events)-1], "@")[0], "the last event (all: %q)", events)
}
