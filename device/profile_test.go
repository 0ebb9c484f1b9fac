package device

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three records of the shapes the host, OpenCL and CUDA plugins register
// (their own types live in their packages now).
type (
	hostLike struct {
		Start, End int64
		Queue      uint64
	}
	openCLLike struct{ Queued, Submit, Start, End uint64 }
	cudaLike   struct{ Start, End, Stream, Context uint64 }
)

var (
	hostLikeKind = RegisterNative[hostLike]("test-host", func(r hostLike, n Native) error {
		if r.Queue != n.HWID {
			return errors.New("queue is not HWID")
		}
		return nil
	})
	openCLLikeKind = RegisterNative[openCLLike]("test-opencl", nil)
	cudaLikeKind   = RegisterNative[cudaLike]("test-cuda", nil)
)

// TestNativeRecords: each plugin's record goes into a Native and comes
// back out as the same value and as its own bytes (what a tool reads);
// asking for another plugin's type, or for the bytes of no record, gives
// nothing.
func TestNativeRecords(t *testing.T) {
	h := hostLike{Start: 10, End: 20, Queue: 3}
	o := openCLLike{Queued: 1, Submit: 2, Start: 3, End: 4}
	c := cudaLike{Start: 5, End: 6, Stream: 0xabc, Context: 0xdef}
	hn, on, cn := NewNative(hostLikeKind, h, "host copy in", 3, 0), NewNative(openCLLikeKind, o, "opencl kernel", 1, 8), NewNative(cudaLikeKind, c, "cuda memcpy HtoD", 2, 0)
	assert.Equal(t, hostLikeKind, hn.Kind, "kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	assert.Equal(t, openCLLikeKind, on.Kind, "kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	assert.Equal(t, cudaLikeKind, cn.Kind, "kinds %v %v %v", hn.Kind, on.Kind, cn.Kind)
	assert.Equal(t, "host copy in", hn.Type, "fields not kept: %+v %+v", hn, on)
	assert.EqualValues(t, 3, hn.HWID, "fields not kept: %+v %+v", hn, on)
	assert.EqualValues(t, 8, on.Teams, "fields not kept: %+v %+v", hn, on)
	if r, ok := RecordOf[hostLike](hn); assert.True(t, ok, "RecordOf[hostLike] = %+v, %v; want %+v", r, ok, h) {
		assert.Equal(t, h, r, "RecordOf[hostLike] = %+v", r)
	}
	if r, ok := RecordOf[openCLLike](on); assert.True(t, ok, "RecordOf[openCLLike] = %+v, %v; want %+v", r, ok, o) {
		assert.Equal(t, o, r, "RecordOf[openCLLike] = %+v", r)
	}
	if r, ok := RecordOf[cudaLike](cn); assert.True(t, ok, "RecordOf[cudaLike] = %+v, %v; want %+v", r, ok, c) {
		assert.Equal(t, c, r, "RecordOf[cudaLike] = %+v", r)
	}
	_, ok := RecordOf[cudaLike](hn)
	assert.False(t, ok, "a host record read as a CUDA record")
	want := unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))
	got := hn.Bytes()
	assert.True(t, bytes.Equal(got, want), "Bytes = %x, want the hostLike's %x", got, want)
	assert.Len(t, on.Bytes(), int(unsafe.Sizeof(o)), "Bytes lengths %d %d, want the records' sizes", len(on.Bytes()), len(cn.Bytes()))
	assert.Len(t, cn.Bytes(), int(unsafe.Sizeof(c)), "Bytes lengths %d %d, want the records' sizes", len(on.Bytes()), len(cn.Bytes()))
	var none Native
	assert.Nil(t, none.Bytes(), "Bytes of no record is not nil")
	_, ok = RecordOf[hostLike](none)
	assert.False(t, ok, "RecordOf found a record in an empty Native")
}

// TestNativeTypes: a registered type describes its fields for a tool that
// does not know the Go type (Field reads any of them from the bytes, sign
// extended where signed), runs its plugin's check, and the registry
// refuses types a record cannot be.
func TestNativeTypes(t *testing.T) {
	ht, ok := NativeTypeOf(hostLikeKind)
	require.True(t, ok, "the host-like type")
	assert.Equal(t, "test-host {Start int64 @0, End int64 @8, Queue uint64 @16}", ht.String(), "its description")
	assert.Equal(t, 24, ht.Size, "its size")
	n := NewNative(hostLikeKind, hostLike{Start: -5, End: 20, Queue: 3}, "t", 3, 0)
	for name, want := range map[string]uint64{"Start": ^uint64(4), "End": 20, "Queue": 3} {
		v, ok := ht.Field(n.Bytes(), name)
		assert.True(t, ok, "Field %s", name)
		assert.Equal(t, want, v, "Field %s", name)
	}
	_, ok = ht.Field(n.Bytes(), "Nope")
	assert.False(t, ok, "a field the type lacks")
	_, ok = ht.Field(n.Bytes()[:12], "End")
	assert.False(t, ok, "a field past the bytes")
	assert.NoError(t, ht.Check(n), "a record its check takes")
	assert.EqualError(t, ht.Check(NewNative(hostLikeKind, hostLike{Queue: 4}, "t", 3, 0)), "queue is not HWID", "a record its check refuses")
	ot, _ := NativeTypeOf(openCLLikeKind)
	assert.NoError(t, ot.Check(NewNative(openCLLikeKind, openCLLike{}, "", 0, 0)), "a type with no check")
	var names []string
	for _, nt := range NativeTypes() {
		names = append(names, nt.Name)
	}
	assert.Equal(t, []string{"test-host", "test-opencl", "test-cuda"}, names, "NativeTypes, by kind")
	_, ok = NativeTypeOf(NativeNone)
	assert.False(t, ok, "NativeNone has no type")
	_, ok = NativeTypeOf(200)
	assert.False(t, ok, "a kind never registered")

	type small struct {
		Start, End int32
	}
	type withPointer struct {
		Start, End int64
		P          *int
	}
	type tooBig struct{ Start, End, A, B, C uint64 }
	type noEnd struct{ Start, Stop int64 }
	for name, reg := range map[string]func(){
		"registered twice":     func() { RegisterNative[hostLike]("again", nil) },
		"32-bit Start and End": func() { RegisterNative[small]("small", nil) },
		"a pointer":            func() { RegisterNative[withPointer]("pointer", nil) },
		"over 32 bytes":        func() { RegisterNative[tooBig]("big", nil) },
		"no End":               func() { RegisterNative[noEnd]("noend", nil) },
		"not a struct":         func() { RegisterNative[uint64]("word", nil) },
	} {
		assert.Panics(t, reg, "RegisterNative of a type with %s", name)
	}
}

