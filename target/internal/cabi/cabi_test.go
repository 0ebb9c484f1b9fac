package cabi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCToolMatchesGoPrinter runs the example C tool and a Go tool that
// prints the same line format side by side on the same events, with each
// callback form the C tool can use: every line, id and address must be
// the same.
func TestCToolMatchesGoPrinter(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	lib := buildCtool(t, dir)
	for _, form := range []string{"plain", "emi", "both"} {
		t.Run(form, func(t *testing.T) {
			c := run(t, dir, "events", "OMP_TOOL_LIBRARIES="+lib, "CTOOL_FORM="+form,
				"CTOOL_OUTPUT="+form+".c.txt", "CABI_GO_OUTPUT="+form+".go.txt")
			wantLines(t, "child", c.out, "state=active")
			ct, gt := lines(c.file(form+".c.txt")), lines(c.file(form+".go.txt"))
			require.GreaterOrEqual(t, len(ct), 30, "lines of the C tool; verbose:\n%s", c.verbose)
			require.Equal(t, strings.Join(gt, "\n"), strings.Join(ct, "\n"), "C tool (left) and Go printer (right) differ:\n%s\nverbose:\n%s", diffLines(ct, gt), c.verbose)
			got := strings.Join(ct, "\n")
			wantNotContains(t, "C tool output", got, "ompt error")
			// Spot checks of the format and of values only a correct
			// argument list gives (device_load's NULL file, the host as device 2,
			// N, initial_device_num, lists).
			wantLines(t, "C tool output", got,
				`ompt device_initialize dev=0 type="host gompt host device"`,
				`ompt device_initialize dev=1 type="opencl Portable Computing Language"`,
				`ompt device_finalize dev=0`, `ompt device_finalize dev=1`)
			for _, re := range []string{
				`^ompt device_load dev=0 file="" bytes=1234 module=\d+$`,
				`^ompt target begin kind=target dev=0 target_id=\d+ code=0x4a1b2c$`,
				`^ompt target_data_op target_id=\d+ host_op_id=\d+ op=alloc src=0x1000/2 dest=0xd000/0 bytes=64 code=0x4a1b2c$`,
				`^ompt target_map target_id=\d+ n=1 host=0x1000 dev=0xd000 bytes=64 flags=to\|from$`,
				`^ompt target_submit target_id=\d+ host_op_id=\d+ teams=4$`,
				`^ompt target_map target_id=\d+ n=2 host=0x2000,0x3000 dev=0xe000,0xf000 bytes=32,16 flags=alloc,to\|implicit$`,
				`^ompt target begin kind=target_nowait dev=1 target_id=\d+ code=0x4a1b30$`,
				`^ompt dependences target_id=\d+ n=2 deps=in@0x4000,inout@0x5000$`,
				`^ompt target_data_op target_id=0 host_op_id=\d+ op=memset src=0x0/2 dest=0xb000/0 bytes=128 code=0x4a1b32$`,
				`^ompt target_data_op target_id=0 host_op_id=\d+ op=transfer_from_device src=0xb000/0 dest=0xa100/1 bytes=128 code=0x4a1b32$`,
			} {
				assert.Regexp(t, "(?m)"+re, got, "no line matching")
			}
		})
	}
}

// TestConcurrentConstructs runs constructs on 8 goroutines with the C
// tool using EMI callbacks (per-construct C slots); both faces must see
// the same multiset of lines and the C tool no slot error.
func TestConcurrentConstructs(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	lib := buildCtool(t, dir)
	c := run(t, dir, "concurrent", "OMP_TOOL_LIBRARIES="+lib, "CTOOL_FORM=emi", "CTOOL_OUTPUT=c.txt", "CABI_GO_OUTPUT=go.txt")
	ct, gt := lines(c.file("c.txt")), lines(c.file("go.txt"))
	sort.Strings(ct)
	sort.Strings(gt)
	require.Len(t, ct, 8*50*6+2, "lines of the C tool (Go printer: %d)", len(gt))
	require.Equal(t, strings.Join(gt, "\n"), strings.Join(ct, "\n"), "C tool and Go printer, sorted, differ:\n%s", diffLines(ct, gt))
	wantNotContains(t, "C tool output", strings.Join(ct, "\n"), "ompt error")
}

