package main

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time (user and system) of the calling thread
// in nanoseconds; the caller locks its goroutine to the thread.
func threadCPU() int64 { return rusage(unix.RUSAGE_THREAD) }

// processCPU returns the CPU time of the whole process in nanoseconds.
func processCPU() int64 { return rusage(unix.RUSAGE_SELF) }

func rusage(who int) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
