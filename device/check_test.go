package device

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var lenKernel = &Kernel{
	Name: "lens",
	Params: []Param{
		{Name: "m", Kind: ParamInt64},
		{Name: "k", Kind: ParamInt32},
		{Name: "u", Kind: ParamUint32},
		{Name: "a", Kind: ParamFloat32},
		{Name: "buf", Kind: ParamBuffer, Elem: ParamFloat32},
	},
	Dims: 2,
}

func TestNeedLen(t *testing.T) {
	args := []Arg{{Bits: 6}, {Bits: uint64(uint32(0xffffffff))}, {Bits: 0xffffffff}, {Bits: uint64(math.Float32bits(2))}, {}}
	bits := func(j int) uint64 { return args[j].Bits }
	s := Shape{Size: [3]int{10, 3}, Teams: 4}
	for _, c := range []struct {
		len  string
		want int
		err  string
	}{
		{"", 0, ""},
		{"m", 6, ""},
		{" m * 2 ", 12, ""},
		{"m*u", 6 * 0xffffffff, ""},
		{"k", 0, ""}, // int32 -1: no element
		{"m*k*9", 0, ""},
		{"k*k", 1, ""},   // -1*-1: two negative terms, as Go multiplies them
		{"k*m*k", 6, ""}, // and in any order
		{"k*0*k", 0, ""},
		{"k*u*u", 0, "a value below -9223372036854775808"},
		// Sums and differences of products, with Go's precedence.
		{"m+1", 7, ""},
		{"m-1", 5, ""},
		{" m - 1 ", 5, ""},
		{"2*m+1", 13, ""},
		{"1+2*m", 13, ""},
		{"m*m+m", 42, ""},
		{"m-m*m+40", 10, ""},
		{"m-10", 0, ""}, // negative: no element
		{"k+1", 0, ""},  // int32 -1 + 1
		{"k*k+m", 7, ""},
		{"Shape.Size[0]*Shape.Size[1]-Shape.Teams", 26, ""},
		{"u*u*u-u", 0, "more than 9223372036854775807 elements"},
		{"9223372036854775807+m", 0, "more than 9223372036854775807 elements"},
		{"0-9223372036854775807-m", 0, "a value below -9223372036854775808"},
		{"-m", 0, "empty term"},
		{"m+", 0, "empty term"},
		{"m+-1", 0, "empty term"},
		{"m+a", 0, `"a" is not an integer scalar parameter`},
		{"Shape.Size[0]*Shape.Size[1]", 30, ""},
		{"Shape.Size[2]", 1, ""}, // unused: 1
		{"Shape.Teams*m", 24, ""},
		{"0", 0, ""},
		{"a", 0, `"a" is not an integer scalar parameter`},
		{"buf", 0, `"buf" is not an integer scalar parameter`},
		{"q", 0, `"q" is not an integer scalar parameter (int32, uint32 or int64) of kernel lens`},
		{"m*", 0, "empty term"},
		{"Shape.Threads", 0, "the shape terms are"},
		{"12x", 0, `term "12x" is not a whole number`},
		{"u*u*u", 0, "more than 9223372036854775807 elements"},
	} {
		lenKernel.Params[4].Len = c.len
		got, err := lenKernel.NeedLen(4, s, bits)
		if c.err == "" {
			assert.NoError(t, err, "Len %q", c.len)
			assert.Equal(t, c.want, got, "Len %q", c.len)
		} else if assert.Error(t, err, "Len %q: %d; want an error saying %q", c.len, got, c.err) {
			assert.Contains(t, err.Error(), c.err, "Len %q", c.len)
		}
	}
	lenKernel.Params[4].Len = "2*m+Shape.Size[0]-u*0-1"
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = lenKernel.NeedLen(4, s, bits) }), "NeedLen of a sum: allocations")
	lenKernel.Params[4].Len = "Shape.Teams"
	if _, err := lenKernel.NeedLen(4, Shape{Size: [3]int{10}}, bits); assert.Error(t, err, "Shape.Teams with teams 0: %v, want an error saying to set it", err) {
		assert.Contains(t, err.Error(), "set Shape.Teams", "Shape.Teams with teams 0: %v, want an error saying to set it", err)
	}
	lenKernel.Params[4].Len = ""
}

