//go:build linux && (amd64 || arm64) && gc

package omptrt

import (
	"runtime"
	"sync"
	"testing"
)

// threadID is the OS thread id on every thread, and with the toolchain
// this module is built with it takes the one-load path.
func TestThreadIDIsGettid(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 16 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range 100 {
				if got, want := threadID(), gettid(); got != want {
					errs <- "threadID differs from gettid"
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if !tidLayoutKnown(runtime.Version()) {
		t.Skipf("%s: layout not checked, gettid path only", runtime.Version())
	}
	if !tidFast.Load() {
		t.Fatalf("%s: the m.procid load did not validate; threadID makes a system call", runtime.Version())
	}
}

func TestTIDLayoutKnown(t *testing.T) {
	for v, want := range map[string]bool{
		"go1.21.0": true, "go1.26.8": true, "go1.26rc1": true, "go1.22": true,
		"go1.20.14": false, "go1.27.0": false, "devel go1.27-abc": false, "": false, "go2.0": false,
	} {
		if got := tidLayoutKnown(v); got != want {
			t.Errorf("tidLayoutKnown(%q) = %v, want %v", v, got, want)
		}
	}
}