// TestEntryPoints runs the probe tool beside the Go printer (C and Go
// tools active together) and checks every entry point it calls, from
// initialize, from a thread it creates and from inside callbacks, and the
// data slots it writes and reads back.
func TestEntryPoints(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	lib := build(t, dir, "probe")
	c := run(t, dir, "events", "OMP_TOOL_LIBRARIES="+lib, "PROBE_OUTPUT=probe.txt", "CABI_GO_OUTPUT=go.txt")
	p := c.file("probe.txt")
	wantLines(t, "child", c.out, "state=active")
	assert.GreaterOrEqual(t, len(lines(c.file("go.txt"))), 30, "events the Go printer got beside the C tool:\n%s", c.file("go.txt"))

	want := []string{
		fmt.Sprintf("probe start_tool omp_version=%d runtime_version=%s", ompt.OMPVersion, ompt.RuntimeVersion()),
		"probe initialize initial_device_num=2 tool_data_by_ref=1",
		"probe lookup host ompt_no_such_entry=0", "probe lookup host =0", "probe lookup host OMPT_SET_CALLBACK=0",
		"probe lookup device ompt_no_such_entry=0", "probe lookup device ompt_set_callback=0",
		"probe set -1=0", "probe set 0=0", "probe set 38=0", "probe set 99=0",
		"probe get_callback target_emi=1 same=1",
		"probe get_callback thread_begin=1 target=0 bogus=0",
		"probe task_info 0=2 flags=1 task_data_nonnull=1 frame_nonnull=1 parallel_nonnull=1 thread_num=0 level1=0",
		"probe parallel_info 0=2 team=1 same_parallel_data=1 level1=0",
		"probe thread_data nonnull=1 same=1",
		"probe state=0 wait_id=0 target_info=0",
		"probe num_devices=2 num_procs_positive=1 num_places=0 place_num=-1 place_proc_ids=0 partition=0 proc_id_ok=1 task_memory=0",
		"probe states ompt_state_work_serial=0,ompt_state_wait_target=128,ompt_state_wait_target_map=129,ompt_state_wait_target_update=130",
		"probe mutex_impls=0",
		// a thread the tool made, which the runtime never saw: no thread_data
		"probe thread num_devices=2 unique_increasing=1 thread_data_nonnull=0",
		"probe device_initialize dev=0 device_nonnull=1 lookup_nonnull=1 doc_nonnull=1",
		"probe device dev=0 num_procs=4 time_positive=1 time_monotonic=1 translate_positive=1",
		"probe device dev=0 bogus=0,0,0,0",
		"probe device dev=1 num_procs=2 time_positive=1 time_monotonic=1 translate_positive=1",
		"probe device_finalize dev=0", "probe device_finalize dev=1",
	}
	// lookups: exactly the names ompt's Go lookups resolve
	for _, n := range ompt.HostEntryNames {
		want = append(want, "probe lookup host "+n+"=1")
	}
	for i, n := range ompt.DeviceEntryNames {
		want = append(want, "probe lookup host "+n+"=0")
		if i < numDeviceEntries {
			want = append(want, "probe lookup device "+n+"=1")
		}
	}
	// set_callback: always for the dispatched events, never for the rest
	for ev := ompt.Callback(1); ev <= ompt.CallbackError; ev++ {
		switch ev {
		case ompt.CallbackTarget, ompt.CallbackTargetDataOp, ompt.CallbackTargetSubmit, ompt.CallbackTargetMap,
			ompt.CallbackDeviceLoad, ompt.CallbackDeviceUnload:
		case ompt.CallbackTargetEMI, ompt.CallbackTargetDataOpEMI, ompt.CallbackTargetSubmitEMI, ompt.CallbackTargetMapEMI,
			ompt.CallbackDeviceInitialize, ompt.CallbackDeviceFinalize,
			// OpenMP 5.2's mandatory host events
			ompt.CallbackThreadBegin, ompt.CallbackThreadEnd, ompt.CallbackParallelBegin, ompt.CallbackParallelEnd,
			ompt.CallbackTaskCreate, ompt.CallbackTaskSchedule, ompt.CallbackImplicitTask, ompt.CallbackDependences:
			want = append(want, fmt.Sprintf("probe set %d=%d", ev, ompt.SetAlways))
		default:
			want = append(want, fmt.Sprintf("probe set %d=%d", ev, ompt.SetNever))
		}
	}
	wantLines(t, "probe output", p, want...)

	m := regexp.MustCompile(`(?m)^probe finalize tool_data=42 events=(\d+) slot_ok=(\d+) slot_bad=0 state_bad=0 info_bad=0 task_bad=0$`).FindStringSubmatch(p)
	require.NotNil(t, m, "no clean finalize line (tool_data 42, no slot, state, target-info or task error) in:\n%s", p)
	// 5 constructs: 10 target events, 14 data ops x2, 2 submits x2, 2
	// maps; 4 routine data ops x2.
	assert.Equal(t, "46", m[1], "EMI events the probe saw")
	assert.NotEqual(t, "0", m[2], "slots checked")
}

