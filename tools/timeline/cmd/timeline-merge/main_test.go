package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gompt/gompt/tools/timeline"
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
	if err := run(out, []string{b, a}, &so, &se); err != nil || se.Len() != 0 {
		t.Fatalf("run: %v, stderr %q", err, se.String())
	}
	f, _ := os.Open(out)
	defer f.Close()
	m, err := timeline.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range m.TraceEvents {
		if e.Ph == "M" {
			got = append(got, e.Args["name"].(string))
		}
	}
	if got[0] != "rank 0 (n1, pid 11): host" || got[1] != "rank 1 (n2, pid 12): host" {
		t.Errorf("process names %q", got[:2])
	}
	var ts []float64
	for _, e := range m.TraceEvents {
		if e.Ph == "X" {
			ts = append(ts, e.TS)
		}
	}
	if len(ts) != 2 || ts[0] != 5 || ts[1] != 6 { // b's zero is 1 us after a's
		t.Errorf("times %v, want [5 6]", ts)
	}

	for _, c := range []struct {
		files []string
		want  string
	}{
		{nil, "no trace files given"},
		{[]string{filepath.Join(dir, "missing.json")}, "missing.json: no such file"},
		{[]string{write("bad.json", "not json")}, "bad.json: not a trace file"},
	} {
		if err := run("-", c.files, &so, &se); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%v) = %v, want an error saying %q", c.files, err, c.want)
		}
	}
}
