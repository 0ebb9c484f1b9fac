package omptrt

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gompt/gompt/ompt"
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
		if asked {
			t.Errorf("OMP_TOOL=%q: start function called; tool-var disabled means no search", v)
		}
		if s := CurrentState(); s != StateInactive || Enabled() {
			t.Errorf("OMP_TOOL=%q: state %v, Enabled %v; want inactive", v, s, Enabled())
		}
		if TargetBegin(ompt.KindTarget, 0, 1) != nil {
			t.Errorf("OMP_TOOL=%q: TargetBegin returned a scope", v)
		}
	}
}

func TestToolVarBadValue(t *testing.T) {
	warn := reset(t, map[string]string{"OMP_TOOL": "sometimes"})
	r := &recorder{plain: true}
	ompt.RegisterTool("rec", r.start)
	Start(fakeRuntime{1})
	w := warn.String()
	if strings.Count(w, "\n") != 1 || !strings.Contains(w, `OMP_TOOL="sometimes"`) || !strings.Contains(w, "enabled or disabled") || !strings.Contains(w, "using enabled") {
		t.Errorf("warning = %q; want one line naming the variable, the accepted values and the default", w)
	}
	if CurrentState() != StateActive || r.lookup == nil {
		t.Errorf("bad OMP_TOOL must fall back to enabled: state %v", CurrentState())
	}
}

// TestStartSequence checks the search order, the version arguments, the
// state in each phase and the initial device number.
func TestStartSequence(t *testing.T) {
	reset(t, nil)
	var log []string
	mk := func(name string, accept bool, ret int) ompt.StartFunc {
		return func(v int, rv string) *ompt.StartResult {
			log = append(log, name+" start "+CurrentState().String())
			if v != ompt.OMPVersion || v < 201811 {
				t.Errorf("%s: omp_version %d", name, v)
			}
			if !regexp.MustCompile(`^gompt \d+\.\d+\.\d+ \(go1\.\d+.*\)$`).MatchString(rv) || !strings.Contains(rv, runtime.Version()) {
				t.Errorf("%s: runtime_version %q", name, rv)
			}
			if !accept {
				return nil
			}
			return &ompt.StartResult{
				Initialize: func(l ompt.LookupFunc, initial int, d *ompt.Data) int {
					log = append(log, name+" initialize "+CurrentState().String())
					if initial != 3 {
						t.Errorf("%s: initial_device_num %d, want 3 (the host device after 3 offload devices)", name, initial)
					}
					if d.Value != 7 {
						t.Errorf("%s: tool_data not passed by reference (Value %d)", name, d.Value)
					}
					d.Value = 8
					return ret
				},
				Finalize: func(d *ompt.Data) {
					log = append(log, name+" finalize")
					if d.Value != 8 {
						t.Errorf("%s: finalize got tool_data %d, want what initialize wrote", name, d.Value)
					}
				},
				ToolData: ompt.Data{Value: 7},
			}
		}
	}
	ompt.RegisterTool("one", mk("one", true, 1))
	ompt.RegisterTool("two", mk("two", false, 1))
	ompt.RegisterTool("three", mk("three", true, 0))
	ompt.RegisterTool("four", mk("four", true, 1))
	if CurrentState() != StateInactive {
		t.Errorf("before Start: %v", CurrentState())
	}
	Start(fakeRuntime{3})
	Start(fakeRuntime{3}) // second call does nothing
	if CurrentState() != StateActive || !Enabled() {
		t.Errorf("after Start: %v", CurrentState())
	}
	Finalize()
	Finalize()
	want := []string{
		"one start pending", "two start pending", "three start pending", "four start pending",
		"one initialize active", "three initialize active", "four initialize active",
		"one finalize", "four finalize",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("start-up sequence\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if CurrentState() != StateInactive || Enabled() {
		t.Errorf("after Finalize: %v", CurrentState())
	}
	Start(fakeRuntime{3})
	if CurrentState() != StateInactive {
		t.Error("Start after Finalize restarted the interface")
	}
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
	if CurrentState() != StateInactive || Enabled() || TargetBegin(ompt.KindTarget, 0, 1) != nil {
		t.Errorf("state %v after initializer returned 0", CurrentState())
	}
	Finalize()
	if called != 0 {
		t.Errorf("dropped tool received %d callbacks/finalize", called)
	}
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
	if CurrentState() != StateActive || good.lookup == nil {
		t.Fatalf("runtime must stay up and keep the good tool; state %v", CurrentState())
	}
	region(ompt.KindTarget, 0, 1)
	if len(good.got()) != 8 {
		t.Errorf("good tool got %d events, want 8", len(good.got()))
	}
	Finalize()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
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
	if got != want {
		t.Errorf("verbose log:\n%s\nwant:\n%s", got, want)
	}
}

func TestVerboseInitTargets(t *testing.T) {
	warn := reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": "stderr"})
	Start(fakeRuntime{1})
	if !strings.Contains(warn.String(), "No OMP tool loaded.") {
		t.Errorf("stderr log = %q", warn.String())
	}
	warn = reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": filepath.Join(t.TempDir(), "no", "such", "dir", "f")})
	Start(fakeRuntime{1})
	if w := warn.String(); !strings.Contains(w, "OMP_TOOL_VERBOSE_INIT=") || !strings.Contains(w, "logging disabled") {
		t.Errorf("unwritable log file: warning %q", w)
	}
	warn = reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": "Disabled", "OMP_TOOL": "disabled"})
	Start(fakeRuntime{1})
	if warn.Len() != 0 {
		t.Errorf("disabled log wrote %q", warn.String())
	}
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
	if got := strings.Join(order, ","); got != "go start,finder,go init,c init" {
		t.Errorf("order %s", got)
	}
	mu.Lock()
	n := len(active)
	mu.Unlock()
	if n != 2 {
		t.Errorf("%d tools active, want the Go and the C tool", n)
	}
}

func TestRegisterPanics(t *testing.T) {
	reset(t, nil)
	ompt.RegisterTool("x", func(int, string) *ompt.StartResult { return nil })
	for name, f := range map[string]func(){
		"nil start":  func() { ompt.RegisterTool("y", nil) },
		"duplicate":  func() { ompt.RegisterTool("x", func(int, string) *ompt.StartResult { return nil }) },
		"nil finder": func() { RegisterFinder("f", nil) },
	} {
		if catch(f) == nil {
			t.Errorf("%s: no panic", name)
		}
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
	if len(got) != 5 || got[4] != "finalize" {
		t.Errorf("tool a after ompt_finalize_tool: %q; want target begin, 2 data ops, map, finalize, nothing after", got)
	}
	if n := len(b.got()); n != 16 {
		t.Errorf("tool b got %d events, want 16 (two whole constructs)", n)
	}
	if set := a.lookup("ompt_set_callback").(ompt.SetCallbackFunc); set(ompt.CallbackTarget, nil) != ompt.SetError {
		t.Error("set_callback after ompt_finalize_tool must fail")
	}
	Finalize()
	if a.finalized != 1 || b.finalized != 1 {
		t.Errorf("finalizers: a %d, b %d; want 1 each", a.finalized, b.finalized)
	}
}
