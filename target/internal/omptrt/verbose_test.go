package omptrt

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verboseLog starts a test whose OMP_TOOL_VERBOSE_INIT log goes to a file
// (with the other variables of env) and returns a function that reads it.
func verboseLog(t *testing.T, env map[string]string) (warn interface{ String() string }, read func() string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "init.log")
	all := map[string]string{"OMP_TOOL_VERBOSE_INIT": file}
	for k, v := range env {
		all[k] = v
	}
	w := reset(t, all)
	return w, func() string {
		t.Helper()
		b, err := os.ReadFile(file)
		require.NoError(t, err, "reading the verbose log")
		return string(b)
	}
}

// TestVerboseLogOfOneGoToolAndToolsWithoutInitializer: the log counts a
// single registered Go tool too, and names each tool a finder found
// without an initializer (no start result at all, or one without
// Initialize), which is skipped; the program goes on with the others.
func TestVerboseLogOfOneGoToolAndToolsWithoutInitializer(t *testing.T) {
	_, read := verboseLog(t, nil)
	r := &recorder{plain: true}
	ompt.RegisterTool("only", r.start)
	RegisterFinder("C search", func(int, string, func(string)) []Found {
		return []Found{
			{Name: "libnone.so"},
			{Name: "libnoinit.so", Result: &ompt.StartResult{}},
			{Name: "libgood.so", Result: &ompt.StartResult{Initialize: func(ompt.LookupFunc, int, *ompt.Data) int { return 1 }}},
		}
	})
	require.NotPanics(t, func() { Start(fakeRuntime{1}) }, "Start with found tools that have no initializer")
	mu.Lock()
	n := len(active)
	mu.Unlock()
	assert.Equal(t, 2, n, "tools active: the Go tool and libgood.so")
	Finalize()
	log := read()
	assert.Contains(t, log, "Searching Go tools (1 registered)...\n", "verbose log")
	assert.Contains(t, log, `C search: tool "libnone.so" has no initializer; skipped.`, "verbose log")
	assert.Contains(t, log, `C search: tool "libnoinit.so" has no initializer; skipped.`, "verbose log")
}

// TestVerboseLogOfBadToolVar: an OMP_TOOL value that is neither enabled
// nor disabled is named in the log too (besides the stderr warning).
func TestVerboseLogOfBadToolVar(t *testing.T) {
	_, read := verboseLog(t, map[string]string{"OMP_TOOL": "maybe"})
	Start(fakeRuntime{1})
	Finalize()
	assert.Contains(t, read(), `OMP_TOOL = "maybe" is not valid; using enabled.`, "verbose log")
}

// TestVerboseLogOfAPanickingCallback: a Go tool whose callback panics is
// detached, and the log says so (once, however many events follow).
func TestVerboseLogOfAPanickingCallback(t *testing.T) {
	warn, read := verboseLog(t, nil)
	ompt.RegisterTool("crashy", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTarget, ompt.TargetCallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {
				panic("target boom")
			}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	region(ompt.KindTarget, 0, 1)
	region(ompt.KindTarget, 0, 1)
	Finalize()
	const line = `Go tool "crashy": a callback panicked: target boom; detached.`
	assert.Equal(t, 1, strings.Count(read(), line), "verbose log lines %q", line)
	assert.Contains(t, warn.String(), `OMPT tool "crashy": a callback panicked: target boom; the tool is detached`, "stderr")
}

// deviceFinalizeTool is a Go tool whose device_finalize callback panics
// if panics; it counts its device_finalize calls and its finalizer's.
type deviceFinalizeTool struct {
	panics          bool
	devFinals, fins int
	lookup          ompt.LookupFunc
}

func (d *deviceFinalizeTool) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{
		Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			d.lookup = l
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(int, string, *ompt.DeviceHandle, ompt.LookupFunc, string) {}))
			set(ompt.CallbackDeviceFinalize, ompt.DeviceFinalizeCallback(func(int) {
				d.devFinals++
				if d.panics {
					panic("finalize boom")
				}
			}))
			return 1
		},
		Finalize: func(*ompt.Data) { d.fins++ },
	}
}

