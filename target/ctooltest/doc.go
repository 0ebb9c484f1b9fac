// Package ctooltest holds tests of gompt under C OMPT tools written as
// tools for LLVM's runtime are: the event and trace sequence under an EMI
// tool (ctooltest_test.go, testdata/emicheck.c), threads, tasks,
// flushes and finalize as libomp serves them (ctool_test.go,
// testdata/cthreads.c), each thread's life on its own thread under a tool
// with thread-local state (testdata/cthreadlife.c), and a tool that
// registers target_map without expecting it, as LLVM's omptest does
// (testdata/cmapassert.c, GOMPT_TOOL_PROFILE=llvm). It has no code of
// its own.
package ctooltest
