// Command mutate is the project's mutation tester (issue 21). It makes one
// small change at a time to a package's source (a mutant), runs the tests
// that should notice, and reports which changes no test noticed.
//
// Mutations, each applied alone:
//
//   - comparisons flipped (< to >=, == to !=, ...) and boundaries moved
//     (< to <=, > to >=, ...);
//   - + and - swapped (also += and -=, ++ and --), && and || swapped, a !
//     removed;
//   - a call statement, defer, ++/-- or assignment removed (an assignment
//     keeps its right-hand side, assigned to _);
//   - a returned error replaced by nil (in functions whose last result is
//     error);
//   - integer literals 0 and 1 swapped, true and false swapped.
//
// The tree is never changed: each mutant is a file given to the go command
// with -overlay, so runs are safe beside other work in the same checkout.
// Each mutant's package tests run (go test -failfast -vet=off; a build
// failure there is "did not compile"); a mutant they do not kill then runs
// the tests of the packages named by -also (by default none; "importers"
// means every package of the module that imports it directly).
//
// With -cover (the default), every test of each tested package first runs
// alone with coverage of the mutated package (cover.go), and a mutant then
// runs only the tests that executed its line, under a time limit drawn
// from their own time; a mutant on a line no test executes is reported
// survived, "not covered", after a build shows it compiles. -cover=false
// runs every test for every mutant.
//
//	go run ./ci/mutate -pkg ./mapping                      # every mutant of mapping
//	go run ./ci/mutate -pkg ./target -n 150 -seed 1        # a seeded sample
//	go run ./ci/mutate -pkg ./mapping -files btree.go -also importers
//	go run ./ci/mutate -pkg ./ompt -list                   # list the mutants only
//
// Outcomes: killed (a test failed), timed out (the tests ran past -timeout:
// counted as killed), survived, did not compile (not counted). The score is
// (killed + timed out) / (compiled - equivalent). Equivalent mutants (no
// program can tell them from the original) are listed in -equiv, one a line:
//
//	FILE<TAB>FUNC<TAB>MUTATION<TAB>LINE TEXT<TAB># why
//
// where FILE is relative to the module root and LINE TEXT is the source
// line, trimmed, so that entries survive edits that move the code. The
// survivors are printed in that form; -summary appends a tab-separated line
// of the figures to a file (ci/reliability.sh makes its table from those).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A mutant is one change to one file: the bytes [start, end) replaced by
// repl.
type mutant struct {
	file       string // absolute path
	rel        string // relative to the module root
	line, col  int    // where the change starts
	fnLine0    int    // the enclosing function's first and last lines
	fnLine1    int
	start, end int
	repl       string
	desc       string // e.g. "< -> <="
	fn         string // enclosing function
	text       string // the source line, trimmed

	// Where a schema can hold the mutant (schema.go): the node its
	// switch replaces, [ustart, uend), an expression or a statement.
	ukind        unitKind
	ustart, uend int
	fnStart      int // the enclosing top-level function's offsets
	fnEnd        int
	id           int // its number in the schema (GOMPT_MUTANT); 0: tested alone

	outcome string
	detail  string
}

func (m *mutant) key() string {
	return m.rel + "\t" + m.fn + "\t" + m.desc + "\t" + m.text
}

const defaultEquiv = "ci/mutate/equivalent.txt"

const (
	killed     = "killed"
	timedOut   = "timed out"
	survived   = "survived"
	noCompile  = "did not compile"
	equivalent = "equivalent"

	notCovered = "not covered" // the detail of a survivor no test executes
)

