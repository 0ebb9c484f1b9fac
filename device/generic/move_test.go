package generic

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gompt/gompt/device"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMove checks Move against Go's copy over memory addressed from 0x1000,
// for random overlapping and disjoint ranges: the result is memmove's,
// every piece handed to cp is inside the memory and does not overlap
// itself, a temporary is freed once, and an error of cp or alloc is
// returned with the temporary still freed.
func TestMove(t *testing.T) {
	const base, size = 0x1000, 4096
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		mem := make([]byte, size)
		for j := range mem {
			mem[j] = byte(r.Uint32())
		}
		n := 1 + r.IntN(size/2)
		src, dst := r.IntN(size-n+1), r.IntN(size-n+1)
		if i%7 == 0 {
			dst = src
		}
		want := bytes.Clone(mem)
		copy(want[dst:dst+n], want[src:src+n])
		var tmp []byte
		allocs, frees, pieces := 0, 0, 0
		at := func(p device.DevicePtr, n int) []byte {
			if p >= 1<<30 {
				return tmp[int(p-1<<30):][:n]
			}
			require.GreaterOrEqual(t, p, device.DevicePtr(base), "piece [%v, +%d) outside the memory", p, n)
			require.LessOrEqual(t, int(p-base)+n, size, "piece [%v, +%d) outside the memory", p, n)
			return mem[int(p-base):][:n]
		}
		cp := func(d, s device.DevicePtr, n int) error {
			pieces++
			require.Greater(t, n, 0, "cp(%v, %v, %d): overlapping or empty piece", d, s, n)
			require.False(t, d < s+device.DevicePtr(n) && s < d+device.DevicePtr(n), "cp(%v, %v, %d): overlapping or empty piece", d, s, n)
			copy(at(d, n), at(s, n))
			return nil
		}
		alloc := func(n int) (device.DevicePtr, error) { allocs++; tmp = make([]byte, n); return 1 << 30, nil }
		free := func(device.DevicePtr) error { frees++; return nil }
		require.NoError(t, Move(base+device.DevicePtr(dst), base+device.DevicePtr(src), n, cp, alloc, free))
		require.True(t, bytes.Equal(mem, want), "Move(dst %d, src %d, n %d) differs from Go's copy", dst, src, n)
		assert.Equal(t, frees, allocs, "Move(dst %d, src %d, n %d): %d allocs, %d frees", dst, src, n, allocs, frees)
		assert.LessOrEqual(t, allocs, 1, "Move(dst %d, src %d, n %d): %d allocs, %d frees", dst, src, n, allocs, frees)
		assert.False(t, dst == src && pieces != 0, "Move onto itself made %d copies, want none", pieces)
		assert.LessOrEqual(t, pieces, moveSteps, "Move(dst %d, src %d, n %d) made %d copies, want at most", dst, src, n, pieces)
	}
	boom := errors.New("boom")
	frees := 0
	err := Move(0x1001, 0x1000, 100, func(device.DevicePtr, device.DevicePtr, int) error { return boom },
		func(int) (device.DevicePtr, error) { return 0x9000, nil }, func(device.DevicePtr) error { frees++; return nil })
	assert.ErrorIs(t, err, boom, "failing copy through a temporary: %v, %d frees; want boom and 1 free", err, frees)
	assert.EqualValues(t, 1, frees, "failing copy through a temporary: %v, %d frees; want boom and 1 free", err, frees)
	err = Move(0x1001, 0x1000, 100, nil, func(int) (device.DevicePtr, error) { return 0, boom }, nil)
	assert.ErrorIs(t, err, boom, "failing alloc")
}