// TestDiscovery covers OMP_TOOL_LIBRARIES: each bad entry alone (the
// search reports why it was skipped and no tool starts), then all of them
// in one list before a good tool.
func TestDiscovery(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	ctool := buildCtool(t, dir)
	probe := build(t, dir, "probe")
	nosym := build(t, dir, "nosym")
	null := build(t, dir, "nullstart")
	lazy := build(t, dir, "lazyref")
	init0 := build(t, dir, "init0")
	notalib := filepath.Join(dir, "notalib.so")
	b, _ := os.ReadFile("testdata/notalib.txt")
	os.WriteFile(notalib, b, 0o755)
	missing := filepath.Join(dir, "no", "such", "libtool.so")

	for _, tc := range []struct {
		name, libs string
		log        []string
	}{
		{"missing file", missing, []string{"\nOpening " + missing + "... Failed: " + missing + ": cannot open shared object file: No such file or directory\n"}},
		{"not a library", notalib, []string{"\nOpening " + notalib + "... Failed: " + notalib + ": "}},
		{"no ompt_start_tool", nosym, []string{"\nOpening " + nosym + "... Success. \nSearching for ompt_start_tool in " + nosym + "... Failed: " + nosym + ": undefined symbol: ompt_start_tool\n"}},
		{"start returns NULL", null, []string{"\nOpening " + null + "... Success. \nSearching for ompt_start_tool in " + null + "... Found but not using the OMPT interface.\nContinuing search...\n"}},
		{"calls a function no library defines (opened lazily)", lazy, []string{"\nOpening " + lazy + "... Success. \nSearching for ompt_start_tool in " + lazy + "... Found but not using the OMPT interface.\n"}},
		{"empty entries", "::", []string{"\nOMP_TOOL_LIBRARIES = ::\nNo OMP tool loaded.\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := t.TempDir()
			c := run(t, sub, "events", "OMP_TOOL_LIBRARIES="+tc.libs, "MARK_FILE=mark.txt")
			wantLines(t, "child", c.out, "state=inactive")
			wantContains(t, "verbose log", c.verbose, tc.log...)
			// LLVM's lines (ompt-general.cpp), line for line
			wantContains(t, "verbose log", c.verbose, "----- START LOGGING OF TOOL REGISTRATION -----\nSearch for OMP tool in current address space... Failed.\nSearching tool libraries...\nOMP_TOOL_LIBRARIES = "+tc.libs+"\n",
				"\nNo OMP tool loaded.\n----- END LOGGING OF TOOL REGISTRATION -----\n")
		})
	}

	t.Run("start returns NULL is asked with the versions", func(t *testing.T) {
		c := run(t, t.TempDir(), "start", "OMP_TOOL_LIBRARIES="+null, "MARK_FILE=mark.txt")
		wantLines(t, "mark", c.file("mark.txt"), fmt.Sprintf("nullstart asked omp_version=%d runtime_version=%s", ompt.OMPVersion, ompt.RuntimeVersion()))
	})

	t.Run("initializer returns 0", func(t *testing.T) {
		c := run(t, t.TempDir(), "events", "OMP_TOOL_LIBRARIES="+init0+":"+ctool, "MARK_FILE=mark.txt", "CTOOL_OUTPUT=c.txt")
		wantLines(t, "child", c.out, "state=inactive")
		wantContains(t, "verbose log", c.verbose, "Searching for ompt_start_tool in "+init0+"... Success.\nTool was started and is using the OMPT interface.\n----- END LOGGING OF TOOL REGISTRATION -----\n",
			fmt.Sprintf("Tool %q: initializer returned 0; tool dropped.", init0))
		// the first non-NULL ompt_start_tool ends the search: ctool is never tried
		wantNotContains(t, "verbose log", c.verbose, "Opening "+ctool)
		assert.Equal(t, "init0 start_tool\ninit0 initialize\n", c.file("mark.txt"), "what init0 saw: start_tool and initialize only (no event, no finalize)")
		_, err := os.Stat(filepath.Join(c.dir, "c.txt"))
		assert.Error(t, err, "ctool was started after a tool was found")
	})

	t.Run("order", func(t *testing.T) {
		libs := strings.Join([]string{missing, notalib, "", nosym, null, ctool, probe}, ":")
		c := run(t, t.TempDir(), "events", "OMP_TOOL_LIBRARIES="+libs, "MARK_FILE=mark.txt", "CTOOL_OUTPUT=c.txt", "PROBE_OUTPUT=probe.txt")
		wantLines(t, "child", c.out, "state=active")
		var pos []int
		for _, l := range []string{missing, notalib, nosym, null, ctool} {
			i := strings.Index(c.verbose, "Opening "+l+"... ")
			require.GreaterOrEqual(t, i, 0, "%s not in verbose log:\n%s", l, c.verbose)
			pos = append(pos, i)
		}
		assert.True(t, sort.IntsAreSorted(pos), "libraries not tried in OMP_TOOL_LIBRARIES order:\n%s", c.verbose)
		wantContains(t, "verbose log", c.verbose, "Searching for ompt_start_tool in "+ctool+"... Success.\nTool was started and is using the OMPT interface.\n")
		wantNotContains(t, "verbose log", c.verbose, "Opening "+probe)
		assert.Empty(t, c.file("probe.txt"), "probe was asked after ctool accepted")
		assert.GreaterOrEqual(t, len(lines(c.file("c.txt"))), 30, "lines ctool printed")
	})
}

