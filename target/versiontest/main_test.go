package versiontest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/target/internal/cabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "GOMPT_VERSIONTEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// mode is one version of the tools interface and what it reports with
// two host offload devices (0, 1): the host's number in data operations
// and elsewhere, and the kinds of copies.
type mode struct {
	name       string
	env        []string
	version    int
	opHost     int // the host in data ops
	host       int // the host in initialize and target events
	to, from   int // host to device, device to host (and device to device)
	toA, fromA int // their async kinds
	rectAsOne  bool
	limits     bool
}

var modes = []mode{
	{"5.2", nil, 202011, 2, 2, 2, 3, 18, 19, false, false},
	{"6.0", []string{"GOMPT_OMPT_VERSION=6.0"}, 202411, -1, -1, 7, 7, 23, 23, true, true},
	{"llvm", []string{"GOMPT_TOOL_PROFILE=llvm"}, 202011, -1, 2, 2, 3, 18, 19, false, false},
}

// op is what a data-op line or record says.
type op struct{ kind, src, dst, bytes int }

func (o op) String() string {
	return fmt.Sprintf("kind=%d src=%d dst=%d bytes=%d", o.kind, o.src, o.dst, o.bytes)
}

// run runs the child with tool face ("go" or "c") in mode m and returns
// its lines by the mark they follow ("" before the first).
func run(t *testing.T, face string, m mode, extra ...string) (map[string][]string, []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(append(os.Environ(), childEnv+"="+face, "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=2",
		"OMP_TOOL=enabled", "OMP_TOOL_LIBRARIES=", "GOMPT_OMPT_VERSION=", "GOMPT_TOOL_PROFILE="), m.env...), extra...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", b)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Contains(t, lines, "mark done", "child:\n%s", b)
	seg := map[string][]string{}
	cur := ""
	for _, l := range lines {
		if w, ok := strings.CutPrefix(l, "mark "); ok {
			cur = w
			continue
		}
		seg[cur] = append(seg[cur], l)
	}
	return seg, lines
}

// ops returns the data ops of the end lines among ls.
func ops(ls []string) []op {
	var r []op
	for _, l := range ls {
		var o op
		if _, err := fmt.Sscanf(l, "op end kind=%d src_dev=%d dest_dev=%d bytes=%d", &o.kind, &o.src, &o.dst, &o.bytes); err == nil {
			r = append(r, o)
		}
	}
	return r
}

func records(all []string) []op {
	var r []op
	for _, l := range all {
		var o op
		if _, err := fmt.Sscanf(l, "rec kind=%d src_dev=%d dest_dev=%d bytes=%d", &o.kind, &o.src, &o.dst, &o.bytes); err == nil {
			r = append(r, o)
		}
	}
	return r
}

func grep(ls []string, prefix string) []string {
	var r []string
	for _, l := range ls {
		if strings.HasPrefix(l, prefix) {
			r = append(r, l)
		}
	}
	return r
}

// check asserts what face's tool saw in mode m.
func check(t *testing.T, m mode, seg map[string][]string, all []string) {
	h := m.opHost
	assert.Equal(t, []string{fmt.Sprintf("start omp_version=%d", m.version)}, grep(all, "start "), "omp_version")
	assert.Equal(t, []string{fmt.Sprintf("init initial_device_num=%d", m.host)}, grep(all, "init "), "initial_device_num")
	bl := grep(all, "buffer_limits ")
	require.Len(t, bl, 2, "device_initialize for devices 0 and 1")
	for i, l := range bl {
		if m.limits {
			assert.Equal(t, fmt.Sprintf("buffer_limits dev=%d resolved=1 max=1 bytes=1048576 ok=true", i), l)
		} else {
			assert.Equal(t, fmt.Sprintf("buffer_limits dev=%d resolved=0", i), l)
		}
	}
	want := map[string][]op{
		"alloc":     {{1, h, 0, 256}, {1, h, 1, 256}},
		"h2d":       {{m.to, h, 0, 256}},
		"d2d":       {{m.from, 0, 1, 256}},
		"d2h":       {{m.from, 1, h, 256}},
		"d2same":    {{m.from, 0, 0, 256}},
		"memset":    {{8, h, 0, 256}},
		"associate": {{5, h, 1, 256}, {6, h, 1, 0}},
		"free":      {{4, 0, h, 0}, {4, 1, h, 0}},
		"target":    {{1, h, 0, 256}, {m.to, h, 0, 256}, {m.from, 0, h, 256}, {4, 0, h, 0}},
		"nowait":    {{17, h, 0, 256}, {m.toA, h, 0, 256}, {m.fromA, 0, h, 256}, {20, 0, h, 0}},
	}
	if m.rectAsOne {
		want["rect"] = []op{{9, h, 0, 32}}
		var src, dst string
		rb := grep(seg["rect"], "rectbase ")
		require.Len(t, rb, 1)
		_, err := fmt.Sscanf(rb[0], "rectbase src=%s dest=%s", &src, &dst)
		require.NoError(t, err)
		r := grep(seg["rect"], "op ")
		require.Len(t, r, 2, "begin and end")
		for _, l := range r {
			assert.Contains(t, l, "src base="+src+" size=4 ndims=2 vol=[2 4] off=[1 2] dims=[8 8]", "source subvolume")
			assert.Contains(t, l, "dest base="+dst+" size=4 ndims=2 vol=[2 4] off=[1 2] dims=[8 8]", "destination subvolume")
		}
		assert.Len(t, grep(all, "rec kind=9 src_dev=-1 dest_dev=0 bytes=32 src="+src+" dest="+dst), 1, "the rect record names both arrays")
	} else {
		want["rect"] = []op{{m.to, h, 0, 16}, {m.to, h, 0, 16}}
	}
	var every []op
	for w, ops1 := range want {
		assert.Equal(t, ops1, ops(seg[w]), "data ops of %s", w)
		every = append(every, ops1...)
	}
	// one record per data op, saying the same
	recs := records(all)
	cmp := func(a, b op) int { return strings.Compare(a.String(), b.String()) }
	slices.SortFunc(every, cmp)
	slices.SortFunc(recs, cmp)
	assert.Equal(t, every, recs, "trace records against callbacks")
	assert.Equal(t, []string{"target begin kind=1 dev=0", "target end kind=1 dev=0"}, grep(seg["target"], "target "), "target events")
	assert.Equal(t, []string{fmt.Sprintf("target begin kind=1 dev=%d", m.host), fmt.Sprintf("target end kind=1 dev=%d", m.host)},
		grep(seg["host"], "target "), "a target construct on the host")
}

