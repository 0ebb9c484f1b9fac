//go:build cgo

package opencl

import (
	"bytes"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		require.NoError(t, err)
		q, err := d.NewQueue()
		require.NoError(t, err)
		for i, n := range sizes {
			src := pattern(n, i)
			want := append([]byte(nil), src...)
			require.NoError(t, q.CopyIn(buf.Ptr+off, src), "CopyIn of %d bytes", n)
			made := poolMade(d)
			if n >= stagingMin {
				// Staged: the source is free as soon as CopyIn returns.
				clear(src)
				assert.NotZero(t, made, "CopyIn of %d bytes made no staging buffer", n)
			}
			got := make([]byte, n)
			require.NoError(t, q.CopyOut(got, buf.Ptr+off), "CopyOut of %d bytes", n)
			require.NoError(t, q.Sync())
			i := 0
			for i < n && got[i] == want[i] {
				i++
			}
			require.Equal(t, n, i, "round trip of %d bytes at offset %d: first difference at byte %d (chunk %d)", n, off, i, i/stagingChunk)
		}
		assert.Equal(t, stagingDepth, poolMade(d), "staging buffers after staged copies on one queue")
		// Several queues at once share the pool and never exceed it.
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q, err := d.NewQueue()
				if !assert.NoError(t, err) {
					return
				}
				defer q.Release()
				b, err := d.Alloc(3*stagingChunk + 7)
				if !assert.NoError(t, err) {
					return
				}
				defer d.Free(b.Ptr)
				for r := range 2 {
					src := pattern(3*stagingChunk+7, 100*w+r)
					if !assert.NoError(t, q.CopyIn(b.Ptr, src)) {
						return
					}
					got := make([]byte, len(src))
					if !assert.NoError(t, q.CopyOut(got, b.Ptr)) {
						return
					}
					if !assert.NoError(t, q.Sync()) {
						return
					}
					if !assert.True(t, bytes.Equal(got, src), "worker %d round %d: wrong data", w, r) {
						return
					}
				}
			}()
		}
		waitAll(t, &wg, "staged copies on 4 queues")
		made := poolMade(d)
		assert.LessOrEqual(t, made, stagingMax, "staging buffers made, budget")
		// Profiled: the copy goes directly and its timing is its command's.
		made = poolMade(d)
		q.(device.Profiler).Profile(true)
		require.NoError(t, q.CopyIn(buf.Ptr, pattern(2*stagingChunk, 9)))
		if _, _, native, err := q.(device.Profiler).Last().Times(); assert.NoError(t, err, "timing of a large profiled copy: %q", native.Type) {
			assert.Equal(t, typeWrite, native.Type, "timing of a large profiled copy: %q, %v", native.Type, err)
		}
		q.(device.Profiler).Profile(false)
		assert.Equal(t, made, poolMade(d), "a profiled copy made staging buffers")
		require.NoError(t, q.Sync())
		require.NoError(t, d.Close())
		live, _ := d.pool.Counts()
		assert.Zero(t, live, "staging buffers left after Close")
	}()
	after := cl.Live()
	assert.Equal(t, before, after, "live OpenCL objects %+v after Close, %+v before", after, before)
}

// TestStagingChoice: staging is on by default only for devices that are
// not CPUs and do not share host memory, and the environment overrides it.
func TestStagingChoice(t *testing.T) {
	for _, c := range []struct {
		typ     string
		unified bool
		want    bool
	}{{"gpu", false, true}, {"gpu", true, false}, {"cpu", false, false}, {"accelerator", false, true}} {
		got := useStaging(c.typ, c.unified)
		assert.False(t, got != c.want && stagingMode() == "auto", "useStaging(%q, unified %v) = %v, want %v", c.typ, c.unified, got, c.want)
	}
	if stagingMode() == "auto" {
		d := clDevices(t)[0]
		assert.Equal(t, d.info.Type != "cpu" && !d.info.UnifiedMemory, d.stage, "%s (%s, unified %v): staging %v", d.info.Name, d.info.Type, d.info.UnifiedMemory, d.stage)
	}
}

// poolMade is how many staging buffers d ever made.
func poolMade(d *clDevice) int {
	_, made := d.pool.Counts()
	return made
}