// PointWork is Work's value, at least 1; the largest int64 where it is
// larger; 1 where it cannot be evaluated or is empty.
func TestPointWork(t *testing.T) {
	args := []Arg{{Bits: 6}, {Bits: uint64(uint32(0xffffffff))}, {Bits: 0xffffffff}, {}, {}}
	bits := func(j int) uint64 { return args[j].Bits }
	s := Shape{Size: [3]int{10, 3}}
	for _, c := range []struct {
		work string
		want int64
	}{
		{"", 1},
		{"m", 6},
		{"m*m+u", 36 + 0xffffffff},
		{"k", 1},           // -1: below one
		{"m-6", 1},         // 0
		{"a", 1},           // a float: no value
		{"Shape.Teams", 1}, // left to the device
		{"Shape.Size[0]*m", 60},
		{"u*u*u", math.MaxInt64}, // larger than an int64
		{"0-u*u*u", 1},           // below an int64
	} {
		k := *lenKernel
		k.Work = c.work
		assert.Equal(t, c.want, k.PointWork(s, bits), "Work %q", c.work)
	}
}

// TestCheckBounds: a bound that leaves an int64 in a launch is an error
// naming it; one that fits, or none, is not; Check refuses a bound it
// cannot evaluate.
func TestCheckBounds(t *testing.T) {
	k := *lenKernel
	k.Bounds = []string{"m", "m-1", "0-m+1"}
	for _, c := range []struct {
		m   int64
		err string
	}{
		{6, ""},
		{math.MaxInt64, ""},
		{math.MinInt64 + 2, ""},
		{math.MinInt64 + 1, "bound 0-m+1 leaves an int64 with these arguments"}, // 0-m is MaxInt
		{math.MinInt64, "bound m-1 leaves an int64 with these arguments"},       // m itself fits
	} {
		err := k.CheckBounds(Shape{Size: [3]int{1}}, func(int) uint64 { return uint64(c.m) })
		if c.err == "" {
			assert.NoError(t, err, "m = %d", c.m)
		} else {
			assert.ErrorContains(t, err, c.err, "m = %d", c.m)
		}
	}
	k.Bounds = []string{"0-m+2"}
	m := int64(math.MinInt64 + 1)
	assert.ErrorContains(t, k.CheckBounds(Shape{}, func(int) uint64 { return uint64(m) }), "bound 0-m+2 leaves an int64")
	k.Bounds = nil
	assert.NoError(t, k.CheckBounds(Shape{}, nil), "no bounds")
	k.Bounds = []string{"m+x"}
	assert.ErrorContains(t, k.Check(), `kernel lens: Bounds "m+x"`, "a bound over a name that is no parameter")
}

// FitExtents sets the Size to the kernel's points, above or below them,
// keeps every Size where the points are none, and refuses points more than
// an int counts, naming the extents; Check refuses Extents that are not
// one integer scalar parameter per dimension.
func TestFitExtents(t *testing.T) {
	k := *lenKernel // m int64, k int32, u uint32, a float32; Dims 2
	k.Extents = []int{0, 1}
	require.NoError(t, k.Check())
	for _, c := range []struct {
		m, k int64
		size [3]int
		want [3]int
	}{
		{6, 7, [3]int{1, 1, 1}, [3]int{6, 7, 1}},
		{6, 7, [3]int{1, 0, 1}, [3]int{6, 7, 1}}, // 0 is an unused dimension's 1
		{6, 7, [3]int{6, 7, 1}, [3]int{6, 7, 1}},
		{6, 7, [3]int{100, 1 << 30, 1}, [3]int{6, 7, 1}},
		{6, 7, [3]int{3, 9, 1}, [3]int{6, 7, 1}},
		{0, 4, [3]int{2, 3, 1}, [3]int{2, 3, 1}},  // no points: the kernel does nothing
		{6, -4, [3]int{1, 0, 1}, [3]int{1, 0, 1}}, // none either, whichever extent
		{9, -5, [3]int{2, 3, 1}, [3]int{2, 3, 1}}, // the int32 k as Go reads it
	} {
		args := []uint64{uint64(c.m), uint64(uint32(int32(c.k)))}
		s := Shape{Size: c.size, Teams: 3, Threads: 5}
		require.NoError(t, k.FitExtents(&s, func(j int) uint64 { return args[j] }), "%+v", c)
		assert.Equal(t, Shape{Size: c.want, Teams: 3, Threads: 5}, s, "%+v", c)
	}
	k.Extents = []int{2, 0} // the uint32 u in dimension 0
	s := Shape{Size: [3]int{1, 1, 1}}
	require.NoError(t, k.FitExtents(&s, func(j int) uint64 { return []uint64{3, 0, 0xffffffff}[j] }))
	assert.Equal(t, [3]int{0xffffffff, 3, 1}, s.Size, "a uint32 extent is not negative")
	k.Extents = []int{0, 0}
	s = Shape{Size: [3]int{2, 2, 1}}
	big := uint64(math.MaxInt/2 + 1)
	assert.EqualError(t, k.FitExtents(&s, func(int) uint64 { return big }),
		fmt.Sprintf("its points, m x m = %d x %d with these arguments (Kernel.Extents), are more than an int counts (%d)", big, big, math.MaxInt))
	assert.Equal(t, [3]int{2, 2, 1}, s.Size, "points past an int: the shape is left as it was")
	k.Extents = nil
	s = Shape{Size: [3]int{1, 1, 1}}
	require.NoError(t, k.FitExtents(&s, nil), "no extents: nothing evaluated")
	assert.Equal(t, [3]int{1, 1, 1}, s.Size)

	for _, c := range []struct {
		extents []int
		want    string
	}{
		{[]int{0}, "kernel lens: 1 Extents for 2 dimensions (Dims): want one per dimension"},
		{[]int{0, 1, 2}, "3 Extents for 2 dimensions"},
		{[]int{0, 5}, "kernel lens: Extents[1] is 5: want the index of a parameter (0 to 4)"},
		{[]int{-1, 0}, "Extents[0] is -1"},
		{[]int{0, 3}, "Extents[1] is parameter 3 (a), a float32; an extent is an integer scalar parameter"},
		{[]int{4, 0}, "Extents[0] is parameter 4 (buf), a buffer"},
	} {
		k.Extents = c.extents
		assert.ErrorContains(t, k.Check(), c.want, "Extents %v", c.extents)
	}
}

