//go:build cgo

package main

/*
static void gompt_bench_noop(int x) { (void)x; }
*/
import "C"

import "testing"

// cgo_call: one call of an empty C function through cgo, the floor under
// each callback a C tool receives (empty_target_ctool_all makes four: the
// target begin and end and the submit begin and end).
func init() {
	register(bcase{name: "cgo_call", backend: "host", bench: func(int) (func(*testing.B), func(), error) {
		return func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				C.gompt_bench_noop(C.int(i))
			}
		}, nil, nil
	}})
}
