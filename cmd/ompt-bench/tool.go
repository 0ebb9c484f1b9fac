package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
)

// The tools interface starts once per process, so cases that need a tool
// attached run in a child process of this command with the tool's
// environment; every other case runs here with no tool at all.
const childEnv = "GOMPT_BENCH_CHILD"

// benchToolEnv makes the child register the Go tool below.
const benchToolEnv = "GOMPT_BENCH_TOOL"

func init() {
	register(bcase{name: "empty_target_notool", bench: emptyTarget})
	register(bcase{name: "empty_target_tool_none", backend: "host", env: []string{benchToolEnv + "=none"}, bench: emptyTarget})
	register(bcase{name: "empty_target_tool_all", backend: "host", env: []string{benchToolEnv + "=all"}, bench: emptyTarget})
	register(bcase{name: "empty_target_tool_threads", backend: "host", env: []string{benchToolEnv + "=threads"}, bench: emptyTarget})
	register(bcase{name: "empty_target_tracing", backend: "host", env: []string{benchToolEnv + "=traceonly"}, bench: emptyTarget})
	register(bcase{name: "empty_target_tracing_tool_all", backend: "host", env: []string{benchToolEnv + "=trace"}, bench: emptyTarget})
	switch os.Getenv(benchToolEnv) {
	case "none", "all", "trace", "traceonly", "threads":
		ompt.RegisterTool("ompt-bench", startAll)
	}
}

// goToolAttached is set by startAll's initializer.
var goToolAttached atomic.Bool

// toolAttached reports whether the tool a case's environment names is
// attached: the Go tool below ran its initializer, or the C tool's
// library is mapped into the process (the runtime closes every library
// in OMP_TOOL_LIBRARIES that gave no tool; where the maps cannot be read
// the environment is trusted).
func toolAttached() bool {
	if goToolAttached.Load() {
		return true
	}
	libs := os.Getenv("OMP_TOOL_LIBRARIES")
	if libs == "" {
		return false
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return true
	}
	for _, l := range strings.Split(libs, ":") {
		if l != "" && bytes.Contains(maps, []byte(l)) {
			return true
		}
	}
	return false
}

// startAll is a Go tool registered for every target and device callback,
// each returning at once: the cost of the interface itself.
//
// With GOMPT_BENCH_TOOL=trace it also traces every record type on every
// device into 4 MiB buffers it discards; with traceonly it only traces;
// with none it registers nothing; with threads only thread_begin,
// implicit_task and thread_end (a thread life per OS thread, so nearly
// the cost of empty_target_tool_none; one per construct, four callbacks
// more each, before lives were the OS thread's). The cost of tracing is
// empty_target_tracing against empty_target_tool_none (a tool attached,
// tracing off), or empty_target_tracing_tool_all against
// empty_target_tool_all.
func startAll(int, string) *ompt.StartResult {
	mode := os.Getenv(benchToolEnv)
	return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
		goToolAttached.Store(true)
		if mode == "none" {
			return 1 // attached, nothing registered, nothing traced
		}
		set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
		if mode == "threads" {
			set(ompt.CallbackThreadBegin, ompt.ThreadBeginCallback(func(int, *ompt.Data) {}))
			set(ompt.CallbackImplicitTask, ompt.ImplicitTaskCallback(func(ompt.Endpoint, *ompt.Data, *ompt.Data, uint32, uint32, int) {}))
			set(ompt.CallbackThreadEnd, ompt.ThreadEndCallback(func(*ompt.Data) {}))
			return 1
		}
		set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
			if mode == "all" {
				return
			}
			lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
			// Buffers are reused, as a real tool's would be once it has
			// read them, so the figure is the runtime's cost, not the
			// allocator's.
			free := make(chan []byte, 4)
			lk("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte {
				select {
				case b := <-free:
					return b
				default:
					return make([]byte, 4<<20)
				}
			}, func(_ int, b []byte, _, _ uint64, owned bool) {
				if owned {
					select {
					case free <- b:
					default:
					}
				}
			})
		}))
		if mode == "traceonly" {
			return 1
		}
		set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(int) {}))
		set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(int, string, int64, uintptr, uint64, uintptr, uintptr, uint64) {}))
		set(ompt.CallbackDeviceUnload, ompt.DeviceUnloadCallback(func(int, uint64) {}))
		set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, *ompt.Data, *ompt.Data, uintptr) {}))
		set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ompt.Endpoint, *ompt.Data, *ompt.Data, *uint64, ompt.DataOpKind, uintptr, int, uintptr, int, uint64, uintptr) {
		}))
		set(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ompt.Endpoint, *ompt.Data, *uint64, uint32) {}))
		set(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(*ompt.Data, []uintptr, []uintptr, []uint64, []uint32, uintptr) {}))
		return 1
	}}
}

// runChild runs case c on device d in a child process with c.env.
func runChild(c bcase, d target.DeviceInfo, benchtime string) result {
	r := result{Name: c.name, Device: d.ID}
	exe, err := os.Executable()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	env := append([]string(nil), c.env...)
	for i, e := range env {
		if strings.HasSuffix(e, "="+ctoolMarker) {
			lib, err := emptyCTool()
			if err != nil {
				r.Error = "building the C tool: " + err.Error()
				return r
			}
			env[i] = strings.TrimSuffix(e, ctoolMarker) + lib
		}
	}
	cmd := exec.Command(exe, "-json", "-case", c.name, "-device", d.ID, "-benchtime", benchtime)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		r.Error = fmt.Sprintf("child process: %v", err)
		return r
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &r); err == nil && r.Name == c.name {
			return r
		}
	}
	r.Error = "child process printed no result"
	return r
}
