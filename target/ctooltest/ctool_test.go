// Package ctooltest runs a C tool of its own (testdata/cthreads.c, built
// by the tests against omp-tools.h) on the real runtime, in child
// processes of the test binary: the tools interface starts once per
// process, and a hang must fail the test, not stop it.
package ctooltest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	"github.com/gompt/gompt/target/internal/cabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "GOMPT_CTOOLTEST_CHILD"

// TestMain runs the child's workload when the test binary is started as a
// child (childEnv set), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	// This process only counts the devices; the programs and children run
	// the tools (each child's environment names its own).
	os.Setenv("GOMPT_PLUGINS", "host,opencl")
	os.Setenv("OMP_TOOL_LIBRARIES", "")
	code := m.Run()
	target.Shutdown()
	if toolsRoot != "" {
		os.RemoveAll(toolsRoot)
	}
	os.Exit(code)
}

// With $CT_LOCKMAIN=1 the child's main goroutine locks itself to the
// main thread in init, as GUI and OpenGL programs do, and runs the
// constructs itself.
func init() {
	if os.Getenv(childEnv) != "" && os.Getenv("CT_LOCKMAIN") == "1" {
		runtime.LockOSThread()
	}
}

// child runs constructs from many goroutines over every device (or, with
// $CT_LOCKMAIN=1, from its main goroutine locked to the main thread),
// then shuts the runtime down. $CT_NOWAIT=1 adds nowait constructs.
func child() int {
	n := target.NumDevices()
	goroutines, _ := strconv.Atoi(os.Getenv("CT_GOROUTINES"))
	iters, _ := strconv.Atoi(os.Getenv("CT_ITERS"))
	nowait := os.Getenv("CT_NOWAIT") == "1"
	onMain := os.Getenv("CT_LOCKMAIN") == "1"
	if onMain {
		goroutines = 1
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	fails := 0
	for g := range goroutines {
		wg.Add(1)
		body := func() {
			defer wg.Done()
			x := make([]float32, 64)
			for i := range iters {
				dev := (g + i) % n
				r := target.Region{Device: target.Dev(dev), Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
					Args: []target.Arg{target.Int(1)}, Maps: []target.Map{target.ToFrom(x)}}
				var err error
				if nowait && i%2 == 1 {
					err = target.TargetNowait(r).Wait()
				} else {
					err = target.Target(r)
				}
				if err != nil {
					mu.Lock()
					fails++
					mu.Unlock()
					fmt.Println("FAIL: target:", err)
				}
			}
		}
		if onMain {
			body()
		} else {
			go body()
		}
	}
	wg.Wait()
	if err := target.Shutdown(); err != nil {
		fmt.Println("FAIL: shutdown:", err)
		return 1
	}
	fmt.Println("child done")
	if fails > 0 {
		return 1
	}
	return 0
}

var (
	toolMu    sync.Mutex
	toolLibs  = map[string]string{}
	toolErrs  = map[string]error{}
	toolsRoot string
)

// buildTool compiles testdata/cthreads.c once per test binary.
func buildTool(t *testing.T) string { return buildNamed(t, "cthreads") }

// buildNamed compiles testdata/NAME.c into libNAME.so, once per test
// binary.
func buildNamed(t *testing.T, name string) string {
	t.Helper()
	if !cabi.Available {
		require.Empty(t, os.Getenv("CI"), "CI is set but C tools need cgo")
		t.Skip("C tools need cgo")
	}
	toolMu.Lock()
	lib, done := toolLibs[name]
	err := toolErrs[name]
	if !done {
		if toolsRoot == "" {
			toolsRoot, err = os.MkdirTemp("", "gompt-ctooltest-")
		}
		if err == nil {
			lib = filepath.Join(toolsRoot, "lib"+name+".so")
			err = ctoolbuild.BuildTool(lib, filepath.Join("testdata", name+".c"))
		}
		toolLibs[name], toolErrs[name] = lib, err
	}
	toolMu.Unlock()
	if err != nil {
		if os.Getenv("CI") != "" {
			require.NoError(t, err, "CI is set")
		}
		t.Skip(err)
	}
	return lib
}

// run starts the child under the C tool cthreads with env and returns
// the tool's lines; it fails the test if the child does not exit within
// the limit (a hang) or fails, or if the tool reports an error.
func run(t *testing.T, env ...string) []string {
	t.Helper()
	lines := runTool(t, buildTool(t), env...)
	for _, l := range lines {
		assert.False(t, strings.HasPrefix(l, "ct error"), "tool: %s", l)
	}
	return lines
}

// runTool starts the child under the C tool lib with env and returns the
// lines the tool wrote to $CT_OUTPUT; it fails the test if the child
// does not exit within the limit (a hang) or fails.
func runTool(t *testing.T, lib string, env ...string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ct.out")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "OMP_TOOL=enabled", "OMP_TOOL_LIBRARIES="+lib, "CT_OUTPUT="+out)
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung (killed after 90 s); its output:\n%s", b)
	require.NoError(t, err, "child:\n%s", b)
	require.Contains(t, string(b), "child done", "the child's output")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// field returns the integer value of key=... in the first line that
// starts with prefix, failing the test if there is none.
func field(t *testing.T, lines []string, prefix, key string) int {
	t.Helper()
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		for _, f := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(f, key+"="); ok {
				n, err := strconv.Atoi(v)
				require.NoError(t, err, "%q", l)
				return n
			}
		}
	}
	require.Failf(t, "no such field", "no %s=... in a line starting %q in:\n%s", key, prefix, strings.Join(lines, "\n"))
	return 0
}

