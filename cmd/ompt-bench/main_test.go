package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummarize(t *testing.T) {
	rs := []result{
		{Name: "c", Device: "host:0", NsPerOp: 300, BytesPerSec: 1, AllocsPerOp: 1, Iterations: 10},
		{Name: "c", Device: "host:0", NsPerOp: 100, BytesPerSec: 3, AllocsPerOp: 0, Iterations: 30, Metrics: map[string]float64{"cpu-ns/op": 7}},
		{Name: "c", Device: "host:0", Error: "boom"},
		{Name: "c", Device: "host:0", NsPerOp: 200, BytesPerSec: 2, AllocsPerOp: 2, Iterations: 20},
		{Name: "c", Device: "host:0", NsPerOp: 400, BytesPerSec: 0.5, AllocsPerOp: 2, Iterations: 5},
	}
	got := summarize(rs)
	want := result{Name: "c", Device: "host:0", NsPerOp: 100, BytesPerSec: 3, AllocsPerOp: 0, Iterations: 30, Error: "boom", Rounds: 5, NsPerOpMedian: 250,
		Metrics: map[string]float64{"cpu-ns/op": 7}} // the lowest round's
	assert.Equal(t, want, got, "summarize")
	assert.Equal(t, result{Name: "c", Error: "x", Rounds: 2},
		summarize([]result{{Name: "c", Error: "x"}, {Name: "c", Error: "y"}}), "all rounds failed")
	one := summarize(rs[1:2])
	assert.Equal(t, 100.0, one.NsPerOp, "one round: lowest")
	assert.Equal(t, 100.0, one.NsPerOpMedian, "one round: median")
}