// TestGoToolInEveryMode: a Go tool's callbacks and records for each data
// operation kind, in each mode.
func TestGoToolInEveryMode(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			seg, all := run(t, "go", m)
			check(t, m, seg, all)
		})
	}
}

// TestCToolInEveryMode: the same through a C tool built against
// omp-tools.h (testdata/cversion.c), which reads the subvolumes through
// C's ompt_subvolume_t and calls ompt_get_buffer_limits through C.
func TestCToolInEveryMode(t *testing.T) {
	if !cabi.Available {
		require.Empty(t, os.Getenv("CI"), "CI is set but C tools need cgo")
		t.Skip("C tools need cgo")
	}
	lib := filepath.Join(t.TempDir(), "libcversion.so")
	if err := ctoolbuild.BuildTool(lib, filepath.Join("testdata", "cversion.c")); err != nil {
		if os.Getenv("CI") != "" {
			require.NoError(t, err, "CI is set")
		}
		t.Skip(err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			seg, all := run(t, "c", m, "OMP_TOOL_LIBRARIES="+lib)
			check(t, m, seg, all)
		})
	}
}

// TestBadValuesWarn: a bad GOMPT_OMPT_VERSION or GOMPT_TOOL_PROFILE is one
// line on stderr naming the variable, the value and what it accepts, and
// the default (5.2); both 6.0 and llvm are the llvm profile, with a
// warning.
func TestBadValuesWarn(t *testing.T) {
	for _, c := range []struct {
		env  []string
		warn string
		m    mode
	}{
		{[]string{"GOMPT_OMPT_VERSION=5.1"}, `gompt: GOMPT_OMPT_VERSION="5.1" is not valid (use 5.2 or 6.0); using 5.2`, modes[0]},
		{[]string{"GOMPT_OMPT_VERSION=202411"}, `gompt: GOMPT_OMPT_VERSION="202411" is not valid (use 5.2 or 6.0); using 5.2`, modes[0]},
		{[]string{"GOMPT_TOOL_PROFILE=gnu"}, `gompt: GOMPT_TOOL_PROFILE="gnu" is not valid (use openmp or llvm); using openmp`, modes[0]},
		{[]string{"GOMPT_OMPT_VERSION=6.0", "GOMPT_TOOL_PROFILE=llvm"}, `gompt: GOMPT_TOOL_PROFILE=llvm follows LLVM's runtime, which reports OpenMP 5.x data-op kinds: GOMPT_OMPT_VERSION="6.0" is ignored`, modes[2]},
		{[]string{"GOMPT_OMPT_VERSION= 6.0 "}, "", modes[1]},
	} {
		t.Run(strings.Join(c.env, ","), func(t *testing.T) {
			seg, all := run(t, "go", c.m, c.env...)
			if c.warn == "" {
				assert.Empty(t, grep(all, "gompt: "), "warnings")
			} else {
				assert.Equal(t, []string{c.warn}, grep(all, "gompt: "), "warnings")
			}
			check(t, c.m, seg, all)
		})
	}
}
