package host

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
)

// TestCopyPeer copies between two host devices with CopyPeer, small
// (inline) and large (on the queue's goroutine), and checks its errors.
func TestCopyPeer(t *testing.T) {
	a, b := newDevice(5), newDevice(6)
	q, err := b.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	pc, ok := q.(device.PeerCopier)
	if !ok {
		t.Fatal("host queue is not a device.PeerCopier")
	}
	for _, n := range []int{64, InlineCopyMax + 4096} {
		src, err := a.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := b.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte{1, 2, 3, 4}, n/4)
		aq, _ := a.NewQueue()
		if err := aq.CopyIn(src.Ptr, want); err != nil || aq.Sync() != nil {
			t.Fatalf("fill: %v", err)
		}
		aq.Release()
		if err := pc.CopyPeer(dst.Ptr, a, src.Ptr, n); err != nil {
			t.Fatalf("CopyPeer of %d bytes: %v", n, err)
		}
		got := make([]byte, n)
		if err := q.CopyOut(got, dst.Ptr); err != nil || q.Sync() != nil {
			t.Fatalf("read back: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("CopyPeer of %d bytes: the destination differs from the source", n)
		}
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
			if !errors.As(c.err, &de) || de.Code != device.CodeInvalidArgument || de.Op != "copy between devices" || !strings.Contains(c.err.Error(), c.want) {
				t.Errorf("%s: %v, want an invalid-argument error of \"copy between devices\" containing %q", c.name, c.err, c.want)
			}
		}
		if err := pc.CopyPeer(dst.Ptr, a, src.Ptr, 0); err != nil {
			t.Errorf("CopyPeer of 0 bytes: %v", err)
		}
		a.Free(src.Ptr)
		b.Free(dst.Ptr)
	}
	q.Release()
	if err := pc.CopyPeer(0, a, 0, 1); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("CopyPeer on a released queue: %v", err)
	}
}
