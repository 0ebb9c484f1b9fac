package main

// Mutant schemata: instead of building the tests once per mutant (about
// three seconds of CPU each, most of a run), every mutant that can is
// compiled into one copy of the package, each behind a switch on a
// variable read from $GOMPT_MUTANT at start-up:
//
//	a < b            becomes  func() bool { switch gomptMutantID { case 7: return a >= b; case 8: return a <= b }; return a < b }()
//	x = f()          becomes  switch gomptMutantID { case 9: _ = f(); default: x = f() }
//
// The tests of each tested package are then built once, and a mutant's
// run is only its tests' run with GOMPT_MUTANT set. With one mutant
// active, the others' code is the original, so each run is the mutant
// alone.
//
// Whether a mutant compiles on its own is decided first, by type-checking
// the package with the mutant (go/types, against the export data of its
// dependencies): a mutant with an error the original does not have did not
// compile and is never run. A mutant the schema cannot hold (a statement
// where a switch may not stand, an expression whose type cannot be named
// in its file, code the schema's closures make illegal, such as a constant
// expression) is found by type-checking the schema, taken out, and tested
// alone, the old way. So is a mutant whose tests fail on the schema with no
// mutant active (a test that counts stack frames, say).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

type unitKind int

const (
	noUnit unitKind = iota
	exprKind
	stmtKind
	fnKind // a function holding units: only its extent is kept
)

// The variable and the file that hold the active mutant's number.
const (
	schemaVar  = "gomptMutantID"
	schemaEnv  = "GOMPT_MUTANT"
	schemaFile = "gompt_mutant_schema.go"
)

// checker type-checks the mutated package, with the original or mutated
// text of its files.
type checker struct {
	fset  *token.FileSet
	imp   types.Importer
	path  string
	name  string
	files []string // absolute paths, in order
	src   map[string][]byte
	asts  map[string]*ast.File
	base  map[string]int // the original's error messages, counted
	types map[string]map[[2]int]types.TypeAndValue
	quals map[string]map[string]string // file -> import path -> name in the file
}

