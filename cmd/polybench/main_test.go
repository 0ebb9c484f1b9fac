package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gompt/gompt/bench/polybench"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := target.Shutdown(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "target.Shutdown:", err)
		code = 1
	}
	os.Exit(code)
}

// needClang skips the test when clang-19 is missing, saying why, except
// with CI=true, where it is a failure.
func needClang(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(polybench.Clang); err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "%s not found (%v); CI is set, so this is a failure: install clang-19 and libomp-19-dev", polybench.Clang, err)
		t.Skipf("%s not found (%v): the command cannot build its C; install clang-19 and libomp-19-dev", polybench.Clang, err)
	}
}

// TestTable runs the command on two kernels at MINI, one round, and checks
// the table: a row per kernel with C's time and every device's, and the
// geometric means.
func TestTable(t *testing.T) {
	needClang(t)
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"-size", "MINI", "-rounds", "1", "-kernel", "^(gemm|jacobi-2d)$"}, &out, &errOut), errOut.String())
	s := out.String()
	require.Contains(t, s, "MINI dataset")
	require.Contains(t, s, "whole launcher calls")
	require.Contains(t, s, "parallel regions")
	for _, d := range target.Devices() {
		require.Contains(t, s, d.ID)
	}
	require.Contains(t, s, "initial")
	for _, k := range []string{"gemm", "jacobi-2d", "geomean"} {
		found := false
		for _, line := range strings.Split(s, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == k {
				found = true
			}
		}
		require.True(t, found, "no row %s in\n%s", k, s)
	}
	require.NotContains(t, s, "!", "a device's results differ from C's:\n%s", s)
}

// TestJSON runs one kernel on the initial device and host:0 with -json.
func TestJSON(t *testing.T) {
	needClang(t)
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"-size", "MINI", "-rounds", "2", "-kernel", "^atax$", "-device", "host:0,initial", "-json"}, &out, &errOut), errOut.String())
	var rep report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.Equal(t, "MINI", rep.Size)
	require.Equal(t, 2, rep.Rounds)
	require.Len(t, rep.Kernels, 1)
	r := rep.Kernels[0]
	require.Equal(t, "atax", r.Kernel)
	require.Equal(t, map[string]int{"M": 38, "N": 42}, r.Params)
	require.Greater(t, r.CSeconds, 0.0)
	require.Len(t, r.Gompt, 2)
	for name, c := range r.Gompt {
		require.Greater(t, c.Seconds, 0.0, name)
		require.False(t, c.Differs, name)
	}
	require.Contains(t, []string{"host:0", "initial"}, r.Best)
	require.False(t, rep.Differ)
}

// TestBadFlags: errors name what is wrong, before anything runs.
func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-size", "HUGE"}, `unknown dataset "HUGE"`},
		{[]string{"-rounds", "0"}, "-rounds must be at least 1"},
		{[]string{"-kernel", "nope"}, `no kernel matches "nope"`},
		{[]string{"-kernel", "("}, "error parsing regexp"},
		{[]string{"-device", "cuda:7"}, `no device "cuda:7"`},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		err := run(c.args, new(bytes.Buffer), new(bytes.Buffer))
		require.ErrorContains(t, err, c.want, "%q", c.args)
	}
}
