// Package corpus is the test corpus of gompt-kernels: Go functions that
// use every construct of the kernel subset, Go's integer, shift and float
// rules at their edges, one to three dimensions and every reduction,
// translated by the generator (the gompt_* files are generated and
// committed). Its tests run each kernel on every device present and
// compare the results with the Go function called directly.
package corpus

//go:generate go run github.com/gompt/gompt/cmd/gompt-kernels