func newChecker(info pkgInfo) (*checker, error) {
	// os and strconv: the schema's own file imports them.
	out, err := goOut("", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", info.ImportPath, "os", "strconv")
	if err != nil {
		return nil, fmt.Errorf("go list -export %s: %v: %s", info.ImportPath, err, firstLines(out, 5))
	}
	export := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if p, f, ok := strings.Cut(l, "\t"); ok && f != "" {
			export[p] = f
		}
	}
	c := &checker{fset: token.NewFileSet(), path: info.ImportPath, src: map[string][]byte{}, asts: map[string]*ast.File{}}
	c.imp = importer.ForCompiler(c.fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(f)
	})
	for _, name := range append(append([]string{}, info.GoFiles...), info.CgoFiles...) {
		p := filepath.Join(info.Dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(c.fset, p, b, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		c.files = append(c.files, p)
		c.src[p], c.asts[p] = b, f
		c.name = f.Name.Name
	}
	sort.Strings(c.files)
	tinfo := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	errs, pkg := c.check(nil, tinfo)
	c.base = errs
	c.types = map[string]map[[2]int]types.TypeAndValue{}
	for e, tv := range tinfo.Types {
		p := c.fset.Position(e.Pos())
		if c.types[p.Filename] == nil {
			c.types[p.Filename] = map[[2]int]types.TypeAndValue{}
		}
		c.types[p.Filename][[2]int{p.Offset, c.fset.Position(e.End()).Offset}] = tv
	}
	c.quals = map[string]map[string]string{}
	for _, p := range c.files {
		q := map[string]string{}
		for _, is := range c.asts[p].Imports {
			path := strings.Trim(is.Path.Value, `"`)
			name := ""
			if is.Name != nil {
				name = is.Name.Name
			} else if ip := importedPkg(pkg, path); ip != nil {
				name = ip.Name()
			}
			if name != "" && name != "_" && name != "." {
				q[path] = name
			}
		}
		c.quals[p] = q
	}
	return c, nil
}

func importedPkg(pkg *types.Package, path string) *types.Package {
	if pkg == nil {
		return nil
	}
	for _, ip := range pkg.Imports() {
		if ip.Path() == path {
			return ip
		}
	}
	return nil
}

// check type-checks the package with some files' text replaced (parsed
// anew) and extra files added, and returns its error messages, counted.
func (c *checker) check(replace map[string][]byte, info *types.Info) (map[string]int, *types.Package) {
	errs := map[string]int{}
	var files []*ast.File
	for _, p := range c.files {
		f := c.asts[p]
		if b, ok := replace[p]; ok {
			var err error
			if f, err = parser.ParseFile(c.fset, p, b, parser.SkipObjectResolution); err != nil {
				errs["syntax: "+err.Error()]++
				continue
			}
		}
		files = append(files, f)
	}
	for p, b := range replace {
		if _, ok := c.src[p]; ok {
			continue
		}
		f, err := parser.ParseFile(c.fset, p, b, parser.SkipObjectResolution)
		if err != nil {
			errs["syntax: "+err.Error()]++
			continue
		}
		files = append(files, f)
	}
	conf := c.config(func(err error) {
		if te, ok := err.(types.Error); ok {
			errs[te.Msg]++
		} else {
			errs[err.Error()]++
		}
	})
	pkg, _ := conf.Check(c.path, c.fset, files, info)
	return errs, pkg
}

// config is the type checker's configuration, errors going to onErr.
func (c *checker) config(onErr func(error)) types.Config {
	return types.Config{
		Importer:    c.imp,
		FakeImportC: true, // cgo files: C's names are not checked
		Sizes:       types.SizesFor("gc", runtime.GOARCH),
		Error:       onErr,
	}
}

// compiles reports whether the package type-checks with mutant m alone:
// no error the original does not have.
func (c *checker) compiles(m *mutant) (bool, string) {
	src := c.src[m.file]
	b := append(append(append([]byte{}, src[:m.start]...), m.repl...), src[m.end:]...)
	errs, _ := c.check(map[string][]byte{m.file: b}, nil)
	for msg, n := range errs {
		if n > c.base[msg] {
			return false, msg
		}
	}
	return true, ""
}

// A unit is a node of the source that the schema replaces by a switch
// over its mutants.
type unit struct {
	kind       unitKind
	start, end int // in the original file
	typ        string
	ms         []*mutant // none for a function unit
	file       string    // a function unit's file
	out0, out1 int       // in the schema's text
}

// schema is the schema's text of every file and where each unit went.
type schema struct {
	text  map[string][]byte
	units map[string][]*unit // by file, sorted by start, outer first
}

// buildSchema returns the schema of the mutants ms (all of them must have
// compiled alone) and the mutants it could not hold. It numbers the ones
// it holds (m.id, from 1).
func (c *checker) buildSchema(ms []*mutant) (*schema, []*mutant, error) {
	in := map[*mutant]bool{}
	var out []*mutant
	for _, m := range ms {
		if m.ukind == noUnit {
			out = append(out, m)
			continue
		}
		if m.ukind == exprKind {
			// recover works only when the deferred function calls it,
			// not from the schema's closure.
			tv, ok := c.types[m.file][[2]int{m.ustart, m.uend}]
			if !ok || c.typeName(m.file, tv.Type) == "" || bytes.Contains(c.src[m.file][m.ustart:m.uend], []byte("recover(")) {
				out = append(out, m)
				continue
			}
		}
		in[m] = true
	}
	// An error in a function but in none of its units takes out, in
	// stages (narrow), the units after it on its line, the function's
	// statement units, then all of its units.
	fnStage := map[int]int{}
	for round := 0; ; round++ {
		bumped := map[int]bool{}
		var held []*mutant
		for _, m := range ms {
			if in[m] {
				m.id = len(held) + 1
				held = append(held, m)
			} else {
				m.id = 0
			}
		}
		s := c.gen(held)
		errs := map[*mutant]bool{}
		var unplaced []string
		conf := c.config(func(err error) {
			te, ok := err.(types.Error)
			if !ok {
				unplaced = append(unplaced, err.Error())
				return
			}
			if c.base[te.Msg] > 0 {
				return // the original has it too
			}
			p := te.Fset.Position(te.Pos)
			u := innermost(s.units[p.Filename], p.Offset)
			if u == nil {
				unplaced = append(unplaced, p.String()+": "+te.Msg)
				return
			}
			l := heldIn(u, held)
			if u.kind == fnKind {
				l = c.narrow(u, l, s, p.Filename, p.Offset, fnStage, bumped)
			}
			for _, m := range l {
				errs[m] = true
			}
		})
		var files []*ast.File
		fset := c.fset
		for _, p := range c.files {
			f, err := parser.ParseFile(fset, p, s.text[p], parser.SkipObjectResolution)
			if err != nil {
				return nil, nil, fmt.Errorf("the schema of %s does not parse: %v", p, err)
			}
			files = append(files, f)
		}
		ef, err := parser.ParseFile(fset, schemaFile, c.schemaFile(), 0)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, ef)
		conf.Check(c.path, fset, files, nil)
		if len(unplaced) > 0 {
			return nil, nil, fmt.Errorf("the schema has errors in no mutant's code: %s", strings.Join(unplaced, "; "))
		}
		if len(errs) == 0 {
			return s, out, nil
		}
		if round == 20 {
			return nil, nil, fmt.Errorf("the schema still has errors after %d rounds", round)
		}
		for m := range errs {
			delete(in, m)
			m.id = 0
			out = append(out, m)
		}
	}
}

