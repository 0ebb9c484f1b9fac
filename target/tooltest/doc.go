// Package tooltest holds the tests of the runtime's OMPT events as a tool
// sees them. They live in their own package because the tools interface
// starts once per process: this test binary has a Go tool attached, the
// target package's own tests have none.
package tooltest
