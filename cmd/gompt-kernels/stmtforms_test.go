package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file feeds the generator every statement form that stores into
// every kind of place a kernel stores into, in every kind of body
// (issue 38: no internal error on any input the checker accepts).
// assign_test.go has the first, smaller table; this one adds every
// operator, :=, var declarations, helpers and atomics, if, for and switch
// around the statement, and checks that the Go the generator writes
// type-checks, and that the kernels run alike on every device.

// stmtKernel is a kernel holding the statement under test: its source,
// with NAME the kernel's name (a helper's is NAME's) and STMT the
// statements.
type stmtKernel string

const (
	// stmtMap is a map kernel with array reductions: its buffer out has
	// two elements per point, h and g are reduce(.)=+, m reduce(m)=max;
	// x and y are locals, la a local array.
	stmtMap stmtKernel = `//gompt:kernel dims=n reduce(h)=+ reduce(g)=+ reduce(m)=max len(in)=n len(out)=2*n len(h)=16 len(g)=16 len(m)=8
func NAME(i int, n int, in []int32, out []int32, h []int32, g []int32, m []int32) {
	x, y := in[i], in[n-1-i]
	STMT
	out[2*i] += x
	out[2*i+1] -= y
}
`
	// stmtLocalArray has a local array, which the subset refuses.
	stmtLocalArray stmtKernel = `//gompt:kernel dims=n len(out)=2*n
func NAME(i int, n int, in []int32, out []int32) {
	x, y := in[i], in[n-1-i]
	var la [4]int32
	STMT
	out[2*i] += x + la[i&3]
	out[2*i+1] -= y
}
`
	// stmtTeam is a team kernel: out has two elements per thread, a and
	// b are team arrays, x and y locals that live across the barrier.
	stmtTeam stmtKernel = `//gompt:kernel team=64 dims=teams len(in)=teams*64 len(out)=teams*128
func NAME(t, th int, teams int, in []int32, out []int32) {
	var a, b [64]int32
	x, y := in[t*64+th], in[t*64+63-th]
	a[th], b[63-th] = y, x
	STMT
	kernelrt.Barrier()
	out[t*128+th] += a[63-th] + b[th] + x
	out[t*128+64+th] -= a[th] ^ b[63-th] ^ y
}
`
	// stmtHelper stores in a helper: into its slice parameter's
	// elements (the kernel's two per point) and its locals. The call is
	// a statement of its own: in out[2*i] += NAMEf(out, ...), Go does not
	// say whether out[2*i] is read before or after the call writes it.
	stmtHelper stmtKernel = `//gompt:func
func NAMEf(out []int32, i int, v int32) int32 {
	x, y := v, v^7
	STMT
	return x - y
}

//gompt:kernel dims=n len(in)=n len(out)=2*n
func NAME(i int, n int, in []int32, out []int32) {
	v := NAMEf(out, 2*i, in[i])
	out[2*i] += v
}
`
)

// stmtPreamble is what every generated package has before its kernels:
// a helper for right-hand sides, and the imports the kernels may use.
const stmtPreamble = `package k

import (
	"sync/atomic"

	"github.com/gompt/gompt/kernelrt"
)

var (
	_ = atomic.AddInt32
	_ = kernelrt.Barrier
)

// mix is a helper called in right-hand sides.
//
//gompt:func
func mix(a, b int32) int32 { return a*3 - b }
`

// stmtTarget is one kind of place a statement stores into: T and U, two
// places of the kind, in the kernel; which forms the checker refuses
// there, and what it says of each (one substring of the message); and
// whether points or threads store into the same place T (the kernel
// generates but its result depends on the order they run in).
// refused is nil where every form generates.
type stmtTarget struct {
	name    string
	t, u    string
	kernel  stmtKernel
	refused func(form string) string
	racy    bool

	// declRefused is what the checker says of the kernel around the
	// forms, at the place's declaration (its uses then say nothing more).
	declRefused string
}

// The operators of an op= statement.
var stmtOps = []string{"+", "-", "*", "/", "%", "&", "|", "^", "&^", "<<", ">>"}

