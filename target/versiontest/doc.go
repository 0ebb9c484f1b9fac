// Package versiontest runs every kind of data operation under a Go tool
// and a C tool in each OpenMP version of the tools interface (the
// default 5.2, GOMPT_OMPT_VERSION=6.0, GOMPT_TOOL_PROFILE=llvm), each in
// a child process of the test binary (the mode is fixed once per
// process), and checks what the callbacks and trace records say. It has
// no code of its own.
package versiontest
