package target

import (
	"math"
	"math/bits"
	"runtime"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/callsite"
	"github.com/gompt/gompt/target/internal/omptrt"
)

// rectErr is an invalid-argument error of MemcpyRect.
func rectErr(format string, args ...any) error {
	return device.Errorf("", "target: memcpy_rect", device.CodeInvalidArgument, format, args...)
}

// mulInt returns a*b for non-negative a and b, and false if it does not
// fit an int. b < 0 stands for a product that already did not fit: a*b
// is then 0 if a is 0, and does not fit otherwise.
func mulInt(a, b int) (int, bool) {
	if a == 0 {
		return 0, true
	}
	if b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, false
	}
	return int(lo), true
}

// rectSide works out one array's side of MemcpyRect, with v, off and dims
// padded to three dimensions, every v[i] at least 1 and off[i]+v[i] at
// most dims[i]: where the rectangle starts, its plane and row strides (0
// where the volume has one plane or one row), and end, the highest byte
// it touches plus one. ok is false if end does not fit an int; when it
// fits, so does every offset of the copy, each being at most end.
func rectSide(elem int, v, off, dims [3]int) (s rowSide, end int, ok bool) {
	var stride [3]int // bytes per index in each dimension; -1 if more than an int holds
	stride[2] = elem
	for i := 1; i >= 0; i-- {
		var fits bool
		if stride[i], fits = mulInt(dims[i+1], stride[i+1]); !fits {
			stride[i] = -1
		}
	}
	for i := range 3 {
		hi := off[i] + v[i] - 1 // the last element's index; cannot overflow, being below dims[i]
		if i == 2 {
			hi++ // the end of the last row
		}
		last, fits := mulInt(hi, stride[i])
		if !fits || end > math.MaxInt-last {
			return s, 0, false
		}
		end += last
		first, _ := mulInt(off[i], stride[i]) // off[i] <= hi: fits
		s.base += first
	}
	// A stride used for more than one step is at most end.
	if v[0] > 1 {
		s.stride[0] = stride[0]
	}
	if v[1] > 1 {
		s.stride[1] = stride[1]
	}
	return s, end, true
}

// unpad returns the last nd of a's dimensions, for messages.
func unpad(a [3]int, nd int) []int { return append([]int(nil), a[3-nd:]...) }

