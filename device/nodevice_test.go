package device

import (
	"errors"
	"io/fs"
	"testing"
)

// NoDevice names the plugin once and matches ErrNoDevice and its reason.
func TestNoDeviceMessage(t *testing.T) {
	for _, c := range []struct {
		reason error
		want   string
	}{
		{errors.New("no CUDA driver: libcuda.so.1: cannot open shared object file"), "cuda: no device: no CUDA driver: libcuda.so.1: cannot open shared object file"},
		{errors.New("cuda: not available: built without cgo"), "cuda: no device: not available: built without cgo"},
		{nil, "cuda: no device"},
	} {
		err := NoDevice("cuda", c.reason)
		if err.Error() != c.want {
			t.Errorf("NoDevice(cuda, %v) = %q, want %q", c.reason, err, c.want)
		}
		if !errors.Is(err, ErrNoDevice) {
			t.Errorf("NoDevice(cuda, %v) does not match ErrNoDevice", c.reason)
		}
	}
	if err := NoDevice("opencl", fs.ErrNotExist); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("NoDevice does not wrap its reason: %v", err)
	}
}