// stmtForms are the statement forms: T and U are the target's places, x
// and y int32 locals, mix a helper, z a new name.
var stmtForms = func() []string {
	forms := []string{
		"T = 3",
		"T = mix(U, x)",
		"T = max(T, x)",
		"T = T + x",
		"T := 3",
		"z := T\nT = z + 1",
	}
	for _, op := range stmtOps {
		forms = append(forms, "T "+op+"= 5")
	}
	forms = append(forms,
		"T <<= y & 31",
		"T >>= x & 63",
		"T += mix(x, y)",
		"T++",
		"T--",
		"T, x = 3, T",
		"x, T = T, 3",
		"T, U = U, T",
		"T, U = x, y",
		"T, T = x, y",
		"T, _ = 3, 4",
		"_, T = 3, 4",
		"T, x, y = x, y, T",
		"var p, q int32 = T, 3\nT = p * q",
		"var p, q = mix(x, 1), y\nT, x = q, p",
		"atomic.AddInt32(&T, 3)",
		"x = atomic.AddInt32(&T, y) + atomic.LoadInt32(&T)",
		"_ = atomic.CompareAndSwapInt32(&T, x, 3)",
	)
	return forms
}()

// atomicForm reports whether form calls sync/atomic.
func atomicForm(form string) bool { return strings.Contains(form, "atomic.") }

// reads reports whether form reads place p, T or U (an op=, ++, --, or
// p on a right-hand side).
func reads(form, p string) bool {
	if strings.Contains(form, p+"++") || strings.Contains(form, p+"--") {
		return true
	}
	for _, op := range stmtOps {
		if strings.Contains(form, p+" "+op+"= ") {
			return true
		}
	}
	for _, line := range strings.Split(form, "\n") {
		if i := strings.Index(line, "="); i >= 0 && strings.Contains(line[i:], p) {
			return true
		}
	}
	return strings.Contains(form, "(&"+p)
}

var stmtTargets = []stmtTarget{
	{name: "buffer", t: "out[2*i]", u: "out[2*i+1]", kernel: stmtMap, refused: refusedDefine},
	{name: "team buffer", t: "out[t*128+th]", u: "out[t*128+64+th]", kernel: stmtTeam, refused: refusedDefine},
	{name: "team array", t: "a[th]", u: "b[63-th]", kernel: stmtTeam, refused: func(form string) string {
		if atomicForm(form) {
			return "of &a[th] is not supported in a gompt kernel (a team array's elements are not atomic"
		}
		return refusedDefine(form)
	}},
	{name: "team array at a local", t: "a[x&63]", u: "b[y&63]", kernel: stmtTeam, racy: true, refused: func(form string) string {
		if atomicForm(form) {
			return "of &a[x & 63] is not supported in a gompt kernel (a team array's elements are not atomic"
		}
		return refusedDefine(form)
	}},
	{name: "reduction array", t: "h[i&15]", u: "g[(i+3)&15]", kernel: stmtMap, refused: func(form string) string {
		switch form {
		case "T += 5", "T -= 5", "T += mix(x, y)", "T++", "T--":
			return ""
		}
		if strings.Contains(form, ":=") && !strings.Contains(form, "z :=") {
			return "on left side of :="
		}
		return "is reduce(h)=+"
	}},
	{name: "max reduction array", t: "m[i&7]", u: "m[(i+1)&7]", kernel: stmtMap, refused: func(form string) string {
		switch form {
		case "T = max(T, x)":
			return ""
		}
		if strings.Contains(form, ":=") && !strings.Contains(form, "z :=") {
			return "on left side of :="
		}
		return "is reduce(m)=max"
	}},
	{name: "local", t: "x", u: "y", kernel: stmtMap, refused: refusedLocal},
	{name: "team local", t: "x", u: "y", kernel: stmtTeam, refused: refusedLocal},
	{name: "blank", t: "_", u: "_", kernel: stmtMap, refused: func(form string) string {
		switch {
		case form == "T := 3":
			return "no new variables on left side of :="
		case reads(form, "T") || reads(form, "U"):
			return "cannot use _ as value"
		}
		return ""
	}},
	{name: "local array", t: "la[i&3]", u: "la[(i+1)&3]", kernel: stmtLocalArray, refused: refusedDefine,
		declRefused: "a local variable of type [4]int32 is not supported"},
	{name: "helper buffer", t: "out[i]", u: "out[i+1]", kernel: stmtHelper, refused: refusedDefine},
	{name: "helper local", t: "x", u: "y", kernel: stmtHelper, refused: refusedLocal},
}

// refusedDefine is what Go says of := into an element: nothing else is
// refused there.
func refusedDefine(form string) string {
	if form == "T := 3" {
		return "on left side of :="
	}
	return ""
}