// MemcpyRect copies a rectangular subvolume of up to three dimensions
// (omp_target_memcpy_rect). elem is the element size in bytes; volume the
// number of elements copied per dimension; dstOff and srcOff the
// subvolume's origin in each array; dstDims and srcDims each array's full
// dimensions. All slices have the same length, 1 to 3; the last dimension
// varies fastest, as in C. The rectangle is checked against both sides
// before anything is copied: an error names the argument at fault, or the
// side whose allocation, mapped buffer or slice is too small for it. Rows
// that follow each other on both sides are copied as one piece (one data
// op for the tools); a volume with a zero dimension copies nothing.
//
//go:noinline
func MemcpyRect(dst, src Loc, elem int, volume, dstOff, srcOff, dstDims, srcDims []int) error {
	var pc uintptr
	if toolsOn() {
		pc = callsite.Parent()
	}
	nd := len(volume)
	if nd < 1 || nd > 3 {
		return rectErr("volume has %d dimensions; 1 to 3 are supported", nd)
	}
	if elem <= 0 {
		return rectErr("element size %d: must be positive", elem)
	}
	if len(dstOff) != nd || len(srcOff) != nd || len(dstDims) != nd || len(srcDims) != nd {
		return rectErr("volume has %d dimensions but dstOff, srcOff, dstDims and srcDims have %d, %d, %d and %d; all must have the same",
			nd, len(dstOff), len(srcOff), len(dstDims), len(srcDims))
	}
	// Pad to three dimensions: an outer dimension of 1 changes nothing.
	var v, do, so, dd, sd [3]int
	for i := range 3 - nd {
		v[i], dd[i], sd[i] = 1, 1, 1
	}
	empty := false
	for i := range nd {
		for _, a := range [...]struct {
			name string
			s    []int
		}{{"volume", volume}, {"dstOff", dstOff}, {"srcOff", srcOff}, {"dstDims", dstDims}, {"srcDims", srcDims}} {
			if a.s[i] < 0 {
				return rectErr("%s[%d] = %d: must not be negative", a.name, i, a.s[i])
			}
		}
		// dims - off cannot overflow: both are non-negative.
		if volume[i] > dstDims[i]-dstOff[i] || volume[i] > srcDims[i]-srcOff[i] {
			return rectErr("dimension %d: volume %d at offsets %d (dstOff) and %d (srcOff) exceeds dimensions %d (dstDims) and %d (srcDims)",
				i, volume[i], dstOff[i], srcOff[i], dstDims[i], srcDims[i])
		}
		empty = empty || volume[i] == 0
		j := i + 3 - nd
		v[j], do[j], so[j], dd[j], sd[j] = volume[i], dstOff[i], srcOff[i], dstDims[i], srcDims[i]
	}
	rs := state()
	de, err := rs.endOf(dst, "memcpy_rect destination")
	if err != nil {
		return err
	}
	se, err := rs.endOf(src, "memcpy_rect source")
	if err != nil {
		return err
	}
	r := rows{n: v[2] * elem, count: [2]int{v[0], v[1]}}
	if empty {
		return copyRows(pc, &de, &se, &rows{})
	}
	side := func(name string, e *end, off, dims [3]int, avail int) (rowSide, error) {
		name += " " + e.String()
		s, end, ok := rectSide(elem, v, off, dims)
		if !ok {
			return s, rectErr("%s: volume %v at offset %v in dimensions %v of %d-byte elements: more bytes than an int can count",
				name, volume, unpad(off, nd), unpad(dims, nd), elem)
		}
		if end > avail {
			return s, rectErr("%s: volume %v at offset %v in dimensions %v of %d-byte elements reaches byte %d, out of bounds: only %d bytes there",
				name, volume, unpad(off, nd), unpad(dims, nd), elem, end, avail)
		}
		return s, nil
	}
	if r.dst, err = side("destination", &de, do, dd, de.avail); err != nil {
		return err
	}
	if r.src, err = side("source", &se, so, sd, se.avail); err != nil {
		return err
	}
	// Rows that follow each other on both sides are one piece.
	if r.count[1] > 1 && r.dst.stride[1] == r.n && r.src.stride[1] == r.n {
		r.n *= r.count[1]
		r.count[1], r.dst.stride[1], r.src.stride[1] = 1, 0, 0
	}
	if r.count[1] == 1 && r.count[0] > 1 && r.dst.stride[0] == r.n && r.src.stride[0] == r.n {
		r.n *= r.count[0]
		r.count[0], r.dst.stride[0], r.src.stride[0] = 1, 0, 0
	}
	if omptrt.RectAsOne() {
		return copyRect(pc, &de, &se, &r, elem, volume, [2][]int{dstOff, dstDims}, [2][]int{srcOff, srcDims})
	}
	return copyRows(pc, &de, &se, &r)
}

// copyRect copies every row of r from se to de as one device memory
// routine called at pc with one data op, OpenMP 6.0's
// ompt_target_data_transfer_rect, whose addresses point to each side's
// ompt.Subvolume (elem, volume, and each side's offsets and dimensions),
// pinned until the routine ends so that C tools may read them.
func copyRect(pc uintptr, de, se *end, r *rows, elem int, volume []int, dstSide, srcSide [2][]int) error {
	rt := omptrt.RoutineBegin(pc)
	defer rt.End()
	if rt == nil {
		return copyPlain(de, se, r)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	u64 := func(s []int) *uint64 {
		a := make([]uint64, len(s))
		for i, v := range s {
			a[i] = uint64(v)
		}
		pin.Pin(&a[0])
		return &a[0]
	}
	vol := u64(volume)
	side := func(e *end, offDims [2][]int) *ompt.Subvolume {
		s := &ompt.Subvolume{Base: e.address(0), Size: uint64(elem), NumDims: uint64(len(volume)),
			Volume: vol, Offsets: u64(offDims[0]), Dimensions: u64(offDims[1])}
		pin.Pin(s)
		return s
	}
	dst, src := side(de, dstSide), side(se, srcSide)
	rt.DataOpBeginRect(false, src, se.num, dst, de.num, uint64(r.n*r.count[0]*r.count[1]))
	t0 := rt.TraceNow()
	err := copyPlain(de, se, r)
	rt.DataOpEnd(uintptr(unsafe.Pointer(dst)))
	rt.TraceDone(t0)
	return err
}
