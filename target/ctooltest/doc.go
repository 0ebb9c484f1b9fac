// Package ctooltest holds the test of gompt's event and trace sequence
// under a C OMPT tool written as tools for LLVM's runtime are (see
// ctooltest_test.go and testdata/emicheck.c). It has no code of its own.
package ctooltest
