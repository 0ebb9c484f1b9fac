// Package ctooltest holds tests of gompt under C OMPT tools written as
// tools for LLVM's runtime are: the event and trace sequence under an EMI
// tool (ctooltest_test.go, testdata/emicheck.c), and threads, tasks,
// flushes and finalize as libomp serves them (ctool_test.go,
// testdata/cthreads.c). It has no code of its own.
package ctooltest