func TestKernelCheck(t *testing.T) {
	good := func() *Kernel {
		return &Kernel{Name: "good", Dims: 2, Params: []Param{
			{Name: "n", Kind: ParamInt64},
			{Name: "x", Kind: ParamBuffer, Elem: ParamFloat64, Len: "n*Shape.Size[1]"},
			{Name: "raw", Kind: ParamBuffer, Len: "8*n"},
		}}
	}
	require.NoError(t, good().Check(), "good kernel")
	for _, l := range []string{"n+1", "n-1", "2*n+1", "n*Shape.Size[1]+n-8"} {
		k := good()
		k.Params[1].Len = l
		assert.NoError(t, k.Check(), "Len %q", l)
	}
	for _, elem := range []ParamKind{ParamInt8, ParamUint8, ParamInt16, ParamUint16, ParamInt32, ParamUint32, ParamInt64, ParamUint64, ParamFloat32, ParamFloat64} {
		k := good()
		k.Params[1].Elem = elem
		assert.NoError(t, k.Check(), "a buffer of %v elements", elem)
	}
	for _, c := range []struct {
		spoil func(k *Kernel)
		want  string
	}{
		{func(k *Kernel) { k.Name = "" }, "no name"},
		{func(k *Kernel) { k.Dims = 4 }, "Dims 4"},
		{func(k *Kernel) { k.MaxThreads = -1 }, "MaxThreads -1"},
		{func(k *Kernel) { k.Params[1].Name = "n" }, "both named n"},
		{func(k *Kernel) { k.Params[1].Name = "" }, "parameter 1 has no name"},
		{func(k *Kernel) { k.Params[0].Kind = 12 }, "unknown kind"},
		{func(k *Kernel) { k.Params[0].Kind = ParamUint8 }, "kind uint8 is a buffer element type only"},
		{func(k *Kernel) { k.Params[0].Kind = ParamUint64 }, "kind uint64 is a buffer element type only"},
		{func(k *Kernel) { k.Params[1].Elem = 12 }, "element type param(12)"},
		{func(k *Kernel) { k.Params[0].Len = "1" }, "kind int64 is a scalar; Elem and Len are for buffers"},
		{func(k *Kernel) { k.Params[1].Elem = ParamBuffer }, "element type buffer"},
		{func(k *Kernel) { k.Params[1].Len = "n*x" }, `parameter x: Len "n*x": "x" is not an integer scalar parameter`},
		{func(k *Kernel) { k.Params[1].Len = "n+1-x" }, `parameter x: Len "n+1-x": "x" is not an integer scalar parameter`},
		{func(k *Kernel) { k.Params[1].Len = "n+" }, `parameter x: Len "n+": empty term`},
		{func(k *Kernel) { k.Params[1].Len = "n*(2+n)" }, `term "(2": a Len is a sum or difference (+, -) of products (*)`},
		{func(k *Kernel) { k.Work = "n*a" }, `kernel good: Work "n*a": "a" is not an integer scalar parameter`},
		{func(k *Kernel) { k.Work = "n*" }, `Work "n*": empty term`},
	} {
		k := good()
		c.spoil(k)
		if err := k.Check(); assert.Error(t, err, "Check: %v, want an error saying %q", err, c.want) {
			assert.Contains(t, err.Error(), c.want, "Check: %v, want an error saying %q", err, c.want)
		}
	}
	assert.EqualValues(t, 1, (&Kernel{}).IterationDims(), "IterationDims of Dims 0")
}