func has(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// plugins returns the GOMPT_PLUGINS values to run on: the host, and
// OpenCL (POCL) where it is installed (CI: required).
func plugins(t *testing.T) []string {
	ps := []string{"host"}
	if _, err := os.Stat("/etc/OpenCL/vendors"); err == nil || os.Getenv("CI") != "" {
		ps = append(ps, "opencl,host")
	}
	return ps
}

// Each device's buffer_complete flushes every other device, with eight
// host devices and eight goroutines: every flush completes or returns 0,
// the program exits, every device gets device_finalize before finalize.
func TestCrossDeviceFlushFromBufferComplete(t *testing.T) {
	for _, p := range plugins(t) {
		t.Run(p, func(t *testing.T) {
			lines := run(t, "CT_MODE=crossflush", "GOMPT_PLUGINS="+p, "GOMPT_HOST_DEVICES=8", "CT_GOROUTINES=8", "CT_ITERS=400")
			devs := field(t, lines, "ct finalize", "devices")
			assert.GreaterOrEqual(t, devs, 8, "devices")
			assert.Equal(t, devs, field(t, lines, "ct finalize", "device_finalize"), "device_finalize against devices")
			assert.NotZero(t, field(t, lines, "ct finalize", "flushes_ok"), "cross-device flushes completed")
			assert.Equal(t, 8*400, field(t, lines, "ct finalize", "targets"), "target regions ended")
		})
	}
}

// ompt_finalize_tool from a target callback and from buffer_complete:
// outstanding records are delivered and every device gets
// device_finalize before finalize; nothing comes after finalize (the tool
// reports any callback after it as an error).
func TestFinalizeToolFromCallbacks(t *testing.T) {
	for _, mode := range []string{"finalize_target", "finalize_buffer"} {
		for _, p := range plugins(t) {
			t.Run(mode+"/"+p, func(t *testing.T) {
				lines := run(t, "CT_MODE="+mode, "GOMPT_PLUGINS="+p, "GOMPT_HOST_DEVICES=3", "CT_GOROUTINES=6", "CT_ITERS=100", "CT_NOWAIT=1")
				require.True(t, has(lines, "ct finalize_tool returned"), "finalize_tool was not called or did not return:\n%s", strings.Join(lines, "\n"))
				devs := field(t, lines, "ct finalize", "devices")
				assert.GreaterOrEqual(t, devs, 3, "devices")
				assert.Equal(t, devs, field(t, lines, "ct finalize", "device_finalize"), "device_finalize before finalize, against devices")
				assert.NotContains(t, lines[len(lines)-1], "after finalize", "a callback after finalize")
			})
		}
	}
}

// Every target record's thread_id is the thread that ran its
// callbacks, with goroutines over three devices and nowait constructs.
func TestRecordThreadIsCallbackThread(t *testing.T) {
	for _, p := range plugins(t) {
		t.Run(p, func(t *testing.T) {
			lines := run(t, "GOMPT_PLUGINS="+p, "GOMPT_HOST_DEVICES=3", "CT_GOROUTINES=6", "CT_ITERS=300", "CT_NOWAIT=1")
			require.NotZero(t, field(t, lines, "ct finalize", "records"), "records delivered")
			assert.Zero(t, field(t, lines, "ct finalize", "bad_tid_records"), "target records that carry another thread than their callbacks'")
		})
	}
}

// Each OS thread is an OpenMP thread to the tool, with goroutines over
// three devices and nowait constructs: thread_begin and an implicit
// initial task at a thread's first event, thread_data and
// get_task_info(0) of the calling thread (the tool checks them in every
// callback against the thread's own state, and keeps a per-thread shadow
// stack of target regions), NULL and 0 on a thread the runtime never saw,
// implicit_task end and thread_end for each at Shutdown; task_create and
// task_schedule (switch and complete) for each nowait construct's target
// task. The mandatory callbacks are accepted with ompt_set_always.
func TestThreadsAndTasks(t *testing.T) {
	for _, p := range plugins(t) {
		t.Run(p, func(t *testing.T) {
			lines := run(t, "CT_THREADS=1", "GOMPT_PLUGINS="+p, "GOMPT_HOST_DEVICES=3", "CT_GOROUTINES=6", "CT_ITERS=100", "CT_NOWAIT=1")
			for _, ev := range []string{"thread_begin", "thread_end", "implicit_task", "task_create", "task_schedule", "parallel_begin", "parallel_end"} {
				assert.True(t, has(lines, "ct set_callback "+ev+" = 5"), "set_callback(%s) is not ompt_set_always (5)", ev)
			}
			begin, end := field(t, lines, "ct threads", "begin"), field(t, lines, "ct threads", "end")
			assert.NotZero(t, begin, "thread_begin")
			assert.Equal(t, begin, end, "thread_end against thread_begin")
			ib, ie := field(t, lines, "ct threads", "implicit_begin"), field(t, lines, "ct threads", "implicit_end")
			assert.Equal(t, begin, ib, "implicit_task begin, one per thread")
			assert.Equal(t, begin, ie, "implicit_task end, one per thread")
			nowait := 6 * 100 / 2
			assert.Equal(t, nowait, field(t, lines, "ct threads", "task_create"), "task_create, one per nowait construct")
			assert.Equal(t, 2*nowait, field(t, lines, "ct threads", "task_schedule"), "task_schedule, two per nowait construct")
		})
	}
}

// Each thread's life ends on its own thread, with 8 goroutines running
// synchronous and nowait constructs over three devices at once, under a
// C tool that keeps per-thread state as Archer does (a thread-local
// variable made at thread_begin, freed at thread_end) and records
// pthread_self() at every begin and end (testdata/cthreadlife.c): every
// thread_end and implicit_task end comes on the thread of its begin,
// implicit tasks balance, target events come inside a life, and nothing
// comes after finalize, and each OS thread has one life, however many
// constructs ran on it (the 20,000 constructs gave 10 to 12 lives when
// this was written, where lives of one construct gave 20,000).
// (Before lives were spans of the runtime's holds, every thread ended at
// Shutdown, on the thread that called it.)
func TestEachThreadEndsOnItsOwnThread(t *testing.T) {
	lib := buildNamed(t, "cthreadlife")
	for _, p := range plugins(t) {
		t.Run(p, func(t *testing.T) {
			const goroutines, iters = 8, 2500
			lines := runTool(t, lib, "GOMPT_PLUGINS="+p, "GOMPT_HOST_DEVICES=3", "CT_GOROUTINES="+strconv.Itoa(goroutines), "CT_ITERS="+strconv.Itoa(iters), "CT_NOWAIT=1")
			var errs []string
			for _, l := range lines {
				if strings.HasPrefix(l, "lt error") {
					errs = append(errs, l)
				}
			}
			if len(errs) > 10 {
				errs = append(errs[:10], fmt.Sprintf("... and %d more", len(errs)-10))
			}
			assert.Empty(t, errs, "what the tool found wrong")
			require.True(t, strings.HasPrefix(lines[len(lines)-1], "lt finalize "), "the tool's last line is not its finalize (a callback after it?):\n%s", lines[len(lines)-1])
			get := func(k string) int { return field(t, lines, "lt finalize", k) }
			assert.GreaterOrEqual(t, get("os_threads"), 2, "OS threads that got thread_begin")
			assert.Zero(t, get("cross_thread_ends"), "thread_end on another thread than its thread_begin")
			assert.Zero(t, get("cross_implicit_ends"), "implicit_task end on another thread than its begin")
			assert.NotZero(t, get("begin"), "thread_begin")
			assert.Equal(t, get("begin"), get("end"), "thread_end against thread_begin")
			assert.Equal(t, get("begin"), get("implicit_begin"), "implicit_task begin against thread_begin")
			assert.Equal(t, get("implicit_begin"), get("implicit_end"), "implicit_task end against begin")
			assert.Equal(t, goroutines*iters, get("targets"), "target regions ended")
			t.Logf("%s", lines[len(lines)-1])
			assert.Equal(t, get("os_threads"), get("begin"), "thread_begin: one per OS thread")
			assert.LessOrEqual(t, get("begin"), 64, "thread_begin for %d constructs", goroutines*iters)
			assert.Zero(t, get("errors"), "errors the tool counted")
		})
	}
}

// A program whose main goroutine locks itself to the main thread in init
// (GUI and OpenGL programs do) and runs its constructs there gets one
// life on that thread, not one per construct: Go never ends the main
// thread, so its life stays open to the tool's finalize, which the
// program calls from main, and ends there (testdata/cthreadlife.c; 1,005
// thread_begin for these 2,000 constructs before, half of them nowait
// ones whose tasks run on other threads).
func TestMainThreadLockedInInitBeginsOnce(t *testing.T) {
	lib := buildNamed(t, "cthreadlife")
	const iters = 2000
	lines := runTool(t, lib, "CT_LOCKMAIN=1", "GOMPT_PLUGINS=host", "CT_ITERS="+strconv.Itoa(iters), "CT_NOWAIT=1")
	var errs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "lt error") {
			errs = append(errs, l)
		}
	}
	assert.Empty(t, errs, "what the tool found wrong")
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "lt finalize "), "the tool's last line is not its finalize:\n%s", lines[len(lines)-1])
	get := func(k string) int { return field(t, lines, "lt finalize", k) }
	t.Logf("%s", lines[len(lines)-1])
	assert.Equal(t, iters, get("targets"), "target regions ended")
	assert.Equal(t, get("os_threads"), get("begin"), "thread_begin: one per OS thread")
	assert.LessOrEqual(t, get("begin"), 16, "thread_begin for %d constructs on the main thread and their tasks", iters)
	assert.Equal(t, get("begin"), get("end"), "thread_end against thread_begin")
	assert.Zero(t, get("cross_thread_ends"), "thread_end on another thread than its thread_begin")
}

