//go:build !linux

package timeline

// threadID is 1 where the OS thread id is not available: every host
// callback is drawn on one host track.
func threadID() int { return 1 }