// TestLibraryNames: relative paths resolve from the working directory,
// bare names through the loader's search path.
func TestLibraryNames(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	buildCtool(t, sub)
	for _, tc := range []struct{ name, libs, ldpath string }{
		{"relative", "./sub/libctool.so", ""},
		{"bare name", "libctool.so", sub},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"OMP_TOOL_LIBRARIES=" + tc.libs, "CTOOL_OUTPUT=c.txt"}
			if tc.ldpath != "" {
				env = append(env, "LD_LIBRARY_PATH="+tc.ldpath)
			}
			c := run(t, dir, "events", env...)
			wantLines(t, "child", c.out, "state=active")
			wantContains(t, "verbose log", c.verbose, "Searching for ompt_start_tool in "+tc.libs+"... Success.\n")
			wantLines(t, "ctool", c.file("c.txt"), `ompt device_initialize dev=0 type="host gompt host device"`)
		})
	}
	t.Run("bare name not on the search path", func(t *testing.T) {
		c := run(t, dir, "start", "OMP_TOOL_LIBRARIES=libctool.so")
		wantLines(t, "child", c.out, "state=inactive")
		wantContains(t, "verbose log", c.verbose, "Opening libctool.so... Failed: libctool.so: cannot open shared object file: No such file or directory\n")
	})
}

// TestAddressSpaceFirst: an ompt_start_tool already in the process (here
// preloaded) is asked before OMP_TOOL_LIBRARIES; NULL from it continues
// the search.
func TestAddressSpaceFirst(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	ctool := buildCtool(t, dir)
	probe := build(t, dir, "probe")
	null := build(t, dir, "nullstart")

	c := run(t, dir, "events", "LD_PRELOAD="+ctool, "OMP_TOOL_LIBRARIES="+probe, "CTOOL_OUTPUT=c.txt", "PROBE_OUTPUT=probe.txt")
	wantLines(t, "child", c.out, "state=active")
	wantContains(t, "verbose log", c.verbose, "----- START LOGGING OF TOOL REGISTRATION -----\nSearch for OMP tool in current address space... Success.\nTool was started and is using the OMPT interface.\n----- END LOGGING OF TOOL REGISTRATION -----\n")
	wantNotContains(t, "verbose log", c.verbose, "OMP_TOOL_LIBRARIES =")
	assert.Empty(t, c.file("probe.txt"), "OMP_TOOL_LIBRARIES consulted although the address space had a tool")
	wantLines(t, "ctool", c.file("c.txt"), `ompt device_initialize dev=0 type="host gompt host device"`)

	c = run(t, t.TempDir(), "start", "LD_PRELOAD="+null, "OMP_TOOL_LIBRARIES="+ctool, "MARK_FILE=mark.txt", "CTOOL_OUTPUT=c.txt")
	wantLines(t, "child", c.out, "state=active")
	wantContains(t, "verbose log", c.verbose, "Search for OMP tool in current address space... Failed.\n",
		"Searching for ompt_start_tool in "+ctool+"... Success.\n")
	wantContains(t, "mark", c.file("mark.txt"), "nullstart asked")
}

