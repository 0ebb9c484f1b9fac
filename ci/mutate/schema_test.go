package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaModule is a small package with a mutant of every kind, and code a
// schema cannot hold: a for loop's post statement, constants, a named type
// from another package, a mutant that does not compile, lines no test runs.
var schemaModule = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.22\n",
	"p/p.go": `package p

import (
	"errors"
	"time"
)

var deferred int

// Sum adds the positive values of l.
func Sum(l []int) int {
	s := 0
	for i := 0; i < len(l); i++ {
		if l[i] > 0 {
			s += l[i]
		}
	}
	return s
}

// Half halves d.
func Half(d time.Duration) time.Duration {
	const two = 1 + 1
	if d < 0 {
		panic("negative")
	}
	return d / two
}

// Check fails for an empty name.
func Check(name string) (int, error) {
	defer count()
	n := len(name)
	if n == 0 || name == "-" {
		return 0, errors.New("empty")
	}
	return n, nil
}

func count() { deferred++ }

// Safe reports whether f panics.
func Safe(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// Flip negates b; no test runs it.
func Flip(b bool) bool {
	return !b
}
`,
	"p/p_test.go": `package p

import (
	"testing"
	"time"
)

func TestSum(t *testing.T) {
	if got := Sum([]int{1, -2, 3}); got != 4 {
		t.Fatal(got)
	}
}

func TestHalf(t *testing.T) {
	if Half(4*time.Second) != 2*time.Second {
		t.Fatal("half")
	}
}

func TestCheck(t *testing.T) {
	deferred = 0
	if _, err := Check(""); err == nil {
		t.Fatal("no error")
	}
	if n, err := Check("ab"); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	if deferred != 2 {
		t.Fatal(deferred)
	}
}

func TestSafe(t *testing.T) {
	if Safe(func() { panic(1) }) || !Safe(func() {}) {
		t.Fatal("Safe")
	}
}
`,
}

// Every mutant has the same outcome on the schema as built alone, and
// the schema holds all but the mutants it cannot.
func TestSchemaMatchesMutantsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module's tests once per mutant")
	}
	tool := filepath.Join(t.TempDir(), "mutate")
	out, err := exec.Command("go", "build", "-o", tool, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	dir := t.TempDir()
	for name, src := range schemaModule {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	line := regexp.MustCompile(`^\[\d+/\d+ [^\]]*\] (\S+: .+): ([a-z ]+?)( \(not covered\))?( \[alone\])?$`)
	run := func(args ...string) (outcomes map[string]string, alone []string, log string) {
		cmd := exec.Command(tool, append([]string{"-pkg", "./p", "-v", "-timeout", "5s"}, args...)...)
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		outcomes = map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if m := line.FindStringSubmatch(l); m != nil {
				outcomes[m[1]] = m[2] + m[3]
				if m[4] != "" {
					alone = append(alone, m[1])
				}
			}
		}
		sort.Strings(alone)
		return outcomes, alone, string(b)
	}
	withSchema, alone, log := run()
	without, none, _ := run("-schema=false")
	require.Len(t, without, 34, "every mutant reported")
	assert.Empty(t, none, "no schema, no mutant marked alone")
	assert.Equal(t, without, withSchema, "the same outcomes")
	assert.Contains(t, log, "schema of 27 mutants (5 tested alone)")
	assert.Equal(t, []string{
		"p/p.go:13: ++ -> --",          // a for loop's post statement
		"p/p.go:13: remove ++",         // (no switch may stand there)
		"p/p.go:23: 1 -> 0",            // constants: a closure is not
		"p/p.go:23: 1 -> 0 (#2 alike)", // constant
		"p/p.go:45: != -> ==",          // recover in a closure returns nil
	}, alone)
	// The kinds of outcome are all there, so the comparison means something.
	assert.Equal(t, "did not compile", without["p/p.go:23: + -> -"], "1 - 1 divides by zero")
	assert.Equal(t, "survived (not covered)", without["p/p.go:55: remove !"])
	assert.Equal(t, "timed out", without["p/p.go:13: remove ++"])
	assert.Equal(t, "killed", without["p/p.go:32: remove defer"])
	assert.Equal(t, "survived", without["p/p.go:14: > -> >="], "adding 0 changes nothing")
}
