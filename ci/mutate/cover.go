package main

// Coverage-based test selection: before the mutants run, every test of
// every tested package runs once alone with coverage of the mutated
// package; a mutant then runs only the tests that executed its line. A
// mutant on a line no test executes cannot be killed, and is reported
// survived ("not covered") without building it.
//
// Tests that re-run the test binary in a child process (os.Args[0]) are
// seen through: each test runs with os.Args[0] set to a small wrapper
// that adds -test.gocoverdir, and with $GOCOVERDIR set (for a child that
// exits in TestMain before the flag is parsed), so a child's counters
// land in the same directory as its parent's and are merged into the
// parent's profile.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A block is one basic block of a coverage profile, in the mutated
// package: file is the profile's name (import path/file.go).
type block struct {
	file           string
	l0, c0, l1, c1 int
}

func (b block) contains(file string, l, c int) bool {
	if file != b.file {
		return false
	}
	if l < b.l0 || l == b.l0 && c < b.c0 {
		return false
	}
	return l < b.l1 || l == b.l1 && c <= b.c1
}

// testCover is what one tested package's tests execute of the mutated
// package.
type testCover struct {
	pkg    string
	blocks []block
	covers map[string][]bool        // test name -> blocks it executed (by index of blocks)
	took   map[string]time.Duration // test name -> its time alone
	always []string                 // tests that fail when run alone: run for every covered mutant
	tests  []string
}

// collectCoverage runs every test of pkg (a tested package) alone with
// coverage of c.pkg.
func (c *runCfg) collectCoverage(pkg string, jobs int) (*testCover, error) {
	info, err := listPkg(pkg)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.tmp, "cover-"+strings.NewReplacer("/", "_", ".", "_").Replace(pkg))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "pkg.test")
	args := append([]string{"test", "-c", "-cover", "-covermode=set", "-coverpkg=" + c.pkg, "-o", bin}, c.args...)
	if out, err := goRun(10*time.Minute, append(args, pkg)...); err != nil {
		return nil, fmt.Errorf("building %s's tests with coverage: %v\n%s", pkg, err, firstLines(out, 20))
	}
	if _, err := os.Stat(bin); err != nil {
		return &testCover{pkg: pkg, covers: map[string][]bool{}}, nil // no test files
	}
	wrap := filepath.Join(dir, "wrap.sh")
	script := fmt.Sprintf("#!/bin/sh\nexec %s -test.gocoverdir=\"$MUTATE_COVDIR\" \"$@\"\n", shellQuote(bin))
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		return nil, err
	}
	names, err := listTests(pkg, bin)
	if err != nil {
		return nil, err
	}
	var sel *regexp.Regexp
	if c.run != "" {
		if sel, err = regexp.Compile(c.run); err != nil {
			return nil, fmt.Errorf("-run: %v", err)
		}
	}
	tc := &testCover{pkg: pkg, covers: map[string][]bool{}, took: map[string]time.Duration{}}
	for _, name := range names {
		if !strings.HasPrefix(name, "Test") && !strings.HasPrefix(name, "Example") && !strings.HasPrefix(name, "Fuzz") {
			continue
		}
		if sel != nil && !sel.MatchString(name) {
			continue
		}
		tc.tests = append(tc.tests, name)
	}
	index := map[block]int{}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next = make(chan int)
		errs []string
	)
	limit := c.limits[pkg]
	for w := 0; w < max(jobs, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := tc.tests[i]
				cd := filepath.Join(dir, fmt.Sprint("t", i))
				prof := cd + ".out"
				if err := os.MkdirAll(cd, 0o755); err != nil {
					fatalf("%v", err)
				}
				targs := append([]string{"-test.run", "^" + regexp.QuoteMeta(name) + "$", "-test.count=1",
					"-test.timeout", limit.String(), "-test.gocoverdir=" + cd, "-test.coverprofile=" + prof}, c.binArgs()...)
				t0 := time.Now()
				ok, msg := runTestBin(info.Dir, bin, wrap, cd, limit+time.Minute, targs)
				blocks, perr := readProfile(prof)
				mu.Lock()
				tc.took[name] = time.Since(t0)
				if !ok || perr != nil {
					tc.always = append(tc.always, name)
					if perr != nil {
						msg += "; " + perr.Error()
					}
					errs = append(errs, name+": "+msg)
				}
				if perr == nil {
					hit := make([]bool, 0, len(index))
					for _, b := range blocks {
						k, ok := index[b.block]
						if !ok {
							k = len(tc.blocks)
							index[b.block] = k
							tc.blocks = append(tc.blocks, b.block)
						}
						for len(hit) <= k {
							hit = append(hit, false)
						}
						hit[k] = hit[k] || b.count > 0
					}
					tc.covers[name] = hit
				}
				mu.Unlock()
				os.RemoveAll(cd)
				os.Remove(prof)
			}
		}()
	}
	for i := range tc.tests {
		next <- i
	}
	close(next)
	wg.Wait()
	sort.Strings(tc.always)
	for _, e := range errs {
		fmt.Fprintf(os.Stderr, "mutate: coverage: %s: %s (this test runs for every covered mutant)\n", pkg, e)
	}
	return tc, nil
}