func TestShapeCheck(t *testing.T) {
	for _, s := range []Shape{
		{Size: [3]int{1}},
		{Size: [3]int{1 << 62}},
		{Size: [3]int{math.MaxInt, 1, 1}},
		{Size: [3]int{1 << 31, 1 << 31, 1}},
		{Size: [3]int{4, 0, 0}},
		{Size: [3]int{1 << 20, 1 << 20, 1 << 20}},
	} {
		assert.NoError(t, s.Check(), "%+v", s)
	}
	for _, c := range []struct {
		s    Shape
		want string
	}{
		{Shape{Size: [3]int{16, 1 << 32, 1 << 32}}, "more iterations than an int counts"},
		{Shape{Size: [3]int{1 << 32, 1 << 32, 1}}, "more iterations than an int counts"},
		{Shape{Size: [3]int{2, math.MaxInt, 1}}, "more iterations than an int counts"},
		{Shape{Size: [3]int{0, 1, 1}}, "dimension 0 must be at least 1"},
		{Shape{Size: [3]int{4, 0, 2}}, "dimension 1 is 0"},
		{Shape{Size: [3]int{4, 1, -1}}, "dimension 2 is negative"},
		{Shape{Size: [3]int{4, 1, 1}, Threads: -1}, "threads -1"},
	} {
		if err := c.s.Check(); assert.Error(t, err, "%+v: %v, want an error saying %q", c.s, err, c.want) {
			assert.Contains(t, err.Error(), c.want, "%+v: %v, want an error saying %q", c.s, err, c.want)
		}
	}
}

func TestParamKindSizes(t *testing.T) {
	for k, want := range map[ParamKind]int{ParamInt8: 1, ParamUint8: 1, ParamInt16: 2, ParamUint16: 2, ParamInt32: 4, ParamUint32: 4,
		ParamFloat32: 4, ParamInt64: 8, ParamUint64: 8, ParamFloat64: 8, ParamBuffer: 8} {
		assert.Equal(t, want, k.Size(), "%v.Size()", k)
		assert.Equal(t, k >= ParamInt8, k.ElemOnly(), "%v.ElemOnly()", k)
		assert.Equal(t, want, Param{Kind: ParamBuffer, Elem: k}.ElemSize(), "ElemSize of a buffer of %v", k)
	}
	assert.Equal(t, "int8 uint8 int16 uint16 uint64", fmt.Sprint(ParamInt8, ParamUint8, ParamInt16, ParamUint16, ParamUint64))
}

// BuiltNeedError keeps the position of the need the kernel declares, and
// its use where the built kernel asks the declared amount; a kernel that
// declares none gets the plugin's words.
func TestBuiltNeedError(t *testing.T) {
	k := &Kernel{Name: "tiled", Needs: []Need{{Kind: NeedTeamSize, Amount: 256, Use: "teams of 256 threads (team=256)", Pos: "lib.go:88"}}}
	e := BuiltNeedError(k, NeedTeamSize, 256, "teams of 256 threads", "opencl:1", "llvmpipe", "runs this kernel in teams of at most 32 threads (CL_KERNEL_WORK_GROUP_SIZE)")
	assert.Equal(t, "kernel tiled (lib.go:88) uses teams of 256 threads (team=256); opencl:1 (llvmpipe) runs this kernel in teams of at most 32 threads (CL_KERNEL_WORK_GROUP_SIZE)", e.Error())
	assert.ErrorIs(t, e, ErrUnsupported)
	e = BuiltNeedError(k, NeedLocalMem, 40000, "40000 bytes of team-local memory", "opencl:0", "pocl", "has at most 32768 bytes")
	assert.Equal(t, "kernel tiled uses 40000 bytes of team-local memory; opencl:0 (pocl) has at most 32768 bytes", e.Error())
	k.Needs = append(k.Needs, Need{Kind: NeedLocalMem, Amount: 8192, Use: "8192 bytes of team-local memory (team arrays tA, tB)", Pos: "lib.go:90"})
	e = BuiltNeedError(k, NeedLocalMem, 40000, "40000 bytes of team-local memory", "opencl:0", "pocl", "has at most 32768 bytes")
	assert.Equal(t, Need{Kind: NeedLocalMem, Amount: 40000, Use: "40000 bytes of team-local memory", Pos: "lib.go:90"}, e.Need, "the built amount, the declared position")
}
