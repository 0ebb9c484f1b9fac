//go:build cgo

package opencl_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/device/opencl/internal/cl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bytesOf(s []float32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) }

// An alias is the program's memory: what the host writes after it is
// made is what a kernel reads, what the kernel writes is in the slice
// once the queue syncs, with no copy either way. Freeing it releases the
// buffer and not the slice, and the cache does not keep it.
func TestAliasIsTheProgramsMemory(t *testing.T) {
	for _, d := range devices(t) {
		al, ok := d.(device.Aliaser)
		require.True(t, ok, "%T is no device.Aliaser", d)
		trimCache(t, d)
		mems := cl.Live().Mems
		bytes0, allocs0 := d.(device.MemInfo).MemInUse()
		const n = 1 << 16
		x, y := make([]float32, n), make([]float32, n)
		bx, okx, err := al.Alias(bytesOf(x))
		require.NoError(t, err)
		by, oky, err := al.Alias(bytesOf(y))
		require.NoError(t, err)
		if !d.Info().UnifiedMemory {
			assert.False(t, okx || oky, "%s: no unified memory, no alias", d.Info().Name)
			continue
		}
		require.True(t, okx && oky, "%s: Go's large slices are aligned: aliased", d.Info().Name)
		for i := range x {
			x[i], y[i] = float32(i), 1 // after the alias was made
		}
		q, err := d.NewQueue()
		require.NoError(t, err)
		f, err := d.Load(kernels.Saxpy)
		require.NoError(t, err)
		require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n}},
			[]device.Arg{{Bits: n}, {Bits: uint64(math.Float32bits(2))}, {Ptr: bx.Ptr}, {Ptr: by.Ptr}}))
		require.NoError(t, q.Sync())
		for i := range y {
			if y[i] != 2*float32(i)+1 {
				t.Fatalf("%s: y[%d] = %v after the kernel, want %v: the kernel did not use the program's memory", d.Info().Name, i, y[i], 2*float32(i)+1)
			}
		}
		require.NoError(t, q.Release())
		require.NoError(t, d.Free(bx.Ptr))
		require.NoError(t, d.Free(by.Ptr))
		assert.Equal(t, mems, cl.Live().Mems, "%s: the buffers released", d.Info().Name)
		b, a := d.(device.MemInfo).MemInUse()
		assert.Equal(t, []int64{bytes0, int64(allocs0)}, []int64{b, int64(a)}, "%s: nothing in use", d.Info().Name)
		assert.Zero(t, d.(interface{ CacheBytes() int64 }).CacheBytes(), "%s: an alias is never cached", d.Info().Name)
		assert.Error(t, d.Free(bx.Ptr), "%s: freed twice", d.Info().Name)
		x[0] = 7 // the slice is the program's still
	}
}

// A slice the device cannot use in place is refused, with no error, for
// the caller to copy: an empty one, and any on a driver that keeps
// USE_HOST_PTR buffers in memory of its own. (One larger than the
// device's largest allocation: device/generic's TestAlias.)
func TestAliasRefused(t *testing.T) {
	for _, d := range devices(t) {
		al := d.(device.Aliaser)
		mems := cl.Live().Mems
		buf := make([]byte, 1<<16)
		_, ok, err := al.Alias(buf[:0])
		assert.NoError(t, err)
		assert.False(t, ok, "%s: an empty slice", d.Info().Name)
		pd := opencl.PretendCopyingHostPtr(t, d)
		_, ok, err = pd.(device.Aliaser).Alias(buf)
		assert.NoError(t, err)
		assert.False(t, ok, "%s: a driver that copies USE_HOST_PTR buffers", d.Info().Name)
		assert.Equal(t, mems, cl.Live().Mems, "%s: nothing made", d.Info().Name)
	}
}

// Sub-slices at odd offsets (the float32 arrays' x[1:], y[6:], ...) are
// aliased and a kernel runs right on them, with an argument at an offset
// inside the alias too.
func TestAliasAtAnyAddress(t *testing.T) {
	for _, d := range devices(t) {
		if !d.Info().UnifiedMemory {
			continue
		}
		al := d.(device.Aliaser)
		q, err := d.NewQueue()
		require.NoError(t, err)
		f, err := d.Load(kernels.Saxpy)
		require.NoError(t, err)
		for _, off := range []int{1, 3, 5, 17} {
			const n = 1 << 12
			xa, ya := make([]float32, n+64), make([]float32, n+64)
			x, y := xa[off:off+n], ya[off+1:off+1+n]
			bx, okx, err := al.Alias(bytesOf(x))
			require.NoError(t, err)
			by, oky, err := al.Alias(bytesOf(y))
			require.NoError(t, err)
			require.True(t, okx && oky, "%s: offset %d", d.Info().Name, off)
			for i := range x {
				x[i], y[i] = float32(i), 1
			}
			// The first element of each alias, then the rest from an
			// argument 4 bytes into each.
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{1}},
				[]device.Arg{{Bits: 1}, {Bits: uint64(math.Float32bits(2))}, {Ptr: bx.Ptr}, {Ptr: by.Ptr}}))
			require.NoError(t, q.Launch(f, device.Shape{Size: [3]int{n - 1}},
				[]device.Arg{{Bits: n - 1}, {Bits: uint64(math.Float32bits(2))}, {Ptr: bx.Ptr + 4}, {Ptr: by.Ptr + 4}}))
			require.NoError(t, q.Sync())
			for i := range y {
				if y[i] != 2*float32(i)+1 {
					t.Fatalf("%s: offset %d: y[%d] = %v, want %v", d.Info().Name, off, i, y[i], 2*float32(i)+1)
				}
			}
			assert.Equal(t, float32(0), ya[off], "%s: nothing before y written", d.Info().Name)
			assert.Equal(t, float32(0), ya[off+1+n], "%s: nothing after y written", d.Info().Name)
			require.NoError(t, d.Free(bx.Ptr))
			require.NoError(t, d.Free(by.Ptr))
		}
		require.NoError(t, q.Release())
	}
}