// narrow picks, of the mutants l of function unit u, those an error at
// offset off of the schema's text of file takes out: at the function's
// first such error, the units that start after it on its line (an
// expression made of units that must be constant: the error is at the
// expression's start); at its second, its statement units (a "missing
// return" after a panic's removal); then all of them. A function's stage
// moves once a round.
func (c *checker) narrow(u *unit, l []*mutant, s *schema, file string, off int, stage map[int]int, bumped map[int]bool) []*mutant {
	if !bumped[u.start] {
		bumped[u.start] = true
		stage[u.start]++
	}
	text := s.text[file]
	eol := bytes.IndexByte(text[off:], '\n')
	if eol < 0 {
		eol = len(text) - off
	}
	var line, st []*mutant
	for _, x := range s.units[file] {
		if x.kind != fnKind && x.out0 >= off && x.out0 < off+eol {
			line = append(line, x.ms...)
		}
	}
	for _, m := range l {
		if m.ukind == stmtKind {
			st = append(st, m)
		}
	}
	switch {
	case stage[u.start] <= 1 && len(line) > 0:
		return line
	case stage[u.start] <= 2 && len(st) > 0:
		return st
	}
	return l
}

// innermost is the smallest unit holding offset off of the schema's text.
func innermost(us []*unit, off int) *unit {
	var best *unit
	for _, u := range us {
		if u.out0 <= off && off < u.out1 && (best == nil || u.out1-u.out0 < best.out1-best.out0) {
			best = u
		}
	}
	return best
}

// heldIn returns the mutants of held inside unit u (all of a function's
// for a function unit).
func heldIn(u *unit, held []*mutant) []*mutant {
	if u.kind != fnKind {
		return u.ms
	}
	var l []*mutant
	for _, m := range held {
		if m.file == u.file && m.fnStart == u.start {
			l = append(l, m)
		}
	}
	return l
}

