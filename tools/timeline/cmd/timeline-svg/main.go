// Command timeline-svg draws a Chrome trace-event JSON file, such as the
// one GOMPT_TRACE writes, as an SVG picture: one band per process (the
// host, each device), one row per thread or queue, a box per complete
// event (nested events stacked below the event that holds them), an
// arrow per flow, and a time axis in milliseconds.
//
//	timeline-svg [-o out.svg] [-width 1600] [-from MS] [-to MS] [-title T] trace.json
//
// -from and -to select a window, in milliseconds from the first event.
// Standard library only; the output opens in any browser, and a headless
// browser turns it into a PNG (see docs/timeline.md).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// Event is the part of a trace event the picture uses.
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	ID   uint64         `json:"id"`
	Args map[string]any `json:"args"`
}

type file struct {
	TraceEvents []Event `json:"traceEvents"`
}

func main() {
	out := flag.String("o", "", "output file (default: standard output)")
	width := flag.Int("width", 1600, "picture width in pixels")
	from := flag.Float64("from", 0, "window start, ms after the first event")
	to := flag.Float64("to", 0, "window end, ms after the first event (0: the last event)")
	title := flag.String("title", "", "title line (default: the input file name)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: timeline-svg [-o out.svg] [-width px] [-from ms] [-to ms] [-title t] trace.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	in := flag.Arg(0)
	b, err := os.ReadFile(in)
	if err != nil {
		fail(err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		fail(fmt.Errorf("%s: not a trace-event JSON file: %v", in, err))
	}
	if *title == "" {
		*title = in
	}
	if *width < 400 {
		fail(fmt.Errorf("-width %d: want at least 400", *width))
	}
	if *to != 0 && *to <= *from {
		fail(fmt.Errorf("-from %g -to %g: want from < to", *from, *to))
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		fh, err := os.Create(*out)
		if err != nil {
			fail(err)
		}
		defer func() {
			if err := fh.Close(); err != nil {
				fail(err)
			}
		}()
		w = fh
	}
	if err := render(w, f.TraceEvents, options{width: *width, from: *from, to: *to, title: *title}); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "timeline-svg:", err)
	os.Exit(1)
}

type options struct {
	width    int
	from, to float64 // ms after the first event; to 0: the end
	title    string
}

type row struct {
	pid, tid int
	name     string
	sort     int
	evs      []*placed
	depth    int
	y        float64 // top
}

type placed struct {
	ev    Event
	level int
	row   *row
}

type proc struct {
	pid  int
	name string
	sort int
	rows []*row
}

// Layout constants, in pixels.
const (
	labelW  = 250.0
	levelH  = 20.0
	rowGap  = 6.0
	procGap = 26.0
	axisH   = 40.0
	titleH  = 28.0
	legendH = 30.0
	fontPx  = 11.0
	charW   = 6.2 // average glyph width of an 11px sans-serif font
)

func render(w io.Writer, evs []Event, o options) error {
	procs := map[int]*proc{}
	rows := map[[2]int]*row{}
	getProc := func(pid int) *proc {
		p := procs[pid]
		if p == nil {
			p = &proc{pid: pid, name: fmt.Sprintf("process %d", pid), sort: pid}
			procs[pid] = p
		}
		return p
	}
	getRow := func(pid, tid int) *row {
		k := [2]int{pid, tid}
		r := rows[k]
		if r == nil {
			r = &row{pid: pid, tid: tid, name: fmt.Sprintf("thread %d", tid), sort: tid}
			rows[k] = r
			p := getProc(pid)
			p.rows = append(p.rows, r)
		}
		return r
	}
	var xs []Event
	flows := map[uint64][]Event{}
	t0, t1 := math.Inf(1), math.Inf(-1)
	for _, ev := range evs {
		switch ev.Ph {
		case "M":
			name, _ := ev.Args["name"].(string)
			idx, isIdx := ev.Args["sort_index"].(float64)
			switch ev.Name {
			case "process_name":
				getProc(ev.PID).name = name
			case "process_sort_index":
				if isIdx {
					getProc(ev.PID).sort = int(idx)
				}
			case "thread_name":
				getRow(ev.PID, ev.TID).name = name
			case "thread_sort_index":
				if isIdx {
					getRow(ev.PID, ev.TID).sort = int(idx)
				}
			}
		case "X":
			if ev.Dur < 0 {
				ev.Dur = 0
			}
			xs = append(xs, ev)
			t0, t1 = math.Min(t0, ev.TS), math.Max(t1, ev.TS+ev.Dur)
		case "s", "f":
			flows[ev.ID] = append(flows[ev.ID], ev)
		}
	}
	if len(xs) == 0 {
		return fmt.Errorf("the trace has no complete (ph X) events to draw")
	}
	// the window, in trace microseconds
	lo, hi := t0+o.from*1e3, t1
	if o.to != 0 {
		hi = t0 + o.to*1e3
	}
	if hi <= lo {
		return fmt.Errorf("the window [%g ms, %g ms] holds no time of the trace (it spans %.3f ms)", o.from, o.to, (t1-t0)/1e3)
	}
	// nesting levels per row
	sort.SliceStable(xs, func(i, j int) bool {
		if xs[i].TS != xs[j].TS {
			return xs[i].TS < xs[j].TS
		}
		return xs[i].Dur > xs[j].Dur
	})
	open := map[*row][]*placed{}
	for _, ev := range xs {
		r := getRow(ev.PID, ev.TID)
		st := open[r]
		for len(st) > 0 && st[len(st)-1].ev.TS+st[len(st)-1].ev.Dur <= ev.TS {
			st = st[:len(st)-1]
		}
		p := &placed{ev: ev, level: len(st), row: r}
		open[r] = append(st, p)
		r.evs = append(r.evs, p)
		r.depth = max(r.depth, p.level+1)
	}
	var plist []*proc
	for _, p := range procs {
		if len(p.rows) > 0 {
			plist = append(plist, p)
		}
	}
	sort.Slice(plist, func(i, j int) bool { return plist[i].sort < plist[j].sort })
	y := titleH + legendH + axisH
	for _, p := range plist {
		sort.Slice(p.rows, func(i, j int) bool { return p.rows[i].sort < p.rows[j].sort })
		y += procGap
		for _, r := range p.rows {
			r.y = y
			y += float64(max(r.depth, 1))*levelH + rowGap
		}
	}
	height := y + 10
	W := float64(o.width)
	plotW := W - labelW - 20
	xOf := func(ts float64) float64 { return labelW + (ts-lo)/(hi-lo)*plotW }

	var sb strings.Builder
	pf := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }
	pf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="DejaVu Sans, Arial, sans-serif" font-size="%g">`+"\n", o.width, height, o.width, height, fontPx)
	pf(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>`)
	pf(`<clipPath id="plot"><rect x="%.1f" y="0" width="%.1f" height="%.0f"/></clipPath></defs>`+"\n", labelW, plotW, height)
	pf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	pf(`<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(o.title))
	// legend
	lx := 10.0
	for _, l := range legend {
		pf(`<rect x="%.1f" y="%.1f" width="14" height="12" fill="%s" stroke="#333" stroke-width="0.5"/><text x="%.1f" y="%.1f">%s</text>`+"\n",
			lx, titleH+6, l.color, lx+18, titleH+16, esc(l.name))
		lx += 18 + float64(len(l.name))*charW + 22
	}
	pf(`<path d="M%.1f,%.1f l40,0" stroke="#555" stroke-width="1" marker-end="url(#arrow)"/><text x="%.1f" y="%.1f">flow: host operation to its device work</text>`+"\n",
		lx, titleH+12, lx+46, titleH+16)
	// axis
	axisY := titleH + legendH + axisH - 8
	step := niceStep((hi - lo) / 1e3 / 10)
	pf(`<text x="10" y="%.1f" fill="#444">time (ms)</text>`+"\n", axisY)
	for ms := math.Ceil((lo-t0)/1e3/step) * step; t0+ms*1e3 <= hi; ms += step {
		x := xOf(t0 + ms*1e3)
		pf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">%s</text>`+"\n",
			x, axisY+4, x, height-10, x, axisY, trimFloat(ms))
	}
	// bands and rows
	for _, p := range plist {
		top := p.rows[0].y
		pf(`<text x="10" y="%.1f" font-weight="bold" font-size="12">%s</text>`+"\n", top-8, esc(clip(p.name, (W-20)/(charW*1.1))))
		for i, r := range p.rows {
			h := float64(max(r.depth, 1)) * levelH
			fill := "#f6f7f9"
			if i%2 == 1 {
				fill = "#eef0f3"
			}
			pf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", labelW, r.y, plotW, h, fill)
			pf(`<text x="20" y="%.1f">%s</text>`+"\n", r.y+14, esc(clip(r.name, (labelW-30)/charW)))
		}
	}
	// boxes
	pf(`<g clip-path="url(#plot)">` + "\n")
	for _, r := range rows {
		for _, p := range r.evs {
			ev := p.ev
			x0, x1 := xOf(ev.TS), xOf(ev.TS+ev.Dur)
			if x1 < labelW || x0 > labelW+plotW {
				continue
			}
			bw := math.Max(x1-x0, 1)
			by := r.y + float64(p.level)*levelH + 1
			pf(`<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" stroke="#333" stroke-width="0.4"><title>%s</title></rect>`+"\n",
				x0, by, bw, levelH-2, color(ev), esc(tooltip(ev)))
			if room := (math.Min(x1, labelW+plotW) - math.Max(x0, labelW) - 4) / charW; room >= 3 {
				pf(`<text x="%.2f" y="%.1f" fill="%s">%s</text>`+"\n", math.Max(x0, labelW)+2, by+13, textColor(ev), esc(clip(ev.Name, room)))
			}
		}
	}
	// flows: from the start of the host box to the start of the device box
	ids := make([]uint64, 0, len(flows))
	for id := range flows {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		var s, f *Event
		for i := range flows[id] {
			switch e := &flows[id][i]; e.Ph {
			case "s":
				s = e
			case "f":
				f = e
			}
		}
		if s == nil || f == nil {
			continue
		}
		ys, yf := flowY(rows, s), flowY(rows, f)
		pf(`<path d="M%.2f,%.1f L%.2f,%.1f" stroke="#555" stroke-opacity="0.6" stroke-width="0.8" fill="none" marker-end="url(#arrow)"/>`+"\n",
			xOf(s.TS), ys, xOf(f.TS), yf)
	}
	pf("</g>\n</svg>\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// flowY is the vertical middle of the deepest box at the flow event's
// time on its row (the box it binds to), or the row's first level.
func flowY(rows map[[2]int]*row, e *Event) float64 {
	r := rows[[2]int{e.PID, e.TID}]
	if r == nil {
		return 0
	}
	level := 0
	for _, p := range r.evs {
		if p.ev.TS <= e.TS && e.TS <= p.ev.TS+p.ev.Dur {
			level = max(level, p.level)
		}
	}
	return r.y + float64(level)*levelH + levelH/2
}

var legend = []struct{ name, color string }{
	{"target construct", "#9ecae1"}, {"alloc / delete", "#bdbdbd"}, {"to device", "#74c476"},
	{"from device", "#fd8d3c"}, {"kernel", "#9e6ac8"}, {"submit (host)", "#dadaeb"},
}

func color(ev Event) string {
	op, _ := ev.Args["op"].(string)
	switch {
	case ev.Cat == "target":
		return legend[0].color
	case ev.Cat == "kernel":
		return legend[4].color
	case ev.Cat == "target_submit":
		return legend[5].color
	case strings.Contains(op, "to_device"):
		return legend[2].color
	case strings.Contains(op, "from_device"):
		return legend[3].color
	case op != "":
		return legend[1].color
	}
	return "#c7e9c0"
}

func textColor(ev Event) string {
	if ev.Cat == "kernel" {
		return "white"
	}
	return "#111"
}

func tooltip(ev Event) string {
	keys := make([]string, 0, len(ev.Args))
	for k := range ev.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fmt.Sprintf("%s\n%.3f ms, %.1f us", ev.Name, ev.TS/1e3, ev.Dur)
	for _, k := range keys {
		s += fmt.Sprintf("\n%s: %v", k, ev.Args[k])
	}
	return s
}

// niceStep rounds a tick interval up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// clip shortens s to at most n characters, with an ellipsis.
func clip(s string, n float64) string {
	r := []rune(s)
	if float64(len(r)) <= n {
		return s
	}
	k := int(n) - 1
	if k < 1 {
		return ""
	}
	return string(r[:k]) + "…"
}

func esc(s string) string { return html.EscapeString(s) }