// TestToolDisabled: OMP_TOOL=disabled means no search at all, even with a
// tool in the address space and in OMP_TOOL_LIBRARIES.
func TestToolDisabled(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	probe := build(t, dir, "probe")
	c := run(t, dir, "events", "OMP_TOOL=disabled", "LD_PRELOAD="+probe, "OMP_TOOL_LIBRARIES="+probe, "PROBE_OUTPUT=probe.txt")
	wantLines(t, "child", c.out, "state=inactive")
	assert.Equal(t, "OMP tool disabled. \n", c.verbose, "verbose log with OMP_TOOL=disabled: LLVM's one line")
	assert.Empty(t, c.file("probe.txt"), "ompt_start_tool was called with OMP_TOOL=disabled")
}

// TestBuildExampleTool checks the helper other packages' tests use.
func TestBuildExampleTool(t *testing.T) {
	needC(t)
	p, err := ctoolbuild.BuildExampleTool(t.TempDir())
	require.NoError(t, err)
	fi, err := os.Stat(p)
	require.NoError(t, err, "BuildExampleTool = %q", p)
	require.NotZero(t, fi.Size(), "size of BuildExampleTool's %q", p)
	require.Equal(t, "libctool.so", filepath.Base(p), "BuildExampleTool's file")
	assert.Error(t, ctoolbuild.BuildTool(filepath.Join(t.TempDir(), "x.so"), "testdata/notalib.txt"), "BuildTool accepted a file that is not C")
}

// TestReadmeTool builds the three-line tool of examples/tools/ctool's
// README exactly as written and runs events under it.
func TestReadmeTool(t *testing.T) {
	needC(t)
	src, err := ctoolbuild.ExampleToolSource()
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(src), "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "```c\n")
	code, _, ok2 := strings.Cut(rest, "```")
	require.True(t, ok && ok2, "README.md has no ```c block")
	assert.Len(t, lines(code), 5, "lines of the README tool")
	assert.Contains(t, string(readme), "tool in five lines", "the README should say how many lines its tool has")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mytool.c"), []byte(code), 0o644))
	lib := filepath.Join(dir, "libmytool.so")
	require.NoError(t, ctoolbuild.BuildTool(lib, filepath.Join(dir, "mytool.c")))
	c := run(t, dir, "events", "OMP_TOOL_LIBRARIES=./libmytool.so")
	for _, re := range []string{`(?m)^target begin dev=0 target_id=\d+$`, `(?m)^target end dev=1 target_id=\d+$`} {
		assert.Regexp(t, re, c.out, "no line matching")
	}
}

// TestLinkedStartTool: a C tool compiled into a Go program through cgo
// (testdata/linked), built with a plain go build (no -rdynamic), is found
// in the address space, as LLVM finds one linked into a C program.
func TestLinkedStartTool(t *testing.T) {
	needC(t)
	if testing.Short() {
		t.Skip("builds a program")
	}
	hdir, err := ctoolbuild.HeaderDir()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	inc := filepath.Join(dir, "include")
	os.Mkdir(inc, 0o755)
	require.NoError(t, os.Symlink(filepath.Join(hdir, "omp-tools.h"), filepath.Join(inc, "omp-tools.h")))
	src, err := ctoolbuild.SourceFile("target/internal/cabi/testdata/linked")
	require.NoError(t, err)
	exe := filepath.Join(dir, "linked")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-I"+inc)
	b, err := build.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", b)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "OMP_TOOL=enabled", "OMP_TOOL_LIBRARIES=", "OMP_TOOL_VERBOSE_INIT=stdout")
	b, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	wantContains(t, "output", string(b),
		fmt.Sprintf("linked ompt_start_tool %d %s\n", ompt.OMPVersion, ompt.RuntimeVersion()),
		"Search for OMP tool in current address space... Success.\nTool was started and is using the OMPT interface.\n",
		"linked initialize initial=0 lookup=1\n", "state=active\n", "linked finalize\n")
}