func main() {
	var (
		pkg      = flag.String("pkg", "", "package to mutate (a directory such as ./mapping)")
		files    = flag.String("files", "", "comma-separated file names in the package to mutate (default: all its non-test Go files)")
		also     = flag.String("also", "", `comma-separated packages whose tests also run on mutants the package's own tests do not kill; "importers": the module's packages that import it`)
		n        = flag.Int("n", 0, "mutate a random sample of this many mutants (0: all)")
		seed     = flag.Uint64("seed", 1, "seed of the sample")
		timeout  = flag.Duration("timeout", 0, "time limit of one mutant's tests in one package (0: 20 times the unmutated tests' time, at least 20s; with -cover, at most 5 times the selected tests' time alone plus 30s)")
		run      = flag.String("run", "", "-run pattern for go test")
		jobs     = flag.Int("j", 1, "mutants tested at once")
		gop      = flag.Int("p", 1, "go command -p (packages built and tested at once)")
		list     = flag.Bool("list", false, "list the mutants and exit")
		equiv    = flag.String("equiv", defaultEquiv, "file of equivalent mutants (missing: none; relative to the module root by default)")
		summary  = flag.String("summary", "", "append a tab-separated summary line to this file")
		label    = flag.String("label", "", "label of the summary line (default: the package and the sample)")
		verbose  = flag.Bool("v", false, "print each mutant's outcome as it is known")
		testArgs = flag.String("args", "", "extra space-separated arguments for go test (e.g. -short)")
		only     = flag.String("only", "", "test only the mutants listed in this file (the form of -equiv; e.g. the -survivors of an earlier run)")
		survOut  = flag.String("survivors", "", "write the survivors to this file, in the form of -equiv")
		useCover = flag.Bool("cover", true, "run each mutant only against the tests that execute its line (found by running every test alone with coverage first); false: every test")
		useSchem = flag.Bool("schema", true, "compile the mutants into one schema, switched by $GOMPT_MUTANT, and build the tests once (see schema.go); false: build the tests once per mutant")
	)
	flag.Parse()
	if *pkg == "" {
		fatalf("-pkg is required (a package directory such as ./mapping)")
	}
	root, err := goOut("", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		fatalf("finding the module root: %v", err)
	}
	root = strings.TrimSpace(root)
	info, err := listPkg(*pkg)
	if err != nil {
		fatalf("%v", err)
	}
	var names []string
	if *files != "" {
		for _, f := range strings.Split(*files, ",") {
			f = strings.TrimSpace(f)
			if !contains(info.GoFiles, f) && !contains(info.CgoFiles, f) {
				fatalf("-files: %s is not a non-test Go file of %s (its files: %s)", f, info.ImportPath, strings.Join(append(info.GoFiles, info.CgoFiles...), ", "))
			}
			names = append(names, f)
		}
	} else {
		names = append(append(names, info.GoFiles...), info.CgoFiles...)
	}
	sort.Strings(names)

	var all []*mutant
	for _, name := range names {
		ms, err := mutants(root, filepath.Join(info.Dir, name))
		if err != nil {
			fatalf("%v", err)
		}
		all = append(all, ms...)
	}
	if *only != "" {
		keep, err := readEquiv(*only)
		if err != nil {
			fatalf("%v", err)
		}
		var l []*mutant
		for _, m := range all {
			if _, ok := keep[m.key()]; ok {
				l = append(l, m)
			}
		}
		all = l
	}
	total := len(all)
	sample := all
	if *n > 0 && *n < len(all) {
		r := rand.New(rand.NewPCG(*seed, 0x6d7574616e74))
		idx := r.Perm(len(all))[:*n]
		sort.Ints(idx)
		sample = make([]*mutant, 0, *n)
		for _, i := range idx {
			sample = append(sample, all[i])
		}
	}
	if *list {
		for _, m := range sample {
			fmt.Printf("%s:%d: %s\t(%s)\t%s\n", m.rel, m.line, m.desc, m.fn, m.text)
		}
		fmt.Printf("%d mutants of %d\n", len(sample), total)
		return
	}
	if *equiv == defaultEquiv {
		*equiv = filepath.Join(root, defaultEquiv)
	}
	eq, err := readEquiv(*equiv)
	if err != nil {
		fatalf("%v", err)
	}
	var alsoPkgs []string
	if *also == "importers" {
		alsoPkgs, err = importers(info.ImportPath)
		if err != nil {
			fatalf("%v", err)
		}
	} else if *also != "" {
		alsoPkgs = strings.Split(*also, ",")
	}

	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	// Every mutant's file sits in its own directory under its original
	// name: the compiler's messages and a test's stack traces then name
	// the file the developer knows.
	cfg := &runCfg{pkg: info.ImportPath, also: alsoPkgs, timeout: *timeout, run: *run, p: *gop, tmp: tmp}
	if *testArgs != "" {
		cfg.args = strings.Fields(*testArgs)
	}
	if err := cfg.baseline(*timeout == 0); err != nil {
		fatalf("%v", err)
	}
	if *useCover {
		cfg.cover = map[string]*testCover{}
		for _, p := range append([]string{cfg.pkg}, cfg.also...) {
			t0 := time.Now()
			tc, err := cfg.collectCoverage(p, *jobs)
			if err != nil {
				fatalf("%v", err)
			}
			cfg.cover[p] = tc
			fmt.Fprintf(os.Stderr, "mutate: coverage of %s by %s's %d tests: %d blocks (%v)\n", cfg.pkg, p, len(tc.tests), len(tc.blocks), time.Since(t0).Round(time.Second))
		}
	}
	if *useSchem {
		t0 := time.Now()
		ck, err := newChecker(info)
		if err != nil {
			fatalf("%v", err)
		}
		var fit []*mutant
		for _, m := range sample {
			if _, ok := eq[m.key()]; ok {
				continue
			}
			if ok, msg := ck.compiles(m); !ok {
				m.outcome, m.detail = noCompile, msg
				continue
			}
			fit = append(fit, m)
		}
		s, alone, err := ck.buildSchema(fit)
		if err == nil {
			err = cfg.prepareSchema(ck, s)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutate: no schema, every mutant is tested alone: %v\n", err)
			for _, m := range sample {
				m.id = 0
			}
			cfg.schemaBin = nil
		} else {
			fmt.Fprintf(os.Stderr, "mutate: schema of %d mutants (%d tested alone) built in %v\n", len(fit)-len(alone), len(alone), time.Since(t0).Round(time.Second))
		}
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "mutate: %s: %d mutants of %d (seed %d), also testing %v\n", info.ImportPath, len(sample), total, *seed, alsoPkgs)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
		next = make(chan int)
	)
	for w := 0; w < max(*jobs, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				m := sample[i]
				switch _, eq := eq[m.key()]; {
				case eq:
					m.outcome = equivalent
				case m.outcome != "": // did not compile (type-checked with the schema)
				default:
					// On the schema if it holds m, else (or if m's tests
					// fail on the schema without it) built alone.
					if m.id == 0 || cfg.schemaBin == nil || !cfg.testSchema(m) {
						cfg.test(i, m)
					}
				}
				mu.Lock()
				done++
				if *verbose || m.outcome == survived {
					oc := m.outcome
					if m.detail == notCovered {
						oc += " (" + notCovered + ")"
					}
					if cfg.schemaBin != nil && m.id == 0 && m.outcome != noCompile && m.outcome != equivalent {
						oc += " [alone]" // not in the schema: built and tested alone
					}
					fmt.Fprintf(os.Stderr, "[%d/%d %s] %s:%d: %s: %s\n", done, len(sample), time.Since(start).Round(time.Second), m.rel, m.line, m.desc, oc)
				}
				mu.Unlock()
			}
		}()
	}
	// Mutants are tested in a seeded random order, so that a run stopped
	// part way (its -v lines) is a random sample of the whole, not the
	// first files.
	for _, i := range rand.New(rand.NewPCG(*seed, 0x6f72646572)).Perm(len(sample)) {
		next <- i
	}
	close(next)
	wg.Wait()

	count := map[string]int{}
	uncovered := 0
	for _, m := range sample {
		count[m.outcome]++
		if m.detail == notCovered {
			uncovered++
		}
	}
	compiled := len(sample) - count[noCompile]
	scored := compiled - count[equivalent]
	score := 0.0
	if scored > 0 {
		score = 100 * float64(count[killed]+count[timedOut]) / float64(scored)
	}
	fmt.Printf("mutate %s: %d mutants (of %d, seed %d, files %s), %d compiled: killed %d, timed out %d, survived %d, equivalent %d; did not compile %d\n",
		info.ImportPath, len(sample), total, *seed, strings.Join(names, ","), compiled, count[killed], count[timedOut], count[survived], count[equivalent], count[noCompile])
	fmt.Printf("score: %.1f %% of %d non-equivalent mutants (%s)\n", score, scored, time.Since(start).Round(time.Second))
	if uncovered > 0 {
		fmt.Printf("%d of the survivors are on lines no test executes (marked \"not covered\")\n", uncovered)
	}
	if count[survived] > 0 {
		fmt.Println("survivors (FILE:LINE: MUTATION  FUNC  LINE TEXT):")
		for _, m := range sample {
			if m.outcome == survived {
				nc := ""
				if m.detail == notCovered {
					nc = "\t(" + notCovered + ")"
				}
				fmt.Printf("  %s:%d: %s\t%s\t%s%s\n", m.rel, m.line, m.desc, m.fn, m.text, nc)
			}
		}
	}
	if *survOut != "" {
		var b strings.Builder
		for _, m := range sample {
			if m.outcome == survived {
				nc := ""
				if m.detail == notCovered {
					nc = ", " + notCovered
				}
				fmt.Fprintf(&b, "%s\t# line %d%s\n", m.key(), m.line, nc)
			}
		}
		if err := os.WriteFile(*survOut, []byte(b.String()), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	if *summary != "" {
		lab := *label
		if lab == "" {
			lab = info.ImportPath
			if len(sample) < total {
				lab += fmt.Sprintf(" (%d of %d, seed %d)", len(sample), total, *seed)
			}
		}
		f, err := os.OpenFile(*summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fatalf("%v", err)
		}
		// label, mutants, compiled, killed, timed out, survived, equivalent, score
		fmt.Fprintf(f, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\n", lab, len(sample), compiled, count[killed], count[timedOut], count[survived], count[equivalent], score)
		if err := f.Close(); err != nil {
			fatalf("%v", err)
		}
	}
}

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

// mutants parses one file and returns every mutant of it, in source order.
func mutants(root, path string) ([]*mutant, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	lineText := func(p token.Pos) string {
		o := off(p)
		s := bytes.LastIndexByte(src[:o], '\n') + 1
		e := bytes.IndexByte(src[o:], '\n')
		if e < 0 {
			e = len(src) - o
		}
		return strings.TrimSpace(strings.ReplaceAll(string(src[s:o+e]), "\t", " "))
	}
	// blank keeps the newlines of a removed range, so that line numbers
	// after it stay as they were.
	blank := func(a, b token.Pos) string {
		return strings.Repeat("\n", bytes.Count(src[off(a):off(b)], []byte("\n")))
	}
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }

	var out []*mutant
	var fn string
	var fnLine0, fnLine1, fnStart, fnEnd int
	var stack []ast.Node
	// The unit of the mutants being added: set before each add.
	var (
		ukind unitKind
		unit  ast.Node
	)
	// stmtUnit makes statement n the unit if a switch may stand in its
	// place: a statement of a block or a case's body (not a for loop's
	// post statement, an if's init, a select case's communication or a
	// labelled statement).
	stmtUnit := func(n ast.Stmt) {
		ukind, unit = noUnit, nil
		if len(stack) < 2 {
			return
		}
		switch p := stack[len(stack)-2].(type) {
		case *ast.BlockStmt, *ast.CaseClause:
			ukind, unit = stmtKind, n
		case *ast.CommClause:
			if p.Comm != n {
				ukind, unit = stmtKind, n
			}
		}
	}
	add := func(at token.Pos, a, b token.Pos, repl, desc string) {
		for _, m := range out {
			if m.start == off(a) && m.end == off(b) && m.repl == repl {
				return
			}
		}
		out = append(out, &mutant{
			file: path, rel: rel, line: fset.Position(at).Line, col: fset.Position(a).Column,
			fnLine0: fnLine0, fnLine1: fnLine1,
			start: off(a), end: off(b), repl: repl, desc: desc,
			fn: fn, text: lineText(at),
			ukind: ukind, fnStart: fnStart, fnEnd: fnEnd,
		})
		if unit != nil {
			out[len(out)-1].ustart, out[len(out)-1].uend = off(unit.Pos()), off(unit.End())
		}
	}
	op := func(at token.Pos, from token.Token, to ...token.Token) {
		for _, t := range to {
			add(at, at, at+token.Pos(len(from.String())), t.String(), from.String()+" -> "+t.String())
		}
	}
	// resultsError reports whether the innermost function on the stack
	// has error as its last result, and how many results it has.
	resultsError := func() (bool, int) {
		for i := len(stack) - 1; i >= 0; i-- {
			var ft *ast.FuncType
			switch n := stack[i].(type) {
			case *ast.FuncDecl:
				ft = n.Type
			case *ast.FuncLit:
				ft = n.Type
			default:
				continue
			}
			if ft.Results == nil || len(ft.Results.List) == 0 {
				return false, 0
			}
			id, ok := ft.Results.List[len(ft.Results.List)-1].Type.(*ast.Ident)
			return ok && id.Name == "error", ft.Results.NumFields()
		}
		return false, 0
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue // constants and variables: their mutants are mostly equivalent or do not compile
		}
		fn = funcName(fd)
		fnLine0, fnLine1 = fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		fnStart, fnEnd = off(fd.Pos()), off(fd.End())
		ast.Inspect(fd, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.BinaryExpr:
				ukind, unit = exprKind, n
				switch n.Op {
				case token.LSS:
					op(n.OpPos, n.Op, token.GEQ, token.LEQ)
				case token.LEQ:
					op(n.OpPos, n.Op, token.GTR, token.LSS)
				case token.GTR:
					op(n.OpPos, n.Op, token.LEQ, token.GEQ)
				case token.GEQ:
					op(n.OpPos, n.Op, token.LSS, token.GTR)
				case token.EQL:
					op(n.OpPos, n.Op, token.NEQ)
				case token.NEQ:
					op(n.OpPos, n.Op, token.EQL)
				case token.LAND:
					op(n.OpPos, n.Op, token.LOR)
				case token.LOR:
					op(n.OpPos, n.Op, token.LAND)
				case token.ADD:
					if !isString(n.X) && !isString(n.Y) {
						op(n.OpPos, n.Op, token.SUB)
					}
				case token.SUB:
					op(n.OpPos, n.Op, token.ADD)
				}
			case *ast.UnaryExpr:
				ukind, unit = exprKind, n
				if n.Op == token.NOT {
					add(n.OpPos, n.OpPos, n.OpPos+1, "", "remove !")
				}
			case *ast.BasicLit:
				ukind, unit = exprKind, n
				if n.Kind == token.INT {
					switch n.Value {
					case "0":
						add(n.Pos(), n.Pos(), n.End(), "1", "0 -> 1")
					case "1":
						add(n.Pos(), n.Pos(), n.End(), "0", "1 -> 0")
					}
				}
			case *ast.Ident:
				ukind, unit = exprKind, n
				switch n.Name {
				case "true":
					add(n.Pos(), n.Pos(), n.End(), "false", "true -> false")
				case "false":
					add(n.Pos(), n.Pos(), n.End(), "true", "false -> true")
				}
			case *ast.AssignStmt:
				stmtUnit(n)
				switch n.Tok {
				case token.ADD_ASSIGN:
					op(n.TokPos, n.Tok, token.SUB_ASSIGN)
				case token.SUB_ASSIGN:
					op(n.TokPos, n.Tok, token.ADD_ASSIGN)
				}
				if n.Tok == token.DEFINE || allBlank(n.Lhs) {
					break
				}
				// Remove the store, keep the right-hand side's effects.
				lhs := len(n.Lhs)
				if n.Tok != token.ASSIGN {
					lhs = 1
				}
				var rhs []string
				for _, e := range n.Rhs {
					rhs = append(rhs, text(e))
				}
				repl := strings.TrimSuffix(strings.Repeat("_, ", lhs), ", ") + " = " + strings.Join(rhs, ", ")
				add(n.Pos(), n.Pos(), n.End(), repl, "remove assignment")
			case *ast.IncDecStmt:
				stmtUnit(n)
				if n.Tok == token.INC {
					op(n.TokPos, n.Tok, token.DEC)
				} else {
					op(n.TokPos, n.Tok, token.INC)
				}
				add(n.Pos(), n.Pos(), n.End(), blank(n.Pos(), n.End()), "remove "+n.Tok.String())
			case *ast.ExprStmt:
				stmtUnit(n)
				if _, ok := n.X.(*ast.CallExpr); ok {
					add(n.Pos(), n.Pos(), n.End(), blank(n.Pos(), n.End()), "remove call")
				}
			case *ast.DeferStmt:
				stmtUnit(n)
				add(n.Pos(), n.Pos(), n.End(), blank(n.Pos(), n.End()), "remove defer")
			case *ast.ReturnStmt:
				stmtUnit(n)
				isErr, nres := resultsError()
				if !isErr || len(n.Results) != nres {
					break // a bare return, or return f() of a multi-value f
				}
				last := n.Results[len(n.Results)-1]
				if id, ok := last.(*ast.Ident); !ok || id.Name != "nil" {
					add(last.Pos(), last.Pos(), last.End(), "nil"+blank(last.Pos(), last.End()), "return nil error")
				}
			}
			return true
		})
	}
	// Mutants alike in key (the same change to lines of the same text in
	// one function) are told apart by their order in the file: "(#2 alike)".
	nth := map[string]int{}
	for _, m := range out {
		k := m.key()
		nth[k]++
		if nth[k] > 1 {
			m.desc += fmt.Sprintf(" (#%d alike)", nth[k])
		}
	}
	return out, nil
}