// TestVerboseLogOfAPanickingDeviceFinalize: a tool that calls
// ompt_finalize_tool while a device is live gets device_finalize first;
// if that callback panics, the tool still gets its finalizer, and the log
// names the callback. A tool whose callback returns has no such line.
func TestVerboseLogOfAPanickingDeviceFinalize(t *testing.T) {
	_, read := verboseLog(t, nil)
	bad, good := &deviceFinalizeTool{panics: true}, &deviceFinalizeTool{}
	ompt.RegisterTool("bad", bad.start)
	ompt.RegisterTool("good", good.start)
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	require.NotPanics(t, func() { bad.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() }, "ompt_finalize_tool")
	require.NotPanics(t, func() { good.lookup("ompt_finalize_tool").(ompt.FinalizeToolFunc)() }, "ompt_finalize_tool")
	assert.Equal(t, 1, bad.devFinals, "device_finalize calls of the panicking tool")
	assert.Equal(t, 1, bad.fins, "finalizer calls of the tool whose device_finalize panicked")
	assert.Equal(t, 1, good.devFinals, "device_finalize calls of the other tool")
	assert.Equal(t, 1, good.fins, "finalizer calls of the other tool")
	Finalize()
	log := read()
	assert.Contains(t, log, `Tool "bad": device_finalize callback panicked: finalize boom.`, "verbose log")
	assert.NotContains(t, log, `Tool "good": device_finalize`, "verbose log")
}

// TestDeviceFinalizeCallbackPanics: a tool whose device_finalize callback
// panics when the runtime finalizes a device is detached (named on
// stderr and in the log); DeviceFinalize does not panic and returns no
// error, the other tool gets device_finalize, and both get their
// finalizers at Finalize.
func TestDeviceFinalizeCallbackPanics(t *testing.T) {
	warn, read := verboseLog(t, nil)
	bad, good := &deviceFinalizeTool{panics: true}, &deviceFinalizeTool{}
	ompt.RegisterTool("bad", bad.start)
	ompt.RegisterTool("good", good.start)
	Start(fakeRuntime{1})
	require.NoError(t, DeviceInitialize(0, "tick", newTick(0)))
	var err error
	require.NotPanics(t, func() { err = DeviceFinalize(0) }, "DeviceFinalize with a panicking device_finalize")
	assert.NoError(t, err, "DeviceFinalize")
	assert.Equal(t, 1, bad.devFinals, "device_finalize calls of the panicking tool")
	assert.Equal(t, 1, good.devFinals, "device_finalize calls of the other tool")
	Finalize()
	assert.Equal(t, 1, bad.fins, "finalizer calls of the detached tool")
	assert.Equal(t, 1, good.fins, "finalizer calls of the other tool")
	assert.Contains(t, warn.String(), `OMPT tool "bad": a callback panicked: finalize boom; the tool is detached`, "stderr")
	assert.Contains(t, read(), `Go tool "bad": a callback panicked: finalize boom; detached.`, "verbose log")
}

// TestVerboseLogToStdout: OMP_TOOL_VERBOSE_INIT=stdout (any case) logs
// to the standard output.
func TestVerboseLogToStdout(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = w
	t.Cleanup(func() { os.Stdout = old })
	reset(t, map[string]string{"OMP_TOOL_VERBOSE_INIT": "StdOut"})
	Start(fakeRuntime{1})
	Finalize()
	os.Stdout = old
	require.NoError(t, w.Close())
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), "----- START LOGGING OF TOOL REGISTRATION -----", "standard output")
	assert.Contains(t, string(b), "No OMP tool loaded.", "standard output")
}

// TestVerboseLogOfAGoToolWithoutInitialize: a Go tool whose start result
// has no Initialize is skipped, and the log says so.
func TestVerboseLogOfAGoToolWithoutInitialize(t *testing.T) {
	_, read := verboseLog(t, nil)
	ompt.RegisterTool("half", func(int, string) *ompt.StartResult { return &ompt.StartResult{} })
	Start(fakeRuntime{1})
	assert.False(t, Enabled(), "Enabled with only a tool without Initialize")
	Finalize()
	assert.Contains(t, read(), `Go tool "half": start result has no Initialize; skipped.`, "verbose log")
}
