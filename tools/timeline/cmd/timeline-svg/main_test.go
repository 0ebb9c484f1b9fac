package main

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

const sample = `{"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"host"}},
{"name":"process_name","ph":"M","pid":100,"args":{"name":"device 0: host gompt host device"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"thread 42"}},
{"name":"thread_name","ph":"M","pid":100,"tid":2,"args":{"name":"queue 1"}},
{"name":"target","cat":"target","ph":"X","ts":1000,"dur":500,"pid":1,"tid":1,"args":{"target_id":2}},
{"name":"to device 4 KiB","cat":"target_data_op","ph":"X","ts":1010,"dur":50,"pid":1,"tid":1,"args":{"op":"ompt_target_data_transfer_to_device","host_op_id":3}},
{"name":"submit","cat":"target_submit","ph":"X","ts":1100,"dur":300,"pid":1,"tid":1,"args":{"host_op_id":4}},
{"name":"to device 4 KiB","cat":"data_op","ph":"X","ts":1020,"dur":40,"pid":100,"tid":2,"args":{"op":"ompt_target_data_transfer_to_device","host_op_id":3}},
{"name":"kernel teams=8","cat":"kernel","ph":"X","ts":1110,"dur":280,"pid":100,"tid":2,"args":{"host_op_id":4}},
{"name":"target 2","cat":"flow","ph":"s","ts":1010,"pid":1,"tid":1,"id":3},
{"name":"target 2","cat":"flow","ph":"f","bp":"e","ts":1020,"pid":100,"tid":2,"id":3},
{"name":"target 2","cat":"flow","ph":"s","ts":1100,"pid":1,"tid":1,"id":4},
{"name":"target 2","cat":"flow","ph":"f","bp":"e","ts":1110,"pid":100,"tid":2,"id":4}
]}`

func events(t *testing.T) []Event {
	t.Helper()
	var f file
	if err := json.Unmarshal([]byte(sample), &f); err != nil {
		t.Fatal(err)
	}
	return f.TraceEvents
}

type svgDoc struct {
	Texts  []string `xml:"text"`
	Labels []string `xml:"g>text"`
	Rects  []struct {
		Fill  string `xml:"fill,attr"`
		Title string `xml:"title"`
	} `xml:"g>rect"`
	Paths []struct {
		D string `xml:"d,attr"`
	} `xml:"g>path"`
}

func TestRender(t *testing.T) {
	var sb strings.Builder
	if err := render(&sb, events(t), options{width: 1200, title: "sample <trace>"}); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal([]byte(sb.String()), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, sb.String())
	}
	if len(doc.Rects) != 5 {
		t.Errorf("%d boxes, want 5 (one per complete event)", len(doc.Rects))
	}
	colors := map[string]int{}
	for _, r := range doc.Rects {
		colors[r.Fill]++
		if r.Title == "" {
			t.Errorf("box without a tooltip")
		}
	}
	if colors["#9e6ac8"] != 1 || colors["#74c476"] != 2 || colors["#9ecae1"] != 1 {
		t.Errorf("box colours %v: want one kernel, two to-device, one construct", colors)
	}
	if len(doc.Paths) != 2 {
		t.Errorf("%d flow arrows, want 2", len(doc.Paths))
	}
	all := strings.Join(append(doc.Texts, doc.Labels...), "|")
	for _, want := range []string{"sample <trace>", "host", "device 0: host gompt host device", "thread 42", "queue 1", "kernel teams=8", "target"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in %q", want, all)
		}
	}
}

func TestRenderWindow(t *testing.T) {
	// only the kernel's time: the data op boxes fall outside
	var sb strings.Builder
	if err := render(&sb, events(t), options{width: 1200, from: 0.12, to: 0.38}); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal([]byte(sb.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rects) != 3 { // construct, submit, kernel
		t.Errorf("%d boxes in the window, want 3", len(doc.Rects))
	}
}

func TestRenderBadInput(t *testing.T) {
	if err := render(io.Discard, nil, options{width: 1200}); err == nil || !strings.Contains(err.Error(), "no complete") {
		t.Errorf("empty trace: %v", err)
	}
	if err := render(io.Discard, events(t), options{width: 1200, from: 5}); err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("window past the end: %v", err)
	}
}

func TestNiceStep(t *testing.T) {
	for v, want := range map[float64]float64{0.7: 1, 1.3: 2, 3: 5, 7: 10, 15: 20, 0.012: 0.02} {
		if got := niceStep(v); got < want*0.999 || got > want*1.001 {
			t.Errorf("niceStep(%g) = %g, want %g", v, got, want)
		}
	}
}