func allBlank(l []ast.Expr) bool {
	for _, e := range l {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return true
}

func isString(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING || e.Kind == token.CHAR
	case *ast.BinaryExpr:
		return isString(e.X) || isString(e.Y)
	case *ast.ParenExpr:
		return isString(e.X)
	}
	return false
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	if star != "" {
		return "(*" + name + ")." + fd.Name.Name
	}
	return name + "." + fd.Name.Name
}

type pkgInfo struct {
	Dir, ImportPath   string
	GoFiles, CgoFiles []string
}

func listPkg(p string) (pkgInfo, error) {
	var info pkgInfo
	out, err := goOut("", "list", "-json", p)
	if err != nil {
		return info, fmt.Errorf("go list %s: %v: %s", p, err, firstLines(out, 5))
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return info, fmt.Errorf("go list %s: %v", p, err)
	}
	return info, nil
}

// importers returns the module's packages that import path, in their code
// or their tests.
func importers(path string) ([]string, error) {
	out, err := goOut("", "list", "-f", `{{.ImportPath}}|{{join .Imports ","}},{{join .TestImports ","}},{{join .XTestImports ","}}`, "./...")
	if err != nil {
		return nil, fmt.Errorf("go list ./...: %v: %s", err, firstLines(out, 5))
	}
	var ps []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		p, imps, _ := strings.Cut(sc.Text(), "|")
		if p != path && contains(strings.Split(imps, ","), path) {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

func readEquiv(path string) (map[string]string, error) {
	eq := map[string]string{}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return eq, nil
	}
	if err != nil {
		return nil, err
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.SplitN(l, "\t", 5)
		if len(f) < 4 {
			return nil, fmt.Errorf("%s:%d: want FILE<TAB>FUNC<TAB>MUTATION<TAB>LINE TEXT<TAB># why, got %q", path, i+1, l)
		}
		why := ""
		if len(f) == 5 {
			why = f[4]
		}
		eq[strings.Join(f[:4], "\t")] = why
	}
	return eq, nil
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

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "mutate: "+format+"\n", a...)
	os.Exit(2)
}
