package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const profile = `mode: set
example.com/p/a.go:10.2,12.15 2 1
example.com/p/a.go:12.15,14.3 1 0
example.com/p/a.go:20.1,21.10 1 1
example.com/p/b.go:5.1,6.2 1 0
`

func TestReadProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.out")
	require.NoError(t, os.WriteFile(path, []byte(profile), 0o644))
	bs, err := readProfile(path)
	require.NoError(t, err)
	require.Len(t, bs, 4)
	assert.Equal(t, profBlock{block{"example.com/p/a.go", 10, 2, 12, 15}, 1}, bs[0])
	assert.Equal(t, profBlock{block{"example.com/p/a.go", 12, 15, 14, 3}, 0}, bs[1])
	assert.Equal(t, profBlock{block{"example.com/p/b.go", 5, 1, 6, 2}, 0}, bs[3])

	require.NoError(t, os.WriteFile(path, []byte("mode: set\nexample.com/p/a.go:10.2 2 1\n"), 0o644))
	_, err = readProfile(path)
	assert.ErrorContains(t, err, "bad line")
}

func TestBlockContains(t *testing.T) {
	b := block{"f.go", 10, 5, 12, 3}
	for _, c := range []struct {
		file string
		l, c int
		want bool
	}{
		{"f.go", 10, 5, true}, // first byte
		{"f.go", 10, 4, false},
		{"f.go", 9, 80, false},
		{"f.go", 11, 1, true},
		{"f.go", 12, 3, true}, // last byte
		{"f.go", 12, 4, false},
		{"g.go", 11, 1, false},
	} {
		assert.Equal(t, c.want, b.contains(c.file, c.l, c.c), "%s:%d.%d", c.file, c.l, c.c)
	}
}

// cover is two tests' coverage of a.go: TestA runs lines 10-14 (the block
// 12.15-14.3 not), TestB runs line 20 and the block at 12.15.
func cover() *testCover {
	return &testCover{
		pkg: "example.com/p",
		blocks: []block{
			{"example.com/p/a.go", 10, 2, 12, 15},
			{"example.com/p/a.go", 12, 15, 14, 3},
			{"example.com/p/a.go", 20, 1, 21, 10},
			{"example.com/p/a.go", 30, 1, 31, 10},
		},
		covers: map[string][]bool{
			"TestA": {true, false, false, false},
			"TestB": {false, true, true}, // shorter: blocks it never saw
		},
		took:  map[string]time.Duration{"TestA": time.Second, "TestB": 2 * time.Second},
		tests: []string{"TestA", "TestB"},
	}
}

func TestSelectTests(t *testing.T) {
	tc := cover()
	const f = "example.com/p/a.go"
	sel := func(line, col, fn0, fn1 int) ([]string, bool) {
		return tc.selectTests(f, &mutant{line: line, col: col, fnLine0: fn0, fnLine1: fn1})
	}
	got, ok := sel(11, 1, 9, 15)
	assert.True(t, ok)
	assert.Equal(t, []string{"TestA"}, got, "a line only TestA runs")

	got, _ = sel(13, 1, 9, 15)
	assert.Equal(t, []string{"TestB"}, got, "the block after the condition")

	got, _ = sel(30, 5, 29, 32)
	assert.Empty(t, got, "a block no test runs: not covered")

	// A position in no block (a case expression, say): the tests that run
	// any block of its function.
	got, ok = sel(16, 1, 9, 22)
	assert.True(t, ok)
	assert.Equal(t, []string{"TestA", "TestB"}, got)
	got, _ = sel(25, 1, 24, 26)
	// No block in 24-26 at all: every test runs.
	assert.Equal(t, []string{"TestA", "TestB"}, got)
	_, ok = sel(25, 1, 24, 26)
	assert.False(t, ok)

	// A test that failed alone runs for every mutant, covered or not.
	tc.always = []string{"TestC"}
	tc.tests = append(tc.tests, "TestC")
	got, _ = sel(11, 1, 9, 15)
	assert.Equal(t, []string{"TestA", "TestC"}, got)
	got, _ = sel(30, 5, 29, 32)
	assert.Equal(t, []string{"TestC"}, got)
}

func TestLimitAndPattern(t *testing.T) {
	tc := cover()
	assert.Equal(t, 45*time.Second, tc.limit([]string{"TestA", "TestB"}, time.Hour, 30*time.Second), "five times 3s, plus 30s")
	assert.Equal(t, 40*time.Second, tc.limit([]string{"TestA", "TestB"}, 40*time.Second, 30*time.Second), "capped")

	p := runPattern([]string{"TestA", "TestA_b", "ExampleX"})
	re := regexp.MustCompile(p)
	assert.True(t, re.MatchString("TestA"))
	assert.True(t, re.MatchString("ExampleX"))
	assert.False(t, re.MatchString("TestAB"), "names match whole")
	assert.False(t, re.MatchString("TestB"))
}

func TestBinArgs(t *testing.T) {
	c := &runCfg{args: []string{"-short", "--race", "-test.v", "value"}}
	assert.Equal(t, []string{"-test.short", "-test.race", "-test.v", "value"}, c.binArgs())
}

// TestCollectCoverage builds a small module's tests with coverage and
// checks what each test is found to run, a test's child process included.
func TestCollectCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"p/p.go": `package p

func A(x int) int {
	if x > 0 {
		return 1
	}
	return 2
}

func B() int { return 3 }
`,
		"p/p_test.go": `package p

import (
	"os"
	"os/exec"
	"testing"
)

func TestA(t *testing.T) {
	if A(1) != 1 {
		t.Fatal("A")
	}
}

func TestB(t *testing.T) {
	if os.Getenv("CHILD") == "" {
		t.Skip("only as a child")
	}
	B()
}

func TestChild(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestB$")
	cmd.Env = append(os.Environ(), "CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
}

func TestFailsAlone(t *testing.T) {
	if os.Getenv("CHILD") == "" {
		t.Fatal("fails")
	}
}
`,
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	t.Chdir(dir)
	c := &runCfg{pkg: "example.com/m/p", tmp: t.TempDir(), limits: map[string]time.Duration{"./p": time.Minute}}
	tc, err := c.collectCoverage("./p", 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"TestA", "TestB", "TestChild", "TestFailsAlone"}, tc.tests)
	assert.Equal(t, []string{"TestFailsAlone"}, tc.always)
	const f = "example.com/m/p/p.go"
	at := func(line, col int) []string {
		got, ok := tc.selectTests(f, &mutant{line: line, col: col, fnLine0: line, fnLine1: line})
		require.True(t, ok, "line %d is in a block", line)
		return got
	}
	assert.Equal(t, []string{"TestA", "TestFailsAlone"}, at(4, 7), "A's condition")
	assert.Equal(t, []string{"TestFailsAlone"}, at(7, 2), "A's second return: no test")
	assert.Equal(t, []string{"TestChild", "TestFailsAlone"}, at(10, 17), "B: run by TestChild's child only")
}