// typeName is how type t is written in file, or "" if it cannot be (a
// package the file does not import).
func (c *checker) typeName(file string, t types.Type) string {
	if t == nil {
		return ""
	}
	t = types.Default(t)
	if b, ok := t.(*types.Basic); ok && b.Kind() == types.Invalid {
		return ""
	}
	bad := false
	s := types.TypeString(t, func(p *types.Package) string {
		if p.Path() == c.path {
			return ""
		}
		name, ok := c.quals[file][p.Path()]
		if !ok {
			bad = true
		}
		return name
	})
	if bad {
		return ""
	}
	return s
}

func (c *checker) schemaFile() []byte {
	return []byte(fmt.Sprintf(`// Code generated by ci/mutate. DO NOT EDIT.

package %s

import (
	mutantos "os"
	mutantstrconv "strconv"
)

// %s is the number of the active mutant ($%s); 0: none.
var %s, _ = mutantstrconv.Atoi(mutantos.Getenv(%q))
`, c.name, schemaVar, schemaEnv, schemaVar, schemaEnv))
}

// gen writes the schema of the held mutants.
func (c *checker) gen(held []*mutant) *schema {
	s := &schema{text: map[string][]byte{}, units: map[string][]*unit{}}
	byFile := map[string][]*mutant{}
	for _, m := range held {
		byFile[m.file] = append(byFile[m.file], m)
	}
	for _, p := range c.files {
		ms := byFile[p]
		if len(ms) == 0 {
			s.text[p] = c.src[p]
			continue
		}
		at := map[[2]int]*unit{}
		fns := map[int]*unit{}
		var us []*unit
		for _, m := range ms {
			k := [2]int{m.ustart, m.uend}
			u := at[k]
			if u == nil {
				u = &unit{kind: m.ukind, start: m.ustart, end: m.uend}
				if m.ukind == exprKind {
					u.typ = c.typeName(p, c.types[p][k].Type)
				}
				at[k] = u
				us = append(us, u)
				f := fns[m.fnStart]
				if f == nil {
					f = &unit{kind: fnKind, start: m.fnStart, end: m.fnEnd, file: p}
					fns[m.fnStart] = f
					us = append(us, f)
				}
			}
			u.ms = append(u.ms, m)
		}
		sort.Slice(us, func(i, j int) bool {
			if us[i].start != us[j].start {
				return us[i].start < us[j].start
			}
			if us[i].end != us[j].end {
				return us[i].end > us[j].end
			}
			return us[i].kind == fnKind // a function before a unit of the same extent
		})
		g := &genState{src: c.src[p]}
		g.emit(0, len(g.src), us)
		s.text[p] = g.out.Bytes()
		s.units[p] = us
	}
	return s
}

type genState struct {
	src []byte
	out bytes.Buffer
}

// emit writes src[lo:hi] with the units us (sorted, all inside it)
// replaced by their switches.
func (g *genState) emit(lo, hi int, us []*unit) {
	pos := lo
	for i := 0; i < len(us); {
		u := us[i]
		j := i + 1
		for j < len(us) && us[j].start >= u.start && us[j].end <= u.end {
			j++
		}
		g.out.Write(g.src[pos:u.start])
		g.render(u, us[i+1:j])
		pos, i = u.end, j
	}
	g.out.Write(g.src[pos:hi])
}

func (g *genState) render(u *unit, kids []*unit) {
	u.out0 = g.out.Len()
	mut := func(m *mutant) string {
		return string(g.src[u.start:m.start]) + m.repl + string(g.src[m.end:u.end])
	}
	switch u.kind {
	case fnKind:
		g.emit(u.start, u.end, kids)
	case exprKind:
		fmt.Fprintf(&g.out, "func() %s { switch %s {", u.typ, schemaVar)
		for _, m := range u.ms {
			fmt.Fprintf(&g.out, "case %d: return %s\n", m.id, mut(m))
		}
		g.out.WriteString("}; return ")
		g.emit(u.start, u.end, kids)
		g.out.WriteString("}()")
	case stmtKind:
		fmt.Fprintf(&g.out, "switch %s {", schemaVar)
		for _, m := range u.ms {
			fmt.Fprintf(&g.out, "case %d:\n%s\n", m.id, mut(m))
		}
		g.out.WriteString("default:\n")
		g.emit(u.start, u.end, kids)
		g.out.WriteString("\n}")
	}
	u.out1 = g.out.Len()
}

