package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShippedPTXParams checks, for every kernel the kernels package ships
// with a PTX image, that the PTX entry's parameters match what packArgs and
// cuLaunchKernel pass: same count, 8 bytes for buffers and 64-bit scalars, 4
// for 32-bit ones; and that the image targets what minCompute promises.
func TestShippedPTXParams(t *testing.T) {
	n := 0
	for _, k := range kernels.All() {
		img, ok := k.Image(ImagePTX)
		if !ok {
			continue
		}
		n++
		entry := img.Entry
		if entry == "" {
			entry = k.Name
		}
		assert.NoError(t, checkPTXParams(k, img.Source, entry), "kernel %s", k.Name)
		assert.Contains(t, img.Source, ".address_size 64", "kernel %s: PTX lacks .address_size 64; the plugin passes 64-bit pointers", k.Name)
		target := fmt.Sprintf(".target sm_%d\n", minCompute)
		assert.Contains(t, img.Source, target, "kernel %s: PTX does not target sm_%d, which the plugin's compute capability check assumes", k.Name, minCompute)
		assert.False(t, strings.Contains(img.Source, ".extern .func"), "kernel %s: PTX calls an external function the driver cannot link", k.Name)
	}
	require.NotZero(t, n, "no kernel with a PTX image")
}

func TestPTXParamMismatch(t *testing.T) {
	const src = `.version 6.3
.target sm_75
.address_size 64
.visible .entry k(
	.param .u64 k_param_0,
	.param .f32 k_param_1,
	.param .u64 .ptr .global .align 4 k_param_2
)
{
	ret;
}
`
	sizes, err := ptxEntryParamSizes(src, "k")
	require.NoError(t, err, "sizes %v, %v; want [8 4 8]", sizes, err)
	require.Len(t, sizes, 3, "sizes %v, %v; want [8 4 8]", sizes, err)
	require.EqualValues(t, 8, sizes[0], "sizes %v, %v; want [8 4 8]", sizes, err)
	require.EqualValues(t, 4, sizes[1], "sizes %v, %v; want [8 4 8]", sizes, err)
	require.EqualValues(t, 8, sizes[2], "sizes %v, %v; want [8 4 8]", sizes, err)
	good := &device.Kernel{Name: "k", Params: []device.Param{
		{Name: "n", Kind: device.ParamInt64}, {Name: "a", Kind: device.ParamFloat32},
		{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
	assert.NoError(t, checkPTXParams(good, src, "k"), "matching kernel")
	wrongSize := &device.Kernel{Name: "k", Params: []device.Param{
		{Name: "n", Kind: device.ParamInt32}, {Name: "a", Kind: device.ParamFloat32},
		{Name: "x", Kind: device.ParamBuffer}}}
	if err := checkPTXParams(wrongSize, src, "k"); assert.Error(t, err, "int32 for a .u64 parameter: %v, want a size mismatch", err) {
		assert.Contains(t, err.Error(), "parameter 0 is 8 bytes", "int32 for a .u64 parameter: %v, want a size mismatch", err)
	}
	tooFew := &device.Kernel{Name: "k", Params: good.Params[:2]}
	if err := checkPTXParams(tooFew, src, "k"); assert.Error(t, err, "two parameters for three: %v, want a count mismatch", err) {
		assert.Contains(t, err.Error(), "takes 3 parameters", "two parameters for three: %v, want a count mismatch", err)
	}
	assert.ErrorIs(t, checkPTXParams(good, src, "other"), errNoEntry, "missing entry")
	// Same sizes, another order: a float32 and an int32 swapped, an int64
	// where the PTX has a .ptr; and a pointer to shared memory for a buffer.
	src4 := strings.Replace(src, ".param .u64 k_param_0", ".param .u32 k_param_0", 1)
	swapped := &device.Kernel{Name: "k", Params: []device.Param{
		{Name: "a", Kind: device.ParamFloat32}, {Name: "m", Kind: device.ParamInt32},
		{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
	assert.ErrorContains(t, checkPTXParams(swapped, src4, "k"), "PTX entry k parameter 0 is an integer or pointer, kernel k declares a float32",
		"float32 and int32 swapped")
	notBuf := &device.Kernel{Name: "k", Params: []device.Param{good.Params[0], good.Params[1], {Name: "n2", Kind: device.ParamInt64}}}
	assert.ErrorContains(t, checkPTXParams(notBuf, src, "k"), "parameter 2 is a pointer (.ptr .global), kernel k declares n2 int64",
		"an int64 where the PTX takes a pointer")
	shared := strings.Replace(src, ".ptr .global", ".ptr .shared", 1)
	assert.ErrorContains(t, checkPTXParams(good, shared, "k"), "parameter 2 is a pointer to .shared memory",
		"a buffer where the PTX takes a pointer to shared memory")
	noSpace := strings.Replace(src, ".ptr .global .align 4", ".ptr .align 4", 1)
	assert.NoError(t, checkPTXParams(good, noSpace, "k"), ".ptr without a state space")
	agg := strings.Replace(src, ".param .f32 k_param_1", ".param .align 8 .b8 k_param_1[16]", 1)
	if _, err := ptxEntryParamSizes(agg, "k"); assert.Error(t, err, "aggregate parameter: %v, want an error", err) {
		assert.Contains(t, err.Error(), "not a scalar", "aggregate parameter: %v, want an error", err)
	}
	noParams := ".visible .entry e()\n{\n\tret;\n}\n"
	if s, err := ptxEntryParamSizes(noParams, "e"); assert.NoError(t, err, "entry without parameters: %v", s) {
		assert.Empty(t, s, "entry without parameters: %v, %v", s, err)
	}
}

// TestPTXEntries pins the hand-written PTX scanner that replaced the
// regular expressions (so that offload programs do not link regexp).
func TestPTXEntries(t *testing.T) {
	src := ".visible .entry k_long(\n.param .u32 a\n)\n{}\n.entry\tk$2 ( .param .s16 b, .param .f64 c ) {}\n" +
		".entry k\n(\n.param .b8 d\n)\n.entryx bad()\n.entry 9bad()\n.entry nolist\n"
	var got []string
	for _, e := range ptxEntries(src) {
		got = append(got, fmt.Sprintf("%s:%v", e.name, e.params >= 0))
	}
	assert.Equal(t, "k_long:true k$2:true k:true nolist:false", strings.Join(got, " "), "entries %q", strings.Join(got, " "))
	for entry, want := range map[string]string{"k_long": "[4]", "k$2": "[2 8]", "k": "[1]"} {
		if s, err := ptxEntryParamSizes(src, entry); assert.NoError(t, err, "entry %s: sizes %v, %v; want %s", entry, s, err, want) {
			assert.Equal(t, want, fmt.Sprint(s), "entry %s: sizes %v", entry, s)
		}
	}
	for _, entry := range []string{"nolist", "k_", "bad", "9bad"} {
		_, err := ptxEntryParamSizes(src, entry)
		assert.ErrorIs(t, err, errNoEntry, "entry %s", entry)
	}
	for _, p := range []string{".param .u128 x", ".param.u32 x", ".param .u32x", ".param .q32 x", ".reg .u32 x", ".param .u3"} {
		n, ok := scalarParamSize(p)
		assert.False(t, ok, "scalarParamSize(%q) = %d, want not a scalar", p, n)
	}
	if _, err := ptxEntryParamSizes(".entry k(.param .u32 a", "k"); assert.Error(t, err, "unclosed list") {
		assert.Contains(t, err.Error(), "not closed", "unclosed list: %v", err)
	}
}

// swap2PTX is the PTX of __global__ swap2(float *a, float *b) with
// parameter names a and b, as PTX written by hand has them; with
// swap2_param_0 and swap2_param_1 for want of the source's, as clang and
// nvcc name them.
const swap2PTX = `.version 6.3
.target sm_75
.address_size 64
.visible .entry swap2(
	.param .u64 .ptr .global .align 4 a,
	.param .u64 .ptr .global .align 4 b
)
{
	ret;
}
`

// Two buffers of one type declared in another order than the PTX entry's
// agree in size and kind and ran, each in the other's place; where the
// PTX names its parameters, the declaration is refused naming both names,
// and one named otherwise is too. The names clang and nvcc give
// (ENTRY_param_N) carry none of the source's: they are not compared, so
// such a PTX is accepted in either order (the OpenCL plugin checks the
// OpenCL C it is made from).
func TestPTXParamsOfOneTypeSwappedRefusedByName(t *testing.T) {
	a := device.BufferParam("a", device.ParamFloat32, "1")
	b := device.BufferParam("b", device.ParamFloat32, "1")
	k := func(ps ...device.Param) *device.Kernel { return &device.Kernel{Name: "swap2", Params: ps} }

	assert.EqualError(t, checkPTXParams(k(b, a), swap2PTX, "swap2"),
		`PTX entry swap2's parameter 0 is named "a" but the Kernel's parameter 0 is "b"; Params must list the parameters in the PTX's order`)
	assert.EqualError(t, checkPTXParams(k(a, device.BufferParam("c", device.ParamFloat32, "1")), swap2PTX, "swap2"),
		`PTX entry swap2's parameter 1 is named "b" but the Kernel's parameter 1 is "c"; Params must name the parameters as the PTX does`)
	assert.NoError(t, checkPTXParams(k(a, b), swap2PTX, "swap2"), "the PTX's order")

	unnamed := strings.NewReplacer(" a,", " swap2_param_0,", " b\n", " swap2_param_1\n").Replace(swap2PTX)
	require.Contains(t, unnamed, "swap2_param_1\n", "the PTX with clang's names")
	assert.NoError(t, checkPTXParams(k(b, a), unnamed, "swap2"), "clang's and nvcc's _param_N names are not compared")
	mangled := strings.NewReplacer("swap2(", "_Z5swap2PfS_(", " a,", " _Z5swap2PfS__param_0,", " b\n", " _Z5swap2PfS__param_1\n").Replace(swap2PTX)
	assert.NoError(t, checkPTXParams(k(b, a), mangled, "_Z5swap2PfS_"), "a mangled C++ entry's _param_N names are not compared")

}

// Which PTX parameter names are the source's: not clang's and nvcc's
// ENTRY_param_N, nor a missing name.
func TestPTXParamSourceName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "x_param": true, "x_param_": true, "x_param_1b": true, "param_0": true, "n_param_count": true,
		"k_param_0": false, "saxpy_cuda_param_12": false, "_Z5swap2PfS__param_1": false, "": false,
	} {
		assert.Equal(t, want, ptxParam{name: name}.sourceName(), "sourceName of %q", name)
	}
	ps, err := ptxEntryParams(swap2PTX, "swap2")
	require.NoError(t, err)
	if assert.Len(t, ps, 2) {
		assert.Equal(t, "a", ps[0].name, "parameter 0's name")
		assert.Equal(t, "b", ps[1].name, "parameter 1's name")
	}
}
