package main

// Running a mutant's tests: the unmutated baseline, a mutant's run with
// its file given by -overlay, and the go command under a hard limit.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

type runCfg struct {
	pkg     string
	also    []string
	timeout time.Duration
	limits  map[string]time.Duration // per package, set by baseline
	run     string
	p       int
	args    []string
	tmp     string
	cover   map[string]*testCover // by tested package; nil: no test selection

	// The schema (schema.go), by tested package: its test binary, the
	// package's directory, and the tests that fail on it with no mutant
	// active.
	schemaBin, schemaDir map[string]string
	schemaBad            map[string]map[string]bool
	passMu               sync.Mutex
	passes               map[string]bool // package and -run pattern: pass with no mutant active
}

// baseline runs the unmutated tests of every package once: they must
// pass, and with auto set, 20 times their time (at least 20s) is that
// package's limit per mutant.
func (c *runCfg) baseline(auto bool) error {
	c.limits = map[string]time.Duration{}
	for _, p := range append([]string{c.pkg}, c.also...) {
		args := []string{"test", "-count=1", "-p", fmt.Sprint(c.p)}
		if c.run != "" {
			args = append(args, "-run", c.run)
		}
		args = append(append(args, c.args...), p)
		// Build first, so that the time measured is the tests'.
		if out, err := goRun(10*time.Minute, append([]string{"test", "-run", "^$", "-count=1"}, p)...); err != nil {
			return fmt.Errorf("the unmutated tests of %s do not build: %v\n%s", p, err, firstLines(out, 20))
		}
		t0 := time.Now()
		out, err := goRun(10*time.Minute, args...)
		if err != nil {
			return fmt.Errorf("the unmutated tests of %s fail (fix them first): %v\n%s", p, err, firstLines(out, 20))
		}
		d := c.timeout
		if auto {
			d = max(20*time.Since(t0), 20*time.Second).Round(time.Second)
		}
		c.limits[p] = d
		fmt.Fprintf(os.Stderr, "mutate: unmutated tests of %s pass in %v; limit per mutant %v\n", p, time.Since(t0).Round(time.Millisecond), d)
	}
	return nil
}

// test runs one mutant and sets its outcome.
func (c *runCfg) test(i int, m *mutant) {
	src, err := os.ReadFile(m.file)
	if err != nil {
		fatalf("%v", err)
	}
	dir := filepath.Join(c.tmp, fmt.Sprint(i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(dir)
	mf := filepath.Join(dir, filepath.Base(m.file))
	out := append(append(append([]byte{}, src[:m.start]...), m.repl...), src[m.end:]...)
	if err := os.WriteFile(mf, out, 0o644); err != nil {
		fatalf("%v", err)
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {m.file: mf}})
	ovf := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovf, ov, 0o644); err != nil {
		fatalf("%v", err)
	}
	ran := false
	for _, p := range append([]string{c.pkg}, c.also...) {
		limit := c.limits[p]
		args := []string{"test", "-overlay", ovf, "-vet=off", "-count=1", "-failfast", "-p", fmt.Sprint(c.p), "-timeout", limit.String()}
		switch tc := c.cover[p]; {
		case tc != nil:
			tests, _ := tc.selectTests(path.Join(c.pkg, filepath.Base(m.file)), m)
			if len(tests) == 0 {
				continue // no test of p executes the mutated line
			}
			limit = tc.limit(tests, limit, 30*time.Second) // the margin covers building the tests
			args = append(args[:len(args)-2], "-timeout", limit.String(), "-run", runPattern(tests))
		case c.run != "":
			args = append(args, "-run", c.run)
		}
		ran = true
		args = append(append(args, c.args...), p)
		// The go command's own limit: building the test binary, then the
		// tests' -timeout, then a margin for the panic's stack dump.
		out, err := goRun(limit+3*time.Minute, args...)
		switch {
		case err == nil:
			continue
		case errors.Is(err, context.DeadlineExceeded) || strings.Contains(out, "panic: test timed out"):
			m.outcome, m.detail = timedOut, p
		case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") || strings.Contains(out, "build failed"):
			m.outcome, m.detail = noCompile, firstLines(out, 3)
		default:
			m.outcome, m.detail = killed, p
		}
		return
	}
	m.outcome = survived
	if !ran {
		// No test executes it: it survives if it compiles.
		out, err := goRun(5*time.Minute, "build", "-overlay", ovf, c.pkg)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			m.outcome, m.detail = noCompile, firstLines(out, 3)
			return
		}
		m.detail = notCovered
	}
}

func goOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// groupCmd is a command in a process group of its own, killed whole
// (the test binaries and their children with it) when ctx ends.
func groupCmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// goRun runs the go command with a hard limit, killing its whole process
// group (the test binaries with it) when the limit passes.
func goRun(limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := groupCmd(ctx, "go", args...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if ctx.Err() != nil {
		return b.String(), context.DeadlineExceeded
	}
	return b.String(), err
}
