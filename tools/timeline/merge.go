package timeline

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
)

// MergeInput is one trace file to merge: its name (for messages) and its
// content.
type MergeInput struct {
	Name string
	File File
}

// rankPIDs is how far apart the process ids of two inputs are in a
// merged timeline: input i's process p becomes (i+1)*rankPIDs + p.
const rankPIDs = 10000

// ReadFile decodes a trace file written by the tool.
func ReadFile(r io.Reader) (File, error) {
	var f File
	d := json.NewDecoder(r)
	d.UseNumber()
	if err := d.Decode(&f); err != nil {
		return File{}, err
	}
	return f, nil
}

// Merge puts the timelines of several processes (the files of an MPI job's
// ranks, written with GOMPT_TRACE=trace-%r.json) into one: each input's
// processes (host, devices) become a group named "rank R (host, pid P)",
// sorted by rank, and every time is moved onto one base, microseconds
// from the earliest input's time zero, using each file's clock anchor (the
// wall-clock time of its zero). Flow ids are kept apart per input. An
// input without an anchor (written by an older gompt) is kept on its own
// base, with a warning; so is an input whose rank another input has
// already. The inputs are not changed.
func Merge(in []MergeInput) (File, []string, error) {
	if len(in) == 0 {
		return File{}, nil, fmt.Errorf("no trace files to merge")
	}
	if len(in) >= math.MaxInt32/rankPIDs-1 {
		return File{}, nil, fmt.Errorf("%d trace files: at most %d", len(in), math.MaxInt32/rankPIDs-2)
	}
	type input struct {
		MergeInput
		rank     int
		hasRank  bool
		host     string
		pid      string
		zero     int64 // wall-clock ns of the file's time zero
		hasZero  bool
		offsetUS float64
	}
	var warnings []string
	ins := make([]*input, len(in))
	base := int64(math.MaxInt64)
	for i, m := range in {
		x := &input{MergeInput: m, rank: i}
		o := m.File.OtherData
		if r, ok := number(o["rank"]); ok {
			x.rank, x.hasRank = int(r), true
		}
		x.host, _ = o["host"].(string)
		if p, ok := number(o["pid"]); ok {
			x.pid = strconv.FormatInt(int64(p), 10)
		}
		if a, ok := o["clock_anchor"].(map[string]any); ok {
			if s, ok := a["wtime_zero_unix_ns"].(string); ok {
				if z, err := strconv.ParseInt(s, 10, 64); err == nil {
					x.zero, x.hasZero = z, true
					base = min(base, z)
				}
			}
		}
		if !x.hasZero {
			warnings = append(warnings, fmt.Sprintf("%s has no clock anchor (written by an older gompt, or not by GOMPT_TRACE): its times are not moved onto the common base", m.Name))
		}
		if len(m.File.TraceEvents) == 0 {
			warnings = append(warnings, fmt.Sprintf("%s has no events (%v)", m.Name, o["incomplete"]))
		}
		ins[i] = x
	}
	seen := map[int]string{}
	for _, x := range ins {
		if !x.hasRank {
			continue
		}
		if other, dup := seen[x.rank]; dup {
			warnings = append(warnings, fmt.Sprintf("%s and %s both say rank %d", other, x.Name, x.rank))
		}
		seen[x.rank] = x.Name
	}
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ins[order[a]].rank < ins[order[b]].rank })

	var meta, body []Event
	var inputs []map[string]any
	for g, i := range order {
		x := ins[i]
		if x.hasZero {
			x.offsetUS = float64(x.zero-base) / 1e3
		}
		label := "rank " + strconv.Itoa(x.rank)
		if !x.hasRank {
			label = "file " + x.Name
		}
		var who []string
		if x.host != "" {
			who = append(who, x.host)
		}
		if x.pid != "" {
			who = append(who, "pid "+x.pid)
		}
		if len(who) > 0 {
			label += " (" + joinComma(who) + ")"
		}
		inputs = append(inputs, map[string]any{"file": x.Name, "rank": x.rank, "host": x.host, "pid": x.pid,
			"offset_us": x.offsetUS, "anchored": x.hasZero, "label": label})
		pidOf := func(p int) int { return (g+1)*rankPIDs + p }
		for _, ev := range x.File.TraceEvents {
			ev.PID = pidOf(ev.PID)
			if ev.Ph == "M" {
				args := map[string]any{}
				for k, v := range ev.Args {
					args[k] = v
				}
				switch ev.Name {
				case "process_name":
					args["name"] = label + ": " + fmt.Sprint(args["name"])
				case "process_sort_index":
					if s, ok := number(args["sort_index"]); ok {
						args["sort_index"] = (g+1)*rankPIDs + int(s)
					}
				}
				ev.Args = args
				meta = append(meta, ev)
				continue
			}
			ev.TS += x.offsetUS
			if ev.ID != 0 {
				ev.ID += uint64(g+1) << 40 // flows of different processes stay apart
			}
			body = append(body, ev)
		}
	}
	sort.SliceStable(body, func(a, b int) bool { return body[a].TS < body[b].TS })
	other := map[string]any{
		"tool":      "gompt tools/timeline/cmd/timeline-merge",
		"time_base": "microseconds from the earliest input's omp_get_wtime zero, by each input's clock anchor (wall clock)",
		"inputs":    inputs,
	}
	if base != math.MaxInt64 {
		other["time_zero_unix_ns"] = strconv.FormatInt(base, 10)
	}
	return File{TraceEvents: append(meta, body...), DisplayTimeUnit: "ns", OtherData: other}, warnings, nil
}

// WriteFile writes f as the tool does, one event per line.
func WriteFile(w io.Writer, f File) error { return write(w, f) }

// number reads a JSON number decoded as json.Number or float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
