package cuda

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
)

// TestShippedPTXParams checks, for every kernel the kernels package ships
// with a PTX image, that the PTX entry's parameters match what packArgs and
// cuLaunchKernel pass: same count, 8 bytes for buffers and 64-bit scalars, 4
// for 32-bit ones; and that the image targets what minCompute promises.
func TestShippedPTXParams(t *testing.T) {
	n := 0
	for _, k := range kernels.All() {
		img, ok := k.Image(device.ImagePTX)
		if !ok {
			continue
		}
		n++
		entry := img.Entry
		if entry == "" {
			entry = k.Name
		}
		if err := checkPTXParams(k, img.Source, entry); err != nil {
			t.Errorf("kernel %s: %v", k.Name, err)
		}
		if !strings.Contains(img.Source, ".address_size 64") {
			t.Errorf("kernel %s: PTX lacks .address_size 64; the plugin passes 64-bit pointers", k.Name)
		}
		if target := fmt.Sprintf(".target sm_%d\n", minCompute); !strings.Contains(img.Source, target) {
			t.Errorf("kernel %s: PTX does not target sm_%d, which the plugin's compute capability check assumes", k.Name, minCompute)
		}
		if strings.Contains(img.Source, ".extern .func") {
			t.Errorf("kernel %s: PTX calls an external function the driver cannot link", k.Name)
		}
	}
	if n == 0 {
		t.Fatal("no kernel with a PTX image")
	}
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
	if err != nil || len(sizes) != 3 || sizes[0] != 8 || sizes[1] != 4 || sizes[2] != 8 {
		t.Fatalf("sizes %v, %v; want [8 4 8]", sizes, err)
	}
	good := &device.Kernel{Name: "k", Params: []device.Param{
		{Name: "n", Kind: device.ParamInt64}, {Name: "a", Kind: device.ParamFloat32},
		{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
	if err := checkPTXParams(good, src, "k"); err != nil {
		t.Errorf("matching kernel: %v", err)
	}
	wrongSize := &device.Kernel{Name: "k", Params: []device.Param{
		{Name: "n", Kind: device.ParamInt32}, {Name: "a", Kind: device.ParamFloat32},
		{Name: "x", Kind: device.ParamBuffer}}}
	if err := checkPTXParams(wrongSize, src, "k"); err == nil || !strings.Contains(err.Error(), "parameter 0 is 8 bytes") {
		t.Errorf("int32 for a .u64 parameter: %v, want a size mismatch", err)
	}
	tooFew := &device.Kernel{Name: "k", Params: good.Params[:2]}
	if err := checkPTXParams(tooFew, src, "k"); err == nil || !strings.Contains(err.Error(), "takes 3 parameters") {
		t.Errorf("two parameters for three: %v, want a count mismatch", err)
	}
	if err := checkPTXParams(good, src, "other"); !errors.Is(err, errNoEntry) {
		t.Errorf("missing entry: %v, want errNoEntry", err)
	}
	agg := strings.Replace(src, ".param .f32 k_param_1", ".param .align 8 .b8 k_param_1[16]", 1)
	if _, err := ptxEntryParamSizes(agg, "k"); err == nil || !strings.Contains(err.Error(), "not a scalar") {
		t.Errorf("aggregate parameter: %v, want an error", err)
	}
	noParams := ".visible .entry e()\n{\n\tret;\n}\n"
	if s, err := ptxEntryParamSizes(noParams, "e"); err != nil || len(s) != 0 {
		t.Errorf("entry without parameters: %v, %v", s, err)
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
	if want := "k_long:true k$2:true k:true nolist:false"; strings.Join(got, " ") != want {
		t.Errorf("entries %q, want %q", strings.Join(got, " "), want)
	}
	for entry, want := range map[string]string{"k_long": "[4]", "k$2": "[2 8]", "k": "[1]"} {
		if s, err := ptxEntryParamSizes(src, entry); err != nil || fmt.Sprint(s) != want {
			t.Errorf("entry %s: sizes %v, %v; want %s", entry, s, err, want)
		}
	}
	for _, entry := range []string{"nolist", "k_", "bad", "9bad"} {
		if _, err := ptxEntryParamSizes(src, entry); !errors.Is(err, errNoEntry) {
			t.Errorf("entry %s: %v, want errNoEntry", entry, err)
		}
	}
	for _, p := range []string{".param .u128 x", ".param.u32 x", ".param .u32x", ".param .q32 x", ".reg .u32 x", ".param .u3"} {
		if n, ok := scalarParamSize(p); ok {
			t.Errorf("scalarParamSize(%q) = %d, want not a scalar", p, n)
		}
	}
	if _, err := ptxEntryParamSizes(".entry k(.param .u32 a", "k"); err == nil || !strings.Contains(err.Error(), "not closed") {
		t.Errorf("unclosed list: %v", err)
	}
}