// A tool written for LLVM that registers target_map but does not expect
// it (testdata/cmapassert.c aborts in it, as LLVM's omptest asserts):
// with GOMPT_TOOL_PROFILE=llvm, set_callback answers ompt_set_never (1)
// for both forms, get_callback finds neither, and the program runs to its
// end; without it gompt answers ompt_set_always (5), dispatches
// target_map as OpenMP 5.2 defines it, and the tool aborts the program.
func TestLLVMProfileForToolsThatDoNotExpectTargetMap(t *testing.T) {
	lib := buildNamed(t, "cmapassert")
	env := []string{"GOMPT_PLUGINS=host", "CT_GOROUTINES=8", "CT_ITERS=50", "CT_NOWAIT=1"}
	lines := runTool(t, lib, append(env, "GOMPT_TOOL_PROFILE=llvm")...)
	assert.Contains(t, lines, "ma set_callback target_map_emi=1 target_map=1 get_callback=0", "what set_callback and get_callback answered")
	assert.Equal(t, 8*50, field(t, lines, "ma finalize", "targets"), "target regions the tool saw")

	out := filepath.Join(t.TempDir(), "ct.out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1", "OMP_TOOL=enabled", "OMP_TOOL_LIBRARIES="+lib, "CT_OUTPUT="+out)...)
	b, err := cmd.CombinedOutput()
	require.Error(t, err, "the default profile: the tool was not called in target_map (output:\n%s)", b)
	assert.Contains(t, string(b), "cmapassert: target_map_emi called", "why the child died")
	data, rerr := os.ReadFile(out)
	require.NoError(t, rerr)
	assert.Contains(t, string(data), "ma set_callback target_map_emi=5 target_map=5 get_callback=1", "what set_callback answered by default")
}
