package target

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemcpyBetweenHostDevices runs, in a child process with two host
// devices, Memcpy and MemcpyRect from one device to the other, both ways,
// from goroutines at once: the bytes arrive, and the copies go device to
// device (device.PeerCopier), not through a host buffer of the copy's
// size, which the process's allocation count would show.
func TestMemcpyBetweenHostDevices(t *testing.T) {
	if os.Getenv("GOMPT_TEST_PEER_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemcpyBetweenHostDevices$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "GOMPT_TEST_PEER_CHILD=1", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=2")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child failed:\n%s", out)
		assert.Contains(t, string(out), "--- PASS: TestMemcpyBetweenHostDevices", "child")
		return
	}
	require.Equal(t, 2, NumDevices(), "devices: want the 2 host devices of GOMPT_HOST_DEVICES=2")
	const size = 4 << 20
	var p [2]DevicePtr
	for dev := range 2 {
		var err error
		p[dev], err = AllocMem(size, dev)
		require.NoError(t, err)
		defer FreeMem(p[dev], dev)
	}
	pattern := func(seed byte) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(i*7) + seed
		}
		return b
	}
	src := pattern(1)
	require.NoError(t, Memcpy(On(0, p[0]), Host(src), size))

	// The whole buffer, device 0 to device 1, counting the bytes the
	// process allocates meanwhile.
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range 4 {
		require.NoError(t, Memcpy(On(1, p[1]), On(0, p[0]), size))
	}
	runtime.ReadMemStats(&m1)
	assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(size), "bytes allocated by 4 device-to-device copies of %d bytes: staged through host memory, not copied peer to peer", size)
	got := make([]byte, size)
	require.NoError(t, Memcpy(Host(got), On(1, p[1]), size))
	require.True(t, bytes.Equal(got, src), "device 1 does not hold what was copied from device 0")

	// Goroutines copy disjoint pieces both ways at once, with offsets.
	back := pattern(9)
	require.NoError(t, Memcpy(On(1, p[1]), Host(back), size))
	const pieces = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*pieces)
	for i := range pieces {
		off := i * (size / pieces)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if i%2 == 0 { // even pieces: device 1 to device 0
				errs <- Memcpy(On(0, p[0]).Add(off), On(1, p[1]).Add(off), size/pieces)
			} else {
				errs <- nil
			}
		}()
		go func() {
			defer wg.Done()
			// a 2-D piece of the odd ones: 16 rows of size/pieces/16 bytes
			if i%2 == 1 {
				w := size / pieces / 16
				errs <- MemcpyRect(On(0, p[0]), On(1, p[1]), 1, []int{16, w}, []int{i * 16, 0}, []int{i * 16, 0},
					[]int{size / w, w}, []int{size / w, w})
			} else {
				errs <- nil
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, Memcpy(Host(got), On(0, p[0]), size))
	if !bytes.Equal(got, back) {
		for i := range got {
			require.Equal(t, back[i], got[i], "device 0 byte %d after the copies back", i)
		}
	}

	// Out of bounds on the source device: the error names it.
	err := Memcpy(On(0, p[0]), On(1, p[1]).Add(size-8), 16)
	assert.ErrorContains(t, err, "out of bounds", "copy past the end of device 1's buffer")
	fmt.Println("peer copies ok")
}
