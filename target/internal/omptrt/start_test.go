package omptrt

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolVarDisabled(t *testing.T) {
	for _, v := range []string{"disabled", " DISABLED\t"} {
		reset(t, map[string]string{"OMP_TOOL": v})
		asked := false
		ompt.RegisterTool("t", func(int, string) *ompt.StartResult {
			asked = true
			return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { return 1 }}
		})
		Start(fakeRuntime{1})
		assert.False(t, asked, "OMP_TOOL=%q: start function called; tool-var disabled means no search", v)
		assert.Equal(t, StateInactive, CurrentState(), "OMP_TOOL=%q: state", v)
		assert.False(t, Enabled(), "OMP_TOOL=%q: Enabled", v)
		assert.Nil(t, TargetBegin(ompt.KindTarget, 0, 1), "OMP_TOOL=%q: TargetBegin returned a scope", v)
	}
}

func TestToolVarBadValue(t *testing.T) {
	warn := reset(t, map[string]string{"OMP_TOOL": "sometimes"})
	r := &recorder{plain: true}
	ompt.RegisterTool("rec", r.start)
	Start(fakeRuntime{1})
	w := warn.String()
	// want one line naming the variable, the accepted values and the default
	assert.Equal(t, 1, strings.Count(w, "\n"), "warning %q: lines", w)
	assert.Contains(t, w, `OMP_TOOL="sometimes"`, "warning: the variable")
	assert.Contains(t, w, "enabled or disabled", "warning: the accepted values")
	assert.Contains(t, w, "using enabled", "warning: the default")
	assert.Equal(t, StateActive, CurrentState(), "bad OMP_TOOL must fall back to enabled")
	assert.NotNil(t, r.lookup, "bad OMP_TOOL must fall back to enabled: the tool was not initialized")
}

// TestStartSequence checks the search order, the version arguments, the
// state in each phase and the initial device number.
func TestStartSequence(t *testing.T) {
	reset(t, nil)
	var log []string
	mk := func(name string, accept bool, ret int) ompt.StartFunc {
		return func(v int, rv string) *ompt.StartResult {
			log = append(log, name+" start "+CurrentState().String())
			assert.Equal(t, ompt.OMPVersion, v, "%s: omp_version", name)
			assert.GreaterOrEqual(t, v, 201811, "%s: omp_version", name)
			assert.Regexp(t, `^gompt \d+\.\d+\.\d+ \(go1\.\d+.*\)$`, rv, "%s: runtime_version", name)
			assert.Contains(t, rv, runtime.Version(), "%s: runtime_version", name)
			if !accept {
				return nil
			}
			return &ompt.StartResult{
				Initialize: func(l ompt.LookupFunc, initial int, d *ompt.Data) int {
					log = append(log, name+" initialize "+CurrentState().String())
					assert.Equal(t, 3, initial, "%s: initial_device_num: want the host device after 3 offload devices", name)
					assert.Equal(t, uint64(7), d.Value, "%s: tool_data not passed by reference", name)
					d.Value = 8
					return ret
				},
				Finalize: func(d *ompt.Data) {
					log = append(log, name+" finalize")
					assert.Equal(t, uint64(8), d.Value, "%s: finalize's tool_data: want what initialize wrote", name)
				},
				ToolData: ompt.Data{Value: 7},
			}
		}
	}
	ompt.RegisterTool("one", mk("one", true, 1))
	ompt.RegisterTool("two", mk("two", false, 1))
	ompt.RegisterTool("three", mk("three", true, 0))
	ompt.RegisterTool("four", mk("four", true, 1))
	assert.Equal(t, StateInactive, CurrentState(), "before Start")
	Start(fakeRuntime{3})
	Start(fakeRuntime{3}) // second call does nothing
	assert.Equal(t, StateActive, CurrentState(), "after Start")
	assert.True(t, Enabled(), "after Start")
	Finalize()
	Finalize()
	want := []string{
		"one start pending", "two start pending", "three start pending", "four start pending",
		"one initialize active", "three initialize active", "four initialize active",
		"one finalize", "four finalize",
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(log, "\n"), "start-up sequence")
	assert.Equal(t, StateInactive, CurrentState(), "after Finalize")
	assert.False(t, Enabled(), "after Finalize")
	Start(fakeRuntime{3})
	assert.Equal(t, StateInactive, CurrentState(), "Start after Finalize restarted the interface")
}

// TestInitializeZeroInactive: the only tool's initializer returns 0: no
// device events, no target scope, state inactive.
func TestInitializeZeroInactive(t *testing.T) {
	reset(t, nil)
	called := 0
	ompt.RegisterTool("zero", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) { called++ }))
			return 0
		}, Finalize: func(*ompt.Data) { called += 100 }}
	})
	Start(fakeRuntime{1})
	DeviceInitialize(0, "fake", &clockDevice{rate: 1})
	assert.Equal(t, StateInactive, CurrentState(), "state after initializer returned 0")
	assert.False(t, Enabled(), "Enabled after initializer returned 0")
	assert.Nil(t, TargetBegin(ompt.KindTarget, 0, 1), "TargetBegin after initializer returned 0")
	Finalize()
	assert.Zero(t, called, "callbacks (1 each) and finalizes (100 each) the dropped tool received")
}

func TestPanickingToolsAndVerboseLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "init.log")
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": file})
	ompt.RegisterTool("bad-start", func(int, string) *ompt.StartResult { panic("boom in start") })
	ompt.RegisterTool("bad-init", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { panic("boom in initialize") }}
	})
	ompt.RegisterTool("nil", func(int, string) *ompt.StartResult { return nil })
	ompt.RegisterTool("zero", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { return 0 }}
	})
	good := &recorder{plain: true}
	ompt.RegisterTool("good", good.start)
	RegisterFinder("C search", func(v int, rv string, log func(string)) []Found {
		log("no ompt_start_tool in the address space")
		panic("finder boom")
	})
	Start(fakeRuntime{1})
	require.Equal(t, StateActive, CurrentState(), "runtime must stay up")
	require.NotNil(t, good.lookup, "runtime must keep the good tool")
	region(ompt.KindTarget, 0, 1)
	assert.Len(t, good.got(), 8, "good tool's events")
	Finalize()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	got := strings.TrimSpace(string(b))
	want := strings.Join([]string{
		"----- START LOGGING OF TOOL REGISTRATION -----",
		"Searching Go tools (5 registered)...",
		`Go tool "bad-start": start function panicked: boom in start; skipped.`,
		`Go tool "bad-init": start function returned a result; Success.`,
		`Go tool "nil": start function returned nil; skipped.`,
		`Go tool "zero": start function returned a result; Success.`,
		`Go tool "good": start function returned a result; Success.`,
		"no ompt_start_tool in the address space",
		"C search: panicked: finder boom; skipped.",
		"----- END LOGGING OF TOOL REGISTRATION -----",
		`Tool "bad-init": initializer panicked: boom in initialize; tool dropped.`,
		`Tool "zero": initializer returned 0; tool dropped.`,
	}, "\n")
	assert.Equal(t, want, got, "verbose log")
}

func TestVerboseInitTargets(t *testing.T) {
	warn := reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": "stderr"})
	Start(fakeRuntime{1})
	assert.Contains(t, warn.String(), "No OMP tool loaded.", "stderr log")
	warn = reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": filepath.Join(t.TempDir(), "no", "such", "dir", "f")})
	Start(fakeRuntime{1})
	assert.Contains(t, warn.String(), "OMP_TOOL_VERBOSE_INIT=", "unwritable log file: warning")
	assert.Contains(t, warn.String(), "logging disabled", "unwritable log file: warning")
	warn = reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": "Disabled", "OMP_TOOL": "disabled"})
	Start(fakeRuntime{1})
	assert.Empty(t, warn.String(), "disabled log wrote")
}

func TestFinderAfterGoTools(t *testing.T) {
	reset(t, nil)
	var order []string
	RegisterFinder("cabi", func(v int, rv string, _ func(string)) []Found {
		order = append(order, "finder")
		return []Found{{Name: "libctool.so", Result: &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int {
			order = append(order, "c init")
			return 1
		}}}}
	})
	ompt.RegisterTool("go", func(int, string) *ompt.StartResult {
		order = append(order, "go start")
		return &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { order = append(order, "go init"); return 1 }}
	})
	Start(fakeRuntime{1})
	assert.Equal(t, "go start,finder,go init,c init", strings.Join(order, ","), "order")
	mu.Lock()
	n := len(active)
	mu.Unlock()
	assert.Equal(t, 2, n, "tools active: want the Go and the C tool")
}

func TestRegisterPanics(t *testing.T) {
	reset(t, nil)
	ompt.RegisterTool("x", func(int, string) *ompt.StartResult { return nil })
	for name, f := range map[string]func(){
		"nil start":  func() { ompt.RegisterTool("y", nil) },
		"duplicate":  func() { ompt.RegisterTool("x", func(int, string) *ompt.StartResult { return nil }) },
		"nil finder": func() { RegisterFinder("f", nil) },
	} {
		assert.NotNil(t, catch(f), "%s: no panic", name)
	}
}

func TestFinalizeToolFromCallback(t *testing.T) {
	reset(t, nil)
	a := &recorder{plain: true}
	a.extra = func(r *recorder) {
		fin := r.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)
		r.lookup("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetSubmit, ompt.TargetSubmitCallback(func(uint64, uint64, uint32) {
			fin() // detach in the middle of a construct
			fin() // twice is harmless
		}))
	}
	b := &recorder{plain: true}
	ompt.RegisterTool("a", a.start)
	ompt.RegisterTool("b", b.start)
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	region(ompt.KindTarget, 0, 1)
	got := a.got()
	if assert.Len(t, got, 5, "tool a after ompt_finalize_tool: want target begin, 2 data ops, map, finalize, nothing after") {
		assert.Equal(t, "finalize", got[4], "tool a after ompt_finalize_tool: %q", got)
	}
	assert.Len(t, b.got(), 16, "tool b's events: want two whole constructs")
	set := a.lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	assert.Equal(t, ompt.SetError, set(ompt.CallbackTarget, nil), "set_callback after ompt_finalize_tool must fail")
	Finalize()
	assert.Equal(t, 1, a.finalized, "finalizers of a")
	assert.Equal(t, 1, b.finalized, "finalizers of b")
}
