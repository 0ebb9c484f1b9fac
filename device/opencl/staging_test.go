//go:build cgo

package opencl

import (
	"bytes"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/internal/cl"
)

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// TestStagedCopies forces staging on POCL (as on a GPU) and round-trips
// copies below, at and well above the threshold, at an unaligned interior
// offset, from several goroutines on queues of their own; a CopyIn's
// source may be overwritten as soon as it returns; a profiled copy goes
// directly; the pool stays within its budget, and Close releases it.
func TestStagedCopies(t *testing.T) {
	base := clDevices(t)[0]
	before := cl.Live()
	func() {
		d := pretend(t, base, hooks{staging: true}, 0)
		const off = 3
		sizes := []int{stagingMin - 1, stagingMin, 2*stagingChunk + 12345, 5*stagingChunk + 1}
		buf, err := d.Alloc(off + 5*stagingChunk + 1)
		if err != nil {
			t.Fatal(err)
		}
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range sizes {
			src := pattern(n, i)
			want := append([]byte(nil), src...)
			if err := q.CopyIn(buf.Ptr+off, src); err != nil {
				t.Fatalf("CopyIn of %d bytes: %v", n, err)
			}
			made := poolMade(d)
			if n >= stagingMin {
				// Staged: the source is free as soon as CopyIn returns.
				clear(src)
				if made == 0 {
					t.Errorf("CopyIn of %d bytes made no staging buffer", n)
				}
			}
			got := make([]byte, n)
			if err := q.CopyOut(got, buf.Ptr+off); err != nil {
				t.Fatalf("CopyOut of %d bytes: %v", n, err)
			}
			if err := q.Sync(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < n && got[i] == want[i] {
					i++
				}
				t.Fatalf("round trip of %d bytes at offset %d: first difference at byte %d (chunk %d)", n, off, i, i/stagingChunk)
			}
		}
		if made := poolMade(d); made != stagingDepth {
			t.Errorf("%d staging buffers after staged copies on one queue, want %d", made, stagingDepth)
		}
		// Several queues at once share the pool and never exceed it.
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q, err := d.NewQueue()
				if err != nil {
					t.Error(err)
					return
				}
				defer q.Release()
				b, err := d.Alloc(3*stagingChunk + 7)
				if err != nil {
					t.Error(err)
					return
				}
				defer d.Free(b.Ptr)
				for r := range 2 {
					src := pattern(3*stagingChunk+7, 100*w+r)
					if err := q.CopyIn(b.Ptr, src); err != nil {
						t.Error(err)
						return
					}
					got := make([]byte, len(src))
					if err := q.CopyOut(got, b.Ptr); err != nil {
						t.Error(err)
						return
					}
					if err := q.Sync(); err != nil {
						t.Error(err)
						return
					}
					if !bytes.Equal(got, src) {
						t.Errorf("worker %d round %d: wrong data", w, r)
						return
					}
				}
			}()
		}
		waitAll(t, &wg, "staged copies on 4 queues")
		if made := poolMade(d); made > stagingMax {
			t.Errorf("%d staging buffers made, budget %d", made, stagingMax)
		}
		// Profiled: the copy goes directly and its timing is its command's.
		made := poolMade(d)
		q.(device.Profiler).Profile(true)
		if err := q.CopyIn(buf.Ptr, pattern(2*stagingChunk, 9)); err != nil {
			t.Fatal(err)
		}
		if _, _, native, err := q.(device.Profiler).Last().Times(); err != nil || native.Type != typeWrite {
			t.Errorf("timing of a large profiled copy: %q, %v", native.Type, err)
		}
		q.(device.Profiler).Profile(false)
		if poolMade(d) != made {
			t.Error("a profiled copy made staging buffers")
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if live, _ := d.pool.Counts(); live != 0 {
			t.Errorf("%d staging buffers left after Close", live)
		}
	}()
	if after := cl.Live(); after != before {
		t.Errorf("live OpenCL objects %+v after Close, %+v before", after, before)
	}
}

// TestStagingChoice: staging is on by default only for devices that are
// not CPUs and do not share host memory, and the environment overrides it.
func TestStagingChoice(t *testing.T) {
	for _, c := range []struct {
		typ     string
		unified bool
		want    bool
	}{{"gpu", false, true}, {"gpu", true, false}, {"cpu", false, false}, {"accelerator", false, true}} {
		if got := useStaging(c.typ, c.unified); got != c.want && stagingMode() == "auto" {
			t.Errorf("useStaging(%q, unified %v) = %v, want %v", c.typ, c.unified, got, c.want)
		}
	}
	if stagingMode() == "auto" {
		d := clDevices(t)[0]
		if want := d.info.Type != "cpu" && !d.info.UnifiedMemory; d.stage != want {
			t.Errorf("%s (%s, unified %v): staging %v, want %v", d.info.Name, d.info.Type, d.info.UnifiedMemory, d.stage, want)
		}
	}
}

// poolMade is how many staging buffers d ever made.
func poolMade(d *clDevice) int {
	_, made := d.pool.Counts()
	return made
}
