package target

import (
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Buffers of the element-only kinds (int8, uint8, int16, uint16, uint64)
// take slices of those Go types, and int64 and uint64 buffers take []int
// and []uint, on an offload device and on the initial device; a slice of
// another element type is still refused.
func TestElemOnlyKindsTakeTheirSlices(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 32
	// incr adds 1 to each of the first n elements of its buffer, of
	// elem's size, little-endian, with the carry kept in the element.
	incr := func(elem device.ParamKind) *device.Kernel {
		size := elem.Size()
		return datInPlace("incr_"+elem.String(), elem, func(a *device.HostArgs, i int) {
			b := a.Bytes(1)[i*size : (i+1)*size]
			for j := range b {
				b[j]++
				if b[j] != 0 {
					break
				}
			}
		})
	}
	for _, dev := range []int{0, InitialDevice} {
		i8, u8, i16, u16, u64 := make([]int8, n), make([]uint8, n), make([]int16, n), make([]uint16, n), make([]uint64, n)
		ints, uints := make([]int, n), make([]uint, n)
		for i := range n {
			i8[i], u8[i], i16[i], u16[i], u64[i] = int8(i-16), uint8(250+i), int16(i*1000), uint16(65530+i), uint64(1)<<63+uint64(i)
			ints[i], uints[i] = -i, uint(i)<<40
		}
		for _, c := range []struct {
			elem device.ParamKind
			arg  Arg
		}{
			{device.ParamInt8, Slice(i8)}, {device.ParamUint8, Slice(u8)}, {device.ParamInt16, Slice(i16)},
			{device.ParamUint16, Slice(u16)}, {device.ParamUint64, Slice(u64)}, {device.ParamInt64, Slice(ints)},
			{device.ParamUint64, Slice(uints)},
		} {
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: incr(c.elem), Shape: N(n), Args: []Arg{Int(n), c.arg}}),
				"device %d: a slice for a %v buffer", dev, c.elem)
		}
		for i := range n {
			assert.Equal(t, int8(i-15), i8[i], "device %d: int8[%d]", dev, i)
			assert.Equal(t, uint8(251+i), u8[i], "device %d: uint8[%d] (wraps)", dev, i)
			assert.Equal(t, int16(i*1000+1), i16[i], "device %d: int16[%d]", dev, i)
			assert.Equal(t, uint16(65531+i), u16[i], "device %d: uint16[%d] (wraps)", dev, i)
			assert.Equal(t, uint64(1)<<63+uint64(i)+1, u64[i], "device %d: uint64[%d]", dev, i)
			assert.Equal(t, uint(i)<<40+1, uints[i], "device %d: uint[%d]", dev, i)
			assert.Equal(t, 1-i, ints[i], "device %d: int[%d]", dev, i)
		}
		err := Target(Region{Device: Dev(dev), Kernel: incr(device.ParamInt16), Shape: N(n), Args: []Arg{Int(n), Slice(u16)}})
		require.ErrorContains(t, err, "want a slice of int16", "device %d: []uint16 for an int16 buffer", dev)
		require.ErrorContains(t, err, "got []uint16", "device %d: []uint16 for an int16 buffer", dev)
		err = Target(Region{Device: Dev(dev), Kernel: incr(device.ParamInt64), Shape: N(n), Args: []Arg{Int(n), Slice(uints)}})
		require.ErrorContains(t, err, "want a slice of int64", "device %d: []uint for an int64 buffer", dev)
	}
}