// refusedLocal is what is refused of a local: := in a block of its own
// (a new variable, Go's error), and an atomic of its address.
func refusedLocal(form string) string {
	switch {
	case form == "T := 3":
		return "declared and not used: x"
	case atomicForm(form):
		return "of &x is not supported"
	}
	return ""
}

// stmtContext puts a statement in a body: as it is, in an if's both
// branches, in a loop, in a switch's cases.
type stmtContext struct{ name, open, mid, close string }

var (
	stmtPlain    = stmtContext{"plain", "{\n", "", "}\n"}
	stmtContexts = []stmtContext{
		stmtPlain,
		{"if", "if x > y {\n", "} else {\n", "}\n"},
		{"for", "for k := 0; k < 2; k++ {\n", "", "}\n"},
		{"switch", "switch x & 3 {\ncase 0, 1:\n", "default:\n", "}\n"},
	}
)

// stmtSource is the kernel of target tg, named name, holding the forms
// in each of the contexts, each in a block of its own whose first line
// ends in a comment // form N (N its index in forms).
func stmtSource(tg stmtTarget, name string, forms []string, contexts ...stmtContext) string {
	var b strings.Builder
	r := strings.NewReplacer("T", tg.t, "U", tg.u)
	for _, c := range contexts {
		for i, f := range forms {
			s := r.Replace(f)
			fmt.Fprintf(&b, "%s // form %d\n%s\n", strings.TrimSuffix(c.open, "\n"), i, s)
			if c.mid != "" {
				b.WriteString(c.mid + s + "\n")
			}
			b.WriteString(c.close)
		}
	}
	return strings.NewReplacer("NAME", name, "STMT", b.String()).Replace(string(tg.kernel))
}

// formLines maps each line of src to the form whose block holds it (-1
// outside them).
func formLines(src string) []int {
	lines := strings.Split(src, "\n")
	at := make([]int, len(lines)+1) // 1-based
	cur, depth := -1, 0
	for i, l := range lines {
		if j := strings.Index(l, " // form "); j >= 0 {
			fmt.Sscanf(l[j+len(" // form "):], "%d", &cur)
			depth = 0
		}
		at[i+1] = cur
		depth += strings.Count(l, "{") - strings.Count(l, "}")
		if cur >= 0 && depth <= 0 && !strings.Contains(l, " // form ") || depth < 0 {
			cur = -1
		}
	}
	return at
}

// stmtWant is what the checker says of form stored into tg: "" where it
// generates.
func stmtWant(tg stmtTarget, form string) string {
	if tg.refused == nil {
		return ""
	}
	return tg.refused(form)
}

// Every statement form into every target, each form in its own block of
// one kernel per target: the errors are at file:line:col, none an
// internal error; each form the checker refuses has one at its lines
// that names the construct, and each it takes has none.
// TestStatementFormsInBodies generates the forms it takes.
func TestStatementFormsIntoEveryTarget(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod") // kernelrt's own requirements, into the test module's go.mod
	for _, tg := range stmtTargets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			src := stmtPreamble + "\n" + stmtSource(tg, "K", stmtForms, stmtPlain)
			dir := writePkg(t, map[string]string{"k.go": src})
			_, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
			var msgs []string
			if err != nil {
				msgs = strings.Split(err.Error(), "\n")
			}
			if err != nil && strings.Contains(msgs[0], "internal error") {
				t.Errorf("%s\nfinding the form:", msgs[0])
				for _, form := range stmtForms {
					src := stmtPreamble + "\n" + stmtSource(tg, "K", []string{form}, stmtPlain)
					dir := writePkg(t, map[string]string{"k.go": src})
					if _, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"}); err != nil && strings.Contains(err.Error(), "internal error") {
						t.Errorf("%s: %s", strings.ReplaceAll(form, "\n", "; "), strings.SplitN(err.Error(), "\n", 2)[0])
					}
				}
				return
			}
			at := formLines(src)
			said := make([][]string, len(stmtForms))
			var outside []string
			for _, m := range msgs {
				if !assert.Regexp(t, positioned, m, "an error names file:line:col") {
					continue
				}
				var line int
				fmt.Sscanf(m[strings.Index(m, "k.go:")+len("k.go:"):], "%d", &line)
				if line < len(at) && at[line] >= 0 {
					said[at[line]] = append(said[at[line]], m)
				} else {
					outside = append(outside, m)
				}
			}
			if tg.declRefused == "" {
				assert.Empty(t, outside, "errors outside the forms")
			} else if assert.Len(t, outside, 1, "an error at the declaration") {
				assert.Contains(t, outside[0], tg.declRefused)
			}
			for i, form := range stmtForms {
				stmt := strings.ReplaceAll(strings.NewReplacer("T", tg.t, "U", tg.u).Replace(form), "\n", "; ")
				want := stmtWant(tg, form)
				if want == "" {
					assert.Empty(t, said[i], "%s: no error", stmt)
					continue
				}
				assert.True(t, slices.ContainsFunc(said[i], func(m string) bool { return strings.Contains(m, want) }),
					"%s: want an error saying %q; got %q", stmt, want, said[i])
			}
		})
	}
}

