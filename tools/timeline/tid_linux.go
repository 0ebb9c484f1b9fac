package timeline

import "golang.org/x/sys/unix"

// threadID is the OS thread the calling goroutine runs on now: the host
// track its callbacks are drawn on.
func threadID() int { return unix.Gettid() }
