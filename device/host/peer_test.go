package host

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopyPeer copies between two host devices with CopyPeer, small
// (inline) and large (on the queue's goroutine), and checks its errors.
func TestCopyPeer(t *testing.T) {
	a, b := newDevice(5), newDevice(6)
	q, err := b.NewQueue()
	require.NoError(t, err)
	pc, ok := q.(device.PeerCopier)
	require.True(t, ok, "host queue is not a device.PeerCopier")
	for _, n := range []int{64, InlineCopyMax + 4096} {
		src, err := a.Alloc(n)
		require.NoError(t, err)
		dst, err := b.Alloc(n)
		require.NoError(t, err)
		want := bytes.Repeat([]byte{1, 2, 3, 4}, n/4)
		aq, _ := a.NewQueue()
		err = aq.CopyIn(src.Ptr, want)
		require.NoError(t, err, "fill")
		require.NoError(t, aq.Sync(), "fill: %v", err)
		aq.Release()
		require.NoError(t, pc.CopyPeer(dst.Ptr, a, src.Ptr, n), "CopyPeer of %d bytes", n)
		got := make([]byte, n)
		err = q.CopyOut(got, dst.Ptr)
		require.NoError(t, err, "read back")
		require.NoError(t, q.Sync(), "read back: %v", err)
		assert.True(t, bytes.Equal(got, want), "CopyPeer of %d bytes: the destination differs from the source", n)
		for _, c := range []struct {
			name string
			err  error
			want string
		}{
			{"source past its allocation", pc.CopyPeer(dst.Ptr, a, src.Ptr+8, n), "extends past allocation"},
			{"destination on the wrong device", pc.CopyPeer(src.Ptr, a, src.Ptr, n), "not inside any live allocation"},
			{"negative size", pc.CopyPeer(dst.Ptr, a, src.Ptr, -1), "negative size"},
			{"source of another plugin", pc.CopyPeer(dst.Ptr, nil, src.Ptr, n), "is not a host device"},
		} {
			var de *device.Error
			assert.True(t, errors.As(c.err, &de), "%s: %v, want an invalid-argument error of \"copy between devices\" containing %q", c.name, c.err, c.want)
			assert.Equal(t, device.CodeInvalidArgument, de.Code, "%s: %v, want an invalid-argument error of \"copy between devices\" containing %q", c.name, c.err, c.want)
			assert.Equal(t, "copy between devices", de.Op, "%s: %v, want an invalid-argument error of \"copy between devices\" containing %q", c.name, c.err, c.want)
			assert.Contains(t, c.err.Error(), c.want, "%s: %v, want an invalid-argument error of \"copy between devices\" containing %q", c.name, c.err, c.want)
		}
		assert.NoError(t, pc.CopyPeer(dst.Ptr, a, src.Ptr, 0), "CopyPeer of 0 bytes")
		a.Free(src.Ptr)
		b.Free(dst.Ptr)
	}
	q.Release()
	if err := pc.CopyPeer(0, a, 0, 1); assert.Error(t, err, "CopyPeer on a released queue") {
		assert.Contains(t, err.Error(), "released", "CopyPeer on a released queue: %v", err)
	}
}
