package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gompt/gompt/tools/timeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	a := write("a.json", `{"traceEvents":[{"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"host"}},
{"name":"target","cat":"target","ph":"X","ts":5,"dur":1,"pid":1,"tid":7}],
"otherData":{"rank":0,"host":"n1","pid":11,"clock_anchor":{"wtime_zero_unix_ns":"2000000000"}}}`)
	b := write("b.json", `{"traceEvents":[{"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"host"}},
{"name":"target","cat":"target","ph":"X","ts":5,"dur":1,"pid":1,"tid":7}],
"otherData":{"rank":1,"host":"n2","pid":12,"clock_anchor":{"wtime_zero_unix_ns":"2000001000"}}}`)
	out := filepath.Join(dir, "m.json")
	var so, se bytes.Buffer
	require.NoError(t, run(out, []string{b, a}, &so, &se), "run")
	require.Empty(t, se.String(), "run's standard error")
	f, _ := os.Open(out)
	defer f.Close()
	m, err := timeline.ReadFile(f)
	require.NoError(t, err)
	var got []string
	for _, e := range m.TraceEvents {
		if e.Ph == "M" {
			got = append(got, e.Args["name"].(string))
		}
	}
	require.GreaterOrEqual(t, len(got), 2, "process names")
	assert.Equal(t, []string{"rank 0 (n1, pid 11): host", "rank 1 (n2, pid 12): host"}, got[:2], "process names")
	var ts []float64
	for _, e := range m.TraceEvents {
		if e.Ph == "X" {
			ts = append(ts, e.TS)
		}
	}
	assert.Equal(t, []float64{5, 6}, ts, "times") // b's zero is 1 us after a's

	for _, c := range []struct {
		files []string
		want  string
	}{
		{nil, "no trace files given"},
		{[]string{filepath.Join(dir, "missing.json")}, "missing.json: no such file"},
		{[]string{write("bad.json", "not json")}, "bad.json: not a trace file"},
	} {
		assert.ErrorContains(t, run("-", c.files, &so, &se), c.want, "run(%v)", c.files)
	}
}
