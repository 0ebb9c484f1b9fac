package device

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
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
		assert.Equal(t, c.want, err.Error(), "NoDevice(cuda, %v) = %q", c.reason, err)
		assert.ErrorIs(t, err, ErrNoDevice, "NoDevice(cuda, %v) does not match ErrNoDevice", c.reason)
	}
	assert.ErrorIs(t, NoDevice("opencl", fs.ErrNotExist), fs.ErrNotExist, "NoDevice does not wrap its reason")
}
