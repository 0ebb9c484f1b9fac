package main

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, json.Unmarshal([]byte(sample), &f))
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
	require.NoError(t, render(&sb, events(t), options{width: 1200, title: "sample <trace>"}))
	var doc svgDoc
	require.NoError(t, xml.Unmarshal([]byte(sb.String()), &doc), "not XML:\n%s", sb.String())
	assert.Len(t, doc.Rects, 5, "boxes: one per complete event")
	colors := map[string]int{}
	for _, r := range doc.Rects {
		colors[r.Fill]++
		assert.NotEmpty(t, r.Title, "box without a tooltip")
	}
	assert.Equal(t, 1, colors["#9e6ac8"], "kernel boxes (colours %v)", colors)
	assert.Equal(t, 2, colors["#74c476"], "to-device boxes (colours %v)", colors)
	assert.Equal(t, 1, colors["#9ecae1"], "construct boxes (colours %v)", colors)
	assert.Len(t, doc.Paths, 2, "flow arrows")
	all := strings.Join(append(doc.Texts, doc.Labels...), "|")
	for _, want := range []string{"sample <trace>", "host", "device 0: host gompt host device", "thread 42", "queue 1", "kernel teams=8", "target"} {
		assert.Contains(t, all, want, "the texts")
	}
}

func TestRenderWindow(t *testing.T) {
	// only the kernel's time: the data op boxes fall outside
	var sb strings.Builder
	require.NoError(t, render(&sb, events(t), options{width: 1200, from: 0.12, to: 0.38}))
	var doc svgDoc
	require.NoError(t, xml.Unmarshal([]byte(sb.String()), &doc))
	assert.Len(t, doc.Rects, 3, "boxes in the window: construct, submit, kernel")
}

func TestRenderBadInput(t *testing.T) {
	assert.ErrorContains(t, render(io.Discard, nil, options{width: 1200}), "no complete", "empty trace")
	assert.ErrorContains(t, render(io.Discard, events(t), options{width: 1200, from: 5}), "window", "window past the end")
}

func TestNiceStep(t *testing.T) {
	for v, want := range map[float64]float64{0.7: 1, 1.3: 2, 3: 5, 7: 10, 15: 20, 0.012: 0.02} {
		assert.InEpsilon(t, want, niceStep(v), 0.001, "niceStep(%g)", v)
	}
}