// Every form the checker takes into every target, in every kind of body
// (plain, if and else, for, switch), together in one kernel per target:
// it generates, the OpenCL C compiles to PTX (with clang-19), and the Go
// type-checks.
func TestStatementFormsInBodies(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	for _, tg := range stmtTargets {
		forms := acceptedForms(tg)
		if len(forms) == 0 || tg.declRefused != "" {
			continue
		}
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			src := stmtPreamble + "\n" + stmtSource(tg, "K", forms, stmtContexts...)
			dir := writePkg(t, map[string]string{"k.go": src})
			out, err := generate(ir.Options{Dir: dir})
			if !assert.NoError(t, err, "the kernel:\n%s", src) {
				return
			}
			assert.Contains(t, out, "gompt_K.cl")
			typeCheckGenerated(t, dir, out)
		})
	}
}

// The forms each place takes, in every kind of body, run alike on every
// device: one package holds a kernel per kind of place (less those whose
// points store into the same place), and its test, run with go test,
// checks each kernel on every device against its Go image
// (kerneltest.CheckKernel), and each map kernel's launcher, on every
// device, against the Go function called at every point.
func TestStatementFormsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a test of the generated package (-short)")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	var src, checks, direct strings.Builder
	src.WriteString(stmtPreamble)
	for i, tg := range stmtTargets {
		forms := acceptedForms(tg)
		if len(forms) == 0 || tg.declRefused != "" || tg.racy {
			continue
		}
		if tg.name == "helper buffer" && os.Getenv("RUSTICL_ENABLE") != "" {
			// Mesa's rusticl (llvmpipe) takes four and a half minutes
			// to build this kernel's helper of hundreds of checked
			// statements, uncached (the whole test: 15 s without it),
			// more than CI can give. It gives Go's answers there since
			// such a function is written flat (emitc/flat.go: before,
			// llvmpipe ran the failure branches of checks nested past
			// 80 ifs, and reported a fault at an index in range);
			// TestManyChecks runs a smaller one on every device.
			t.Log("helper buffer: not run with RUSTICL_ENABLE set (minutes to build on llvmpipe; TestManyChecks covers its checks there)")
			continue
		}
		name := fmt.Sprintf("K%d", i)
		// No loops: Mesa's llvmpipe ends a work-item's loops after 65535
		// iterations in all, which a kernel of every form in loops of
		// its own reaches in a Sample (the device says so).
		fmt.Fprintf(&src, "\n// %s stores into %s.\n//\n%s", name, tg.name, stmtSource(tg, name, forms, stmtPlain, stmtContexts[1], stmtContexts[3]))
		fmt.Fprintf(&checks, "\tt.Run(%q, func(t *testing.T) { kerneltest.CheckKernel(t, %sKernel) })\n", name, name)
		switch tg.kernel {
		case stmtMap:
			fmt.Fprintf(&direct, "\tdirect(t, %[1]q, 2, []int{16, 16, 8}, func(i int, b [][]int32) { %[1]s(i, len(in), in, b[0], b[1], b[2], b[3]) },\n"+
				"\t\tfunc(dev int, b [][]int32) error { return Run%[1]s(target.Dev(dev), len(in), in, b[0], b[1], b[2], b[3]) })\n", name)
		case stmtHelper:
			fmt.Fprintf(&direct, "\tdirect(t, %[1]q, 2, nil, func(i int, b [][]int32) { %[1]s(i, len(in), in, b[0]) },\n"+
				"\t\tfunc(dev int, b [][]int32) error { return Run%[1]s(target.Dev(dev), len(in), in, b[0]) })\n", name)
		}
	}
	test := strings.NewReplacer("CHECKS", checks.String(), "DIRECT", direct.String()).Replace(stmtRunTest)
	dir := writePkg(t, map[string]string{"k.go": src.String(), "k_test.go": test})
	out, err := generate(ir.Options{Dir: dir})
	require.NoError(t, err, "the package:\n%s", src.String())
	goTestGenerated(t, dir, out)
}