// listTests returns the names a test binary of pkg lists (tests,
// examples, benchmarks and fuzz targets).
func listTests(pkg, bin string) ([]string, error) {
	out, err := exec.Command(bin, "-test.list", ".*").Output()
	if err != nil {
		return nil, fmt.Errorf("listing %s's tests: %v", pkg, err)
	}
	return strings.Fields(string(out)), nil
}

// binArgs are the test-binary forms of the -args flags (-short becomes
// -test.short, and so on).
func (c *runCfg) binArgs() []string {
	var l []string
	for _, a := range c.args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "-test.") {
			a = "-test." + strings.TrimLeft(a, "-")
		}
		l = append(l, a)
	}
	return l
}

// runTestBin runs a test binary in dir with os.Args[0] set to the
// wrapper, so that children it starts write their coverage into covdir.
func runTestBin(dir, bin, wrap, covdir string, limit time.Duration, args []string) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := groupCmd(ctx, bin)
	cmd.Args = append([]string{wrap}, args...)
	cmd.Dir = dir
	// GOCOVERDIR is for children that exit before testing.M.Run parses
	// -test.gocoverdir (a TestMain that runs a child's part and calls
	// os.Exit): the runtime's exit hook writes their counters there.
	cmd.Env = append(os.Environ(), "MUTATE_COVDIR="+covdir, "GOCOVERDIR="+covdir)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return false, "timed out"
	}
	if err != nil {
		return false, fmt.Sprintf("fails when run alone: %v: %s", err, lastLine(string(out)))
	}
	return true, ""
}

type profBlock struct {
	block
	count int
}

// readProfile reads a text coverage profile.
func readProfile(path string) ([]profBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var l []profBlock
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		// file.go:L0.C0,L1.C1 STATEMENTS COUNT
		colon := strings.LastIndex(line, ":")
		if colon < 0 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		var b profBlock
		b.file = line[:colon]
		if _, err := fmt.Sscanf(line[colon+1:], "%d.%d,%d.%d", &b.l0, &b.c0, &b.l1, &b.c1); err != nil {
			return nil, fmt.Errorf("%s: bad line %q: %v", path, line, err)
		}
		f := strings.Fields(line[colon+1:])
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		if b.count, err = strconv.Atoi(f[2]); err != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		l = append(l, b)
	}
	return l, sc.Err()
}

// selectTests returns the tests of tc that execute the mutant's position:
// the blocks holding it, or, where no block holds it (a switch case's
// expression, say), any block of its function. ok is false when the
// position is in no block of the profile at all (a function the
// coverage tool does not see): then every test runs.
func (tc *testCover) selectTests(file string, m *mutant) (tests []string, ok bool) {
	var at []int
	for i, b := range tc.blocks {
		if b.contains(file, m.line, m.col) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		for i, b := range tc.blocks {
			if b.file == file && b.l0 >= m.fnLine0 && b.l1 <= m.fnLine1 {
				at = append(at, i)
			}
		}
	}
	if len(at) == 0 {
		return tc.tests, false
	}
	for _, name := range tc.tests {
		hit := tc.covers[name]
		for _, k := range at {
			if k < len(hit) && hit[k] {
				tests = append(tests, name)
				break
			}
		}
	}
	for _, name := range tc.always {
		if !contains(tests, name) {
			tests = append(tests, name)
		}
	}
	return tests, true
}

// limit is the time limit of a mutant's run of these tests: five times
// their time alone plus margin, at most max.
func (tc *testCover) limit(tests []string, max, margin time.Duration) time.Duration {
	var sum time.Duration
	for _, t := range tests {
		sum += tc.took[t]
	}
	return min(max, (5*sum).Round(time.Second)+margin)
}

// runPattern is the -run pattern of exactly these top-level tests.
func runPattern(tests []string) string {
	q := make([]string, len(tests))
	for i, t := range tests {
		q[i] = regexp.QuoteMeta(t)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}
