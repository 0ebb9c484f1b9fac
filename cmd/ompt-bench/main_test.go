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

// TestBenchTable: the lookup cases' table has n entries (at least one),
// and its probe lies inside the middle one, 4 bytes in.
func TestBenchTable(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		tab, probe := benchTable(n)
		want := max(n, 1)
		if tab.Len() != want || len(probe) != 8 {
			t.Fatalf("benchTable(%d): %d entries, probe of %d bytes; want %d, 8", n, tab.Len(), len(probe), want)
		}
		mid := tab.Entries()[want/2]
		p, err := tab.Translate(probe[len(probe)/4 : len(probe)/2])
		if err != nil || p != mid.Device+6 {
			t.Errorf("benchTable(%d): Translate of the lookup cases' range = %#x, %v; want %#x (6 bytes into the middle entry %+v)", n, p, err, mid.Device+6, mid)
		}
	}
}
