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
//
// Files, by concern: main.go (the flags, the packages and the equivalent
// mutants, the run of every mutant and the report), mutants.go (the
// mutation operators), run.go (running a mutant's tests, and the go
// command), cover.go (coverage-based test selection) and schema.go (mutant
// schemata: many mutants compiled into one copy of the package).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

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