// prepareSchema writes the schema, builds every tested package's tests
// on it once and runs them with no mutant active: the tests that fail
// then (or every test, if the build fails) make the mutants they would
// run tested alone.
func (c *runCfg) prepareSchema(ck *checker, s *schema) error {
	dir := filepath.Join(c.tmp, "schema")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ov := map[string]string{}
	for p, b := range s.text {
		if bytes.Equal(b, ck.src[p]) {
			continue
		}
		f := filepath.Join(dir, fmt.Sprintf("%d-%s", len(ov), filepath.Base(p)))
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return err
		}
		ov[p] = f
	}
	extra := filepath.Join(dir, schemaFile)
	if err := os.WriteFile(extra, ck.schemaFile(), 0o644); err != nil {
		return err
	}
	ov[filepath.Join(filepath.Dir(ck.files[0]), schemaFile)] = extra
	ovb, _ := json.Marshal(map[string]map[string]string{"Replace": ov})
	ovf := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovf, ovb, 0o644); err != nil {
		return err
	}
	c.schemaBin, c.schemaBad, c.schemaDir = map[string]string{}, map[string]map[string]bool{}, map[string]string{}
	for i, p := range append([]string{c.pkg}, c.also...) {
		info, err := listPkg(p)
		if err != nil {
			return err
		}
		bin := filepath.Join(dir, fmt.Sprintf("%d.test", i))
		if out, err := goRun(10*time.Minute, append(append([]string{"test", "-c", "-vet=off", "-overlay", ovf, "-o", bin}, c.args...), p)...); err != nil {
			return fmt.Errorf("building %s's tests on the schema: %v\n%s", p, err, firstLines(out, 10))
		}
		if _, err := os.Stat(bin); err != nil {
			continue // no test files
		}
		c.schemaBin[p], c.schemaDir[p] = bin, info.Dir
		t0 := time.Now()
		ok, _, out := c.runSchema(p, 0, c.run, c.limits[p])
		if ok {
			fmt.Fprintf(os.Stderr, "mutate: %s's tests pass on the schema (%v)\n", p, time.Since(t0).Round(time.Millisecond))
			continue
		}
		// Find the tests that fail on the schema: each alone.
		bad := map[string]bool{}
		var names []string
		if tc := c.cover[p]; tc != nil {
			names = tc.tests
		} else {
			if names, err = listTests(p, bin); err != nil {
				return err
			}
		}
		for _, name := range names {
			if ok, _, _ := c.runSchema(p, 0, "^"+regexp.QuoteMeta(name)+"$", c.limits[p]); !ok {
				bad[name] = true
			}
		}
		if len(bad) == 0 {
			// Only together: run every mutant of this package alone.
			bad["*"] = true
		}
		c.schemaBad[p] = bad
		fmt.Fprintf(os.Stderr, "mutate: %s's tests fail on the schema with no mutant active (%s); the mutants they would run are tested alone: %v\n",
			p, lastLine(out), sortedKeys(bad))
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	l := make([]string, 0, len(m))
	for k := range m {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

// runSchema runs package p's tests of pattern ("": all) on the schema
// with mutant id active (0: none), stopping at the first failure; limit
// is the tests' -test.timeout, a minute more the hard one.
func (c *runCfg) runSchema(p string, id int, pattern string, limit time.Duration) (ok, timedOut bool, out string) {
	args := []string{"-test.count=1", "-test.failfast", "-test.timeout", limit.String()}
	if pattern != "" {
		args = append(args, "-test.run", pattern)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit+time.Minute)
	defer cancel()
	cmd := groupCmd(ctx, c.schemaBin[p], append(args, c.binArgs()...)...)
	cmd.Dir = c.schemaDir[p]
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", schemaEnv, id))
	b, err := cmd.CombinedOutput()
	out = string(b)
	if ctx.Err() != nil || strings.Contains(out, "panic: test timed out") {
		return false, true, out
	}
	return err == nil, false, out
}

// passesUnmutated reports whether the tests of pattern pass on the schema
// with no mutant active (remembered by pattern): a mutant that fails them
// is killed only if so.
func (c *runCfg) passesUnmutated(p, pattern string, limit time.Duration) bool {
	key := p + "\x00" + pattern
	c.passMu.Lock()
	ok, known := c.passes[key]
	c.passMu.Unlock()
	if known {
		return ok
	}
	ok, to, out := c.runSchema(p, 0, pattern, limit)
	switch {
	case to:
		// Not an order dependence: the machine is slower than when the
		// tests' times were measured (a loaded machine).
		fmt.Fprintf(os.Stderr, "mutate: %s: tests %s time out (%v) with no mutant active; mutants they fail are judged by the whole package's tests\n", p, pattern, limit)
	case !ok:
		fmt.Fprintf(os.Stderr, "mutate: %s: tests %s fail together with no mutant active (%s); mutants they fail are judged by the whole package's tests\n", p, pattern, lastLine(out))
	}
	c.passMu.Lock()
	if c.passes == nil {
		c.passes = map[string]bool{}
	}
	c.passes[key] = ok
	c.passMu.Unlock()
	return ok
}

// slowTest is the time alone from which a test runs in the second round.
const slowTest = time.Second

// testSchema runs mutant m on the schema; false if it must be tested
// alone (its tests fail on the schema without it).
func (c *runCfg) testSchema(m *mutant) bool {
	type job struct {
		p, pattern string
		limit      time.Duration
	}
	var jobs, slowJobs []job
	// With coverage, a package's selected tests run in two rounds: those
	// that took under slowTest alone first, the slow ones only if the
	// fast ones pass (most mutants are killed by a fast test).
	for _, p := range append([]string{c.pkg}, c.also...) {
		bin := c.schemaBin[p]
		if bin == "" {
			continue
		}
		j := job{p: p, limit: c.limits[p], pattern: c.run}
		bad := c.schemaBad[p]
		if tc := c.cover[p]; tc != nil {
			tests, _ := tc.selectTests(path.Join(c.pkg, filepath.Base(m.file)), m)
			if len(tests) == 0 {
				continue
			}
			if bad["*"] {
				return false
			}
			for _, t := range tests {
				if bad[t] {
					return false
				}
			}
			var fast, slow []string
			for _, t := range tests {
				if tc.took[t] < slowTest {
					fast = append(fast, t)
				} else {
					slow = append(slow, t)
				}
			}
			if len(fast) > 0 {
				jobs = append(jobs, job{p: p, limit: tc.limit(fast, j.limit, 10*time.Second), pattern: runPattern(fast)})
			}
			if len(slow) > 0 {
				slowJobs = append(slowJobs, job{p: p, limit: tc.limit(slow, j.limit, 10*time.Second), pattern: runPattern(slow)})
			}
			continue
		}
		if len(bad) > 0 {
			return false
		}
		jobs = append(jobs, j)
	}
	jobs = append(jobs, slowJobs...)
	for _, j := range jobs {
		ok, to, _ := c.runSchema(j.p, m.id, j.pattern, j.limit)
		if !ok && j.pattern != c.run && !c.passesUnmutated(j.p, j.pattern, j.limit) {
			// These tests fail together without the mutant too (one
			// needs another's work): only the package's whole run tells.
			ok, to, _ = c.runSchema(j.p, m.id, c.run, c.limits[j.p])
		}
		switch {
		case ok:
			continue
		case to:
			m.outcome, m.detail = timedOut, j.p
		default:
			m.outcome, m.detail = killed, j.p
		}
		return true
	}
	m.outcome = survived
	if len(jobs) == 0 {
		m.detail = notCovered
	}
	return true
}
