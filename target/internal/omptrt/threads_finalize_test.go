package omptrt

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threadTool is a Go tool that counts the thread events it gets.
type threadTool struct {
	mu             sync.Mutex
	events         []string
	lookup         ompt.LookupFunc
	panicTaskEnd   bool // its implicit_task end callback panics
	finalizeInInit bool // it calls ompt_finalize_tool from its initializer
}

func (tt *threadTool) add(ev string) {
	tt.mu.Lock()
	tt.events = append(tt.events, ev)
	tt.mu.Unlock()
}

func (tt *threadTool) got() string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return strings.Join(tt.events, ", ")
}

func (tt *threadTool) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{
		Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			tt.lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) { tt.add("thread_begin") }))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) { tt.add("thread_end") }))
			set(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(e ompt.Endpoint, _, _ *ompt.Data, _, _ uint32, _ int) {
				tt.add(fmt.Sprintf("implicit_task %v", e))
				if e == ompt.ScopeEnd && tt.panicTaskEnd {
					panic("task end boom")
				}
			}))
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, e ompt.Endpoint, _ int, _ *ompt.Data, _ uint64, _ uintptr) {
				tt.add(fmt.Sprintf("target %v", e))
			}))
			if tt.finalizeInInit {
				l("ompt_finalize_tool").(ompt.FinalizeToolFunc)()
			}
			return 1
		},
		Finalize: func(*ompt.Data) { tt.add("finalize") },
	}
}

// TestNoThreadBeginAfterFinalizeTool: once a tool has called
// ompt_finalize_tool, a thread whose life begins after it (here the
// thread that runs a nowait construct's target task, begun before the
// call; the encountering thread holds no life for it) gives it no
// thread_begin: its only event is finalize.
func TestNoThreadBeginAfterFinalizeTool(t *testing.T) {
	reset(t, nil)
	// the test's goroutine keeps the initial thread, so the target task
	// below runs on another OS thread, one the runtime has not seen
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := &threadTool{}
	ompt.RegisterTool("a", a.start)
	Start(fakeRuntime{1})
	c := TargetBegin(ompt.KindTargetNowait, 0, 1)
	set := a.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	finished := make(chan struct{})
	go func() { defer close(finished); a.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() }()
	// finalize_tool waits for the construct; it has begun when set_callback fails
	for deadline := time.Now().Add(10 * time.Second); set(ompt.CallbackDeviceLoad, nil) != ompt.SetError; {
		require.False(t, time.Now().After(deadline), "set_callback still succeeds 10 s after ompt_finalize_tool was called")
		time.Sleep(time.Millisecond)
	}
	ran := make(chan struct{})
	go func() { // the target task
		defer close(ran)
		c.SubmitBegin(1)
		c.SubmitEnd()
		c.End()
	}()
	<-ran
	<-finished
	assert.Equal(t, "finalize", a.got(), "tool events")
}

// TestThreadEndAfterPanickingImplicitTaskEnd: a tool whose implicit_task
// end callback panics (at the end of a thread's life) still gets that
// thread's thread_end and its finalizer, and the OMP_TOOL_VERBOSE_INIT
// log says what panicked.
func TestThreadEndAfterPanickingImplicitTaskEnd(t *testing.T) {
	file := filepath.Join(t.TempDir(), "init.log")
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": file})
	a := &threadTool{panicTaskEnd: true}
	ompt.RegisterTool("a", a.start)
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	Finalize()
	assert.Equal(t, "thread_begin, implicit_task begin, target begin, target end, implicit_task end, thread_end, finalize", a.got(), "tool events")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), `Tool "a": implicit_task callback panicked: task end boom.`, "verbose log")
}

// TestFinalizeToolInInitializeIsLogged: a tool that calls
// ompt_finalize_tool from its initializer is dropped (no callback, no
// thread_begin), and the OMP_TOOL_VERBOSE_INIT log says why.
func TestFinalizeToolInInitializeIsLogged(t *testing.T) {
	file := filepath.Join(t.TempDir(), "init.log")
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": file})
	a := &threadTool{finalizeInInit: true}
	ompt.RegisterTool("quitter", a.start)
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	Finalize()
	got := a.got()
	assert.NotContains(t, got, "thread_begin", "a tool that finalized itself in its initializer got")
	assert.NotContains(t, got, "target", "a tool that finalized itself in its initializer got")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), `Tool "quitter": called ompt_finalize_tool during initialize; tool dropped.`, "verbose log")
}
