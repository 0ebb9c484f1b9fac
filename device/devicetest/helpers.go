package devicetest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gompt/gompt/device"
)

// newQueue returns a queue released when the test ends.
func newQueue(t *testing.T, dev device.Device) device.Queue {
	t.Helper()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	return q
}

// alloc allocates n bytes, freed when the test ends.
func alloc(t *testing.T, dev device.Device, n int) device.DevicePtr {
	t.Helper()
	b, err := dev.Alloc(n)
	if err != nil {
		t.Fatalf("Alloc(%d): %v", n, err)
	}
	if b.Ptr == 0 || b.Size != n {
		t.Fatalf("Alloc(%d) = %v, %d bytes; want a non-zero pointer to %d bytes", n, b.Ptr, b.Size, n)
	}
	t.Cleanup(func() {
		if err := dev.Free(b.Ptr); err != nil {
			t.Errorf("Free(%v): %v", b.Ptr, err)
		}
	})
	return b.Ptr
}

// pattern returns n deterministic pseudo-random bytes.
func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// sameBytes reports the first difference between got and want.
func sameBytes(t *testing.T, what string, got, want []byte) bool {
	t.Helper()
	if bytes.Equal(got, want) {
		return true
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d bytes, want %d", what, len(got), len(want))
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: byte %d of %d is %#02x, want %#02x", what, i, len(got), got[i], want[i])
			break
		}
	}
	return false
}

func wantCode(t *testing.T, what string, err error, code device.Code) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, code)
	} else if c := device.CodeOf(err); c != code {
		t.Errorf("%s: %v (code %v), want code %v", what, err, c, code)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
