package target

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Checks by class for ci/reliability.sh: with GOMPT_RELIABILITY_OUT set, a
// test that calls reportClass writes NAME.classes there when it ends, one
// line per device: class, device, checks run (wantErr calls, or what the
// test counted), checks failed (all of them when the test failed, since
// a failed check stops it).
var (
	classMu  sync.Mutex
	classRun = map[string]map[string]int{} // test name -> device -> checks
)

// countCheck counts one check of the running test on device dev.
func countCheck(t *testing.T, dev int, n int) {
	name := "all"
	if r := rt; r != nil {
		switch {
		case dev == InitialDevice || dev == len(r.devs):
			name = "initial"
		case dev >= 0 && dev < len(r.devs):
			name = r.devs[dev].id
		}
	}
	classMu.Lock()
	defer classMu.Unlock()
	m := classRun[t.Name()]
	if m == nil {
		m = map[string]int{}
		classRun[t.Name()] = m
	}
	m[name] += n
}

// reportClass makes the test write its checks as class file.class when
// it ends (nothing without GOMPT_RELIABILITY_OUT).
func reportClass(t *testing.T, file, class string) {
	dir := os.Getenv("GOMPT_RELIABILITY_OUT")
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		classMu.Lock()
		m := classRun[t.Name()]
		classMu.Unlock()
		var b strings.Builder
		for _, dev := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			failed := 0
			if t.Failed() {
				failed = m[dev]
			}
			fmt.Fprintf(&b, "%s\t%s\t%d\t%d\n", class, dev, m[dev], failed)
		}
		f, err := os.OpenFile(filepath.Join(dir, file+".classes"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString(b.String())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		assert.NoError(t, err, "reliability report")
	})
}