// TestRegisterPlugin: a registration's facts come back as given; the
// default order is by Order then name, without the Order-0 plugins; a
// plugin's variables are listed with it, checked with its Check, and
// warned about once per value; bad registrations panic.
func TestRegisterPlugin(t *testing.T) {
	RegisterPlugin(Registration{Name: "test-reg-b", Plugin: noPlugin{}, Order: 1 << 20, Images: []ImageKind{ImageKind("opencl-c")},
		Native: hostLikeKind, Env: []EnvVar{{Name: "GOMPT_TEST_REG_MODE", Accepts: "a or b", Default: "a", Check: func(v string) bool { return v == "a" || v == "b" }}}})
	RegisterPlugin(Registration{Name: "test-reg-a", Plugin: noPlugin{}, Order: 1 << 20})
	Register("test-reg-c", noPlugin{})
	r, ok := Registered("test-reg-b")
	require.True(t, ok)
	assert.Equal(t, []ImageKind{ImageKind("opencl-c")}, r.Images, "images")
	assert.Equal(t, hostLikeKind, r.Native, "native kind")
	order := DefaultOrder()
	require.GreaterOrEqual(t, len(order), 2)
	assert.Equal(t, []string{"test-reg-a", "test-reg-b"}, order[len(order)-2:], "the last of the default order: equal Orders by name")
	assert.NotContains(t, order, "test-reg-c", "a plugin of Order 0 in the default order")
	var env PluginEnv
	for _, e := range EnvVars() {
		if e.Name == "GOMPT_TEST_REG_MODE" {
			env = e
		}
	}
	assert.Equal(t, "test-reg-b", env.Plugin, "the variable's plugin")
	assert.False(t, env.Refuses(""), "unset")
	assert.False(t, env.Refuses("b"), "a value it takes")
	assert.True(t, env.Refuses("c"), "a value it refuses")
	assert.Equal(t, `gompt: GOMPT_TEST_REG_MODE="c": want a or b; using a`, env.Warning("c"))
	t.Setenv("GOMPT_TEST_REG_MODE", "b")
	assert.Equal(t, "b", Getenv("GOMPT_TEST_REG_MODE"), "Getenv of a good value")
	t.Setenv("GOMPT_TEST_REG_MODE", "zz")
	assert.True(t, WarnOnce("GOMPT_TEST_REG_MODE", "zz"), "the first warning of a value")
	assert.Equal(t, "", Getenv("GOMPT_TEST_REG_MODE"), "Getenv of a refused value")
	assert.False(t, WarnOnce("GOMPT_TEST_REG_MODE", "zz"), "the second warning of a value")

	for name, reg := range map[string]func(){
		"a taken name":     func() { Register("test-reg-a", noPlugin{}) },
		"a nil plugin":     func() { Register("test-reg-nil", nil) },
		"no name":          func() { Register("", noPlugin{}) },
		"a negative Order": func() { RegisterPlugin(Registration{Name: "test-reg-neg", Plugin: noPlugin{}, Order: -1}) },
		"an unknown kind":  func() { RegisterPlugin(Registration{Name: "test-reg-kind", Plugin: noPlugin{}, Native: 250}) },
		"another's variable": func() {
			RegisterPlugin(Registration{Name: "test-reg-env", Plugin: noPlugin{}, Env: []EnvVar{{Name: "GOMPT_TEST_REG_MODE"}}})
		},
		"a nameless variable": func() { RegisterPlugin(Registration{Name: "test-reg-env2", Plugin: noPlugin{}, Env: []EnvVar{{}}}) },
		"a nameless image kind": func() {
			RegisterPlugin(Registration{Name: "test-reg-img", Plugin: noPlugin{}, Images: []ImageKind{"test-spirv", ""}})
		},
	} {
		assert.Panics(t, reg, "Register with %s", name)
	}
	_, ok = Lookup("test-reg-neg")
	assert.False(t, ok, "a refused registration is not registered")
}

type noPlugin struct{}

func (noPlugin) Devices() ([]Device, error) { return nil, ErrNoDevice }
