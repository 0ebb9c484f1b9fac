//go:build !cgo

package ctoolbuild

// Loadable reports whether a program of this build can load C tools: the
// runtime's C face needs cgo.
const Loadable = false