// goTestGenerated writes the generated files out into the package in dir
// and runs its tests with go test, which must pass.
func goTestGenerated(t *testing.T, dir string, out ir.Output) {
	t.Helper()
	require.NoError(t, write(dir, out))
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go test of the generated package:\n%s", msg)
}

// stmtRunTest is the test of TestStatementFormsRun's package: CHECKS
// calls kerneltest.CheckKernel, DIRECT direct.
const stmtRunTest = `package k

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/target"
)

func TestCheckKernel(t *testing.T) {
CHECKS}

var in = func() []int32 {
	in := make([]int32, 1000)
	for i := range in {
		in[i] = int32(uint32(i)*2654435761) >> (i % 23)
	}
	return in
}()

// direct compares kernel name's launcher on every device with its Go
// function called at every point: buffers of per elements per point,
// then buffers of the lengths fixed.
func direct(t *testing.T, name string, per int, fixed []int, call func(i int, b [][]int32), run func(dev int, b [][]int32) error) {
	bufs := func() [][]int32 {
		b := [][]int32{make([]int32, per*len(in))}
		for _, n := range fixed {
			b = append(b, make([]int32, n))
		}
		for _, s := range b {
			for j := range s {
				s[j] = int32(j*7 - 3)
			}
		}
		return b
	}
	want := bufs()
	for i := range in {
		call(i, want)
	}
	for _, dev := range kerneltest.Devices() {
		got := bufs()
		if err := run(dev, got); err != nil {
			t.Errorf("%s on %s: %v", name, target.Describe(dev), err)
			continue
		}
		for j := range want {
			if !slices.Equal(got[j], want[j]) {
				k := 0
				for k < len(want[j]) && got[j][k] == want[j][k] {
					k++
				}
				t.Errorf("%s on %s: buffer %d differs from the Go function's first at %d: %d, want %d", name, target.Describe(dev), j, k, got[j][k], want[j][k])
			}
		}
	}
}

func TestAgainstGo(t *testing.T) {
DIRECT}

var _ = fmt.Sprint
`

// acceptedForms are the forms the checker takes into tg.
func acceptedForms(tg stmtTarget) []string {
	var forms []string
	for _, f := range stmtForms {
		if stmtWant(tg, f) == "" {
			forms = append(forms, f)
		}
	}
	return forms
}

// generatedDeps is export data of the packages the generated Go files
// import, by import path, from go list -export in the gompt module
// (once).
var generatedDeps = sync.OnceValues(func() (map[string]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-export", "-json=ImportPath,Export",
		"github.com/gompt/gompt/device", "github.com/gompt/gompt/kernelrt", "github.com/gompt/gompt/target",
		"embed", "math", "sync/atomic", "unsafe")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list: %v\n%s", err, ee.Stderr)
		}
		return nil, err
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var l ir.Listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		exports[l.ImportPath] = l.Export
	}
	return exports, nil
})

// typeCheckGenerated type-checks the package in dir with the Go files of
// out (the generated ones) beside its own, against gompt's packages.
func typeCheckGenerated(t *testing.T, dir string, out ir.Output) {
	t.Helper()
	exports, err := generatedDeps()
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	srcs := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		srcs[n] = b
	}
	for n, b := range out {
		if strings.HasSuffix(n, ".go") && !strings.Contains(n, string(filepath.Separator)) {
			srcs[filepath.Join(dir, n)] = b
		}
	}
	var sorted []string
	for n := range srcs {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		f, err := parser.ParseFile(fset, n, srcs[n], parser.SkipObjectResolution)
		if !assert.NoError(t, err, "the generated Go parses") {
			t.Logf("%s:\n%s", filepath.Base(n), srcs[n])
			return
		}
		files = append(files, f)
	}
	var errs []string
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			file := exports[path]
			if file == "" {
				return nil, fmt.Errorf("no export data for %q", path)
			}
			return os.Open(file)
		}),
		Error: func(err error) { errs = append(errs, err.Error()) },
	}
	conf.Check("example.com/k", fset, files, nil)
	if !assert.Empty(t, errs, "the generated Go type-checks") {
		t.Logf("%s:\n%s", ir.GoFileName, out[ir.GoFileName])
	}
}
