package main

import (
	"bytes"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/emitc"
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// modRoot is the gompt module's folder.
func modRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// writePkg writes a package of the given files into a new module in a
// temporary folder (requiring gompt, for the launchers), and returns its
// folder.
func writePkg(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	root := modRoot(t)
	gomod := "module example.com/k\n\ngo 1.26\n\nrequire github.com/gompt/gompt v0.0.0\n\nreplace github.com/gompt/gompt => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	for name, src := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	return dir
}

var (
	wantComment = regexp.MustCompile(`// want ((?:"(?:[^"\\]|\\.)*" ?)+)`)
	wantString  = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// checkErrors generates the package of src (file k.go) and checks that
// the errors are exactly those its // want "..." comments expect, each at
// its comment's line.
func checkErrors(t *testing.T, src string) {
	t.Helper()
	dir := writePkg(t, map[string]string{"k.go": src})
	_, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
	require.Error(t, err, "want errors")
	type want struct {
		line int
		text string
	}
	var wants []want
	for i, l := range strings.Split(src, "\n") {
		if m := wantComment.FindStringSubmatch(l); m != nil {
			for _, q := range wantString.FindAllString(m[1], -1) {
				text, err := strconv.Unquote(q)
				require.NoError(t, err, q)
				wants = append(wants, want{i + 1, text})
			}
		}
	}
	got := strings.Split(err.Error(), "\n")
	matched := make([]bool, len(got))
	for _, w := range wants {
		found := false
		for i, g := range got {
			if !matched[i] && strings.Contains(g, "k.go:"+strconv.Itoa(w.line)+":") && strings.Contains(g, w.text) {
				matched[i], found = true, true
				break
			}
		}
		assert.True(t, found, "no error at k.go:%d saying %q", w.line, w.text)
	}
	if t.Failed() {
		t.Logf("the errors:\n%s", err)
	}
	for i, g := range got {
		assert.True(t, matched[i], "unexpected error: %s", g)
	}
}

// Every construct outside the subset is an error naming it, at its
// position (file:line:col), with what to do instead.
func TestRejectedConstructs(t *testing.T) {
	checkErrors(t, `package k

import (
	"math"
	"strings"
)

var global = 3

type celsius float32

type pair struct{ a, b int }

func (p pair) sum() int { return p.a + p.b }

func plain(x int) int { return x }

//gompt:func
func helper(x int) int { return x + 1 }

//gompt:kernel dims=n
func Bad(i int, n int, x, y []float32, c []int64) {
	s := "text" // want "a string"
	_ = s
	m := map[int]int{} // want "a map literal (map[int]int) is not supported in a gompt kernel (maps are not in the kernel subset"
	_ = m
	sl := []float32{1, 2} // want "a slice literal ([]float32, an allocation)"
	_ = sl
	_ = pair{1, 2} // want "a struct literal (pair)"
	f := func() {} // want "a closure (function literal)"
	go helper(1) // want "a go statement (goroutine)"
	defer helper(2) // want "defer"
	panic("no") // want "panic"
	_ = make([]float32, 4) // want "make"
	_ = new(int) // want "new is not supported in a gompt kernel (an allocation; kernels allocate nothing)"
	var p pair // want "a local variable of type pair"
	_ = p.sum() // want "a method call"
	c[i] = int64(global) // want "package-level variable global"
	c[i] = int64(plain(i)) // want "a call of plain, which is not marked //gompt:func"
	_ = x[1:] // want "a slice expression (x[1:]) outside a view's declaration or a range"
	for range "text" { // want "range over a value of type untyped string"
	}
	w := x // want "slice x used as a value"
	x = y // want "assigning to slice parameter x"
	q := &n // want "taking an address (&)"
	_ = *q // want "a pointer dereference"
	println(1) // want "println"
	copy(x, y) // want "copy"
	_ = complex(1, 2) // want "complex"
	_ = strings.ToUpper // want "package-level variable strings.ToUpper"
	c[i] = int64(math.MaxInt8) + int64(len(w))
	goto done // want "goto"
done:
	switch i {
	case 0:
		fallthrough // want "fallthrough"
	default:
	}
	var t celsius // want "a local variable of type celsius"
	_ = t
	_ = f
	y[i] = float32(math.Gamma(1)) // want "math.Gamma"
	_ = append(c, 1) // want "append"
	c = append(c, 1) // want "append is not supported in a gompt kernel (it allocates: a kernel cannot grow a slice"
	y, c = x, append(c, 2) // want "assigning to slice parameter y" "append is not supported"
}

//gompt:kernel dims=n
func BadParams(i int, n int, p *int, m map[int]int, s string, t celsius, b []bool, q pair, a [4]int) { // want "parameter p of type *int" "parameter m of type map[int]int" "parameter s of type string" "parameter t of type celsius is not supported in a gompt kernel (use its underlying type float32)" "parameter b of type []bool" "parameter q of type pair" "parameter a of type [4]int"
}
`)
}

// Recursion, direct or through other helpers, is an error at each call
// that closes a cycle.
func TestRecursion(t *testing.T) {
	checkErrors(t, `package k

//gompt:func
func even(n int) bool {
	if n == 0 {
		return true
	}
	return odd(n - 1)
}

//gompt:func
func odd(n int) bool {
	if n == 0 {
		return false
	}
	return even(n - 1) // want "a recursive call of even (even -> odd -> even)"
}

//gompt:func
func fact(n int) int {
	if n <= 1 {
		return 1
	}
	return n * fact(n-1) // want "a recursive call of fact (fact -> fact)"
}

//gompt:kernel dims=n
func K(i int, n int, out []int) {
	if even(i) {
		out[i] = fact(i)
	}
}
`)
}

// A helper refused for its signature (two results, a string parameter)
// is reported at its declaration, once per thing refused there, and its
// call sites say nothing more: the helper is marked //gompt:func, so
// "not marked" would be false. A function marked both //gompt:kernel and
// //gompt:func is reported at its directive only, its callers too.
func TestRefusedHelperReportedAtItsDeclaration(t *testing.T) {
	checkErrors(t, `package k

//gompt:func
func split(x float32, s string) (float32, float32) { // want "parameter s of type string" "more than one result (split)"
	return x, x
}

//gompt:kernel dims=n
//gompt:func // want "both //gompt:kernel and //gompt:func"
func both(i int, n int) {}

//gompt:kernel dims=n
func K(i int, n int, x []float32) {
	a, b := split(x[i], "")
	x[i] = a + b
	x[i], _ = split(1, "")
	both(i, n)
}
`)
}

// Directives are checked: their keys, the names they give, the
// signature they need.
func TestDirectiveErrors(t *testing.T) {
	checkErrors(t, `package k

//gompt:kernel dims=n colour=red // want "unknown key \"colour\""
func A(i int, n int) {}

//gompt:kernel // want "no dims="
func B(i int, n int) {}

//gompt:kernel dims=x // want "dims=x: \"x\" is not an int parameter of C"
func C(i int, x float32) {}

//gompt:kernel dims=n
func D(i float32, n int) {} // want "its first 1 parameters must be the point's int indices"

//gompt:kernel dims=n reduce=+
func E(i int, n int) {} // want "has reduce=+ but does not return a number"

//gompt:kernel dims=n
func F(i int, n int) int { return i } // want "returns a value but has no reduce="

//gompt:kernel dims=n reduce=avg // want "reduce=avg: want reduce=+, reduce=*, reduce=min or reduce=max"
func G(i int, n int) float32 { return 0 }

//gompt:kernel dims=n len(x)=n*(n+1) // want "len(x)=n*(n+1): \"(n\" is not a term; a length is a sum or difference (+, -) of products (*)"
func H(i int, n int, x []float32) {}

//gompt:kernel dims=n len(x)=f*2 // want "len(x)=f*2: \"f\" is not a signed integer parameter of I"
func I(i int, n int, f float32, x []float32) {}

//gompt:kernel dims=n len(y)=n // want "len(y)=n: \"y\" is not a slice parameter of J"
func J(i int, n int, x []float32) {}

//gompt:kernel dims=n name=my-kernel // want "name=my-kernel: a kernel name is a C identifier"
func K(i int, n int) {}

//gompt:kernel dims=n var=1x // want "var=1x is not a Go identifier"
func L(i int, n int) {}

//gompt:kernel dims=n dims=n // want "dims given twice"
func M(i int, n int) {}

//gompt:kernel dims=i // want "dims=: i is one of the point's indices"
func N(i int, n int) {}

//gompt:kernel dims=n reduce=+
func O(i int, n int, partial []float32) float32 { return 0 } // want "a reduction's parameter cannot be named partial"

//gompt:kernel dims=n
func P[T any](i int, n int) {} // want "a generic function (P)"

//gompt:kernel dims=n
func Q(i int, n int, x ...int) {} // want "a variadic parameter"

//gompt:kernel dims=n reduce=+
func R(i int, n int) (v int) { return } // want "a named result"

//gompt:kernel dims=n reduce=+
func S(i int, n int) (int, int) { return 0, 0 } // want "more than one result"

//gompt:kernel dims=n
//gompt:func // want "marked both //gompt:kernel and //gompt:func"
func T(i int, n int) {}

type r struct{}

//gompt:kernel dims=n
func (r) U(i int, n int) {} // want "a method (U)"

//gompt:kernel dims=n reduce=min
func V(i int, n int) bool { return true } // want "does not return a number"

func W() {
	//gompt:kernel dims=n // want "must be in the doc comment of a top-level function"
}

//gompt:kernal dims=n // want "unknown directive //gompt:kernal"
func X(i int, n int) {}

//gompt:kernel dims=n,n,n,n // want "names 4 extents"
func Y(i, j, k, l int, n int) {}
`)
}

// Names the generator declares may not clash with the package's or with
// each other's.
func TestNameClashes(t *testing.T) {
	checkErrors(t, `package k

var AKernel = 1

func RunENowait() {}

//gompt:kernel dims=n // want "generated name RunENowait is already declared"
func E(i int, n int) {}

//gompt:kernel dims=n // want "generated name AKernel is already declared"
func A(i int, n int) {}

//gompt:kernel dims=n var=Same
func B2(i int, n int) {}

//gompt:kernel dims=n var=Same // want "generated name Same is also kernel B2's" "generated name RunSame is also kernel B2's" "generated name RunSameNowait is also kernel B2's"
func B(i int, n int) {}

//gompt:kernel dims=n name=dup
func C(i int, n int) {}

//gompt:kernel dims=n name=Dup // want "both named Dup"
func D(i int, n int) {}

//gompt:kernel dims=n name=lower var=Lower
func f(i int, n int) {}

//gompt:kernel dims=n name=upper var=Upper // want "kernels f and F get the same generated functions (gomptHostF"
func F(i int, n int) {}
`)
}

// A kernel's own names may not take the generated code's prefix: the Go
// image declares gomptJ, gomptLo0 and labels gomptPoint0 beside them.
func TestReservedNames(t *testing.T) {
	checkErrors(t, `package k

//gompt:kernel dims=n
func G(i int, n int, gomptN int, out []int) { // want "parameter gomptN: names that start with gompt (but for gompt_) are the generated code's"
	gomptJ := i // want "local gomptJ: names that start with gompt (but for gompt_) are the generated code's"
gomptPoint0: // want "label gomptPoint0: names that start with gompt"
	for j := 0; j < n; j++ {
		if j > i {
			break gomptPoint0
		}
		out[i] = gomptJ + gomptN + j
	}
}
`)
}

// A kernel's variable may not take the name of a type the Go image
// converts with, nor unsafe's: float32 := 2 made the image's float32(3) a
// call of an int, and the generated file did not build.
func TestGoTypeNamesRefused(t *testing.T) {
	checkErrors(t, `package k

//gompt:kernel dims=n
func K(i int, n int, a []float32, out []float32) {
	float32 := 2 // want "variable float32: float32 is a type the generated Go image converts with (float32(x)); name the variable otherwise"
	out[i] = a[i] / 3
	_ = float32
}

//gompt:kernel dims=n reduce=+
func R(i int, n int, int64 int, h []int64) int { // want "variable int64: int64 is a type the generated Go image converts with"
	unsafe := h[i] // want "variable unsafe: unsafe is the package the generated Go image reaches memory through"
	return int(unsafe) + int64
}
`)
}

// A package whose only kernel reaches its elements through the lanes
// function's rows builds: the file imported unsafe and used it nowhere.
func TestGeneratedFileBuildsWithUnusedUnsafe(t *testing.T) {
	dir := writePkg(t, map[string]string{"k.go": `package k

//gompt:kernel dims=n
func K(i int, n int, a []int64, out []int64) {
	var acc int64
	for k := 0; k < 4; k++ {
		acc += a[i] + int64(k)
	}
	out[i] = acc
}
`})
	out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
	require.NoError(t, err)
	require.NoError(t, write(dir, out))
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir, tidy.Env = dir, append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	if msg, err := tidy.CombinedOutput(); err != nil {
		t.Skipf("go mod tidy in the test module (offline): %v\n%s", err, msg)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go vet of the generated package:\n%s", msg)
}

// generateSrc generates a package of one file and returns its output.
func generateSrc(t *testing.T, src string, o ir.Options) ir.Output {
	t.Helper()
	dir := writePkg(t, map[string]string{"k.go": src})
	o.Dir = dir
	out, err := generate(o)
	require.NoError(t, err)
	return out
}

// A written-only slice maps from only where every path stores at the
// point's own linear index and the slice holds one element per point;
// otherwise tofrom, so that elements the kernel does not write keep their
// values.
func TestMapsByUse(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=n
func Own(i int, n int, a, b []float32, c []float32) { c[i] = a[i] + b[i]; b[i] *= 2 }

//gompt:kernel dims=nx,ny
func Own2(x, y int, nx, ny int, out []int32) {
	i := y*nx + x
	if x == 0 {
		out[i] = 1
		return
	}
	switch {
	case y == 0:
		out[x+nx*y] = 2
	default:
		out[nx*y+x] = 3
	}
}

//gompt:kernel dims=nx,ny,nz
func Own3(x, y, z int, nx, ny, nz int, out []int32) { out[(z*ny+y)*nx+x] = 1 }

//gompt:kernel dims=n
func Cond(i int, n int, out []float32) {
	if i > 2 {
		out[i] = 1
	}
}

//gompt:kernel dims=n
func Early(i int, n int, out []float32) {
	if i == 3 {
		return
	}
	out[i] = 1
}

//gompt:kernel dims=n
func Other(i int, n int, out []float32) { out[n-1-i] = 1 }

//gompt:kernel dims=n len(out)=2*n
func Longer(i int, n int, out []float32) { out[i] = 1 }

//gompt:kernel dims=n
func InLoop(i int, n int, out []float32) {
	for j := 0; j < 1; j++ {
		out[i] = 1
	}
}

//gompt:kernel dims=n
func BreakSwitch(i int, n int, out []float32) {
	switch {
	case i == 0:
		if n > 3 {
			break
		}
		out[i] = 1
	default:
		out[i] = 2
	}
}

//gompt:kernel dims=nx,ny
func Swapped(x, y int, nx, ny int, out []float32) { out[x*ny+y] = 1 }

//gompt:kernel dims=n
func Reassigned(i int, n int, out []float32) {
	i = i + 0
	out[i] = 1
}
`, ir.Options{Clang: "no-such-clang"})
	src := string(out[ir.GoFileName])
	for _, c := range []struct{ run, maps string }{
		{"RunOwn", "gompttarget.To(a), gompttarget.ToFrom(b), gompttarget.From(c)"},
		{"RunOwn2", "gompttarget.From(out)"},
		{"RunOwn3", "gompttarget.From(out)"},
		{"RunCond", "gompttarget.ToFrom(out)"},
		{"RunEarly", "gompttarget.ToFrom(out)"},
		{"RunOther", "gompttarget.ToFrom(out)"},
		{"RunLonger", "gompttarget.ToFrom(out)"},
		{"RunInLoop", "gompttarget.ToFrom(out)"},
		{"RunBreakSwitch", "gompttarget.ToFrom(out)"},
		{"RunSwapped", "gompttarget.ToFrom(out)"},
		{"RunReassigned", "gompttarget.ToFrom(out)"},
	} {
		i := strings.Index(src, "func "+c.run+"(")
		require.GreaterOrEqual(t, i, 0, "no %s", c.run)
		body := src[i:]
		body = body[:strings.Index(body, "\n}\n")]
		assert.Contains(t, body, "Maps: []gompttarget.Map{"+c.maps, "%s's maps", c.run)
	}
}

// The generator's output depends only on its input: two runs give the
// same bytes, the Go file is gofmt'ed and parses, and the kernels come in
// name order.
func TestDeterministic(t *testing.T) {
	src := `package k

import "math"

//gompt:func
func sq(x float64) float64 { return x * x }

//gompt:kernel dims=n
func Zeta(i int, n int, x []float64) { x[i] = math.Sqrt(sq(x[i])) }

//gompt:kernel dims=n reduce=max
func Alpha(i int, n int, x []float64) float64 { return sq(x[i]) }
`
	a := generateSrc(t, src, ir.Options{Clang: "no-such-clang"})
	b := generateSrc(t, src, ir.Options{Clang: "no-such-clang"})
	require.Equal(t, len(a), len(b))
	for name := range a {
		assert.True(t, bytes.Equal(a[name], b[name]), "%s differs between runs", name)
	}
	g := string(a[ir.GoFileName])
	assert.True(t, strings.HasPrefix(g, ir.GeneratedHeader+"\n"), "the Go file starts with the generated-code header")
	_, err := parser.ParseFile(token.NewFileSet(), ir.GoFileName, a[ir.GoFileName], 0)
	require.NoError(t, err)
	assert.Less(t, strings.Index(g, "var AlphaKernel"), strings.Index(g, "var ZetaKernel"), "kernels in name order")
	for _, name := range []string{"gompt_Alpha.cl", "gompt_Zeta.cl"} {
		assert.True(t, strings.HasPrefix(string(a[name]), "// Code generated by gompt-kernels"), "%s's header", name)
	}
}

// Without clang-19 or libclc the kernels get no PTX image, with a warning
// naming the Debian packages, and the rest is generated.
func TestNoToolchain(t *testing.T) {
	var warnings []string
	out := generateSrc(t, "package k\n\n//gompt:kernel dims=n\nfunc A(i int, n int, x []float32) { x[i] = 1 }\n",
		ir.Options{Clang: "no-such-clang", Warn: func(s string) { warnings = append(warnings, s) }})
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "no-such-clang not found")
	assert.Contains(t, warnings[0], "clang-19 and libclc-19")
	assert.NotContains(t, out, "gompt_A.ptx")
	assert.Contains(t, out, "gompt_A.cl")
	assert.NotContains(t, string(out[ir.GoFileName]), `Kind: "ptx"`)
	assert.Contains(t, string(out[ir.GoFileName]), `Kind: "opencl-c"`)
}

// Names: var= and name= set the variable and the kernel's name; the
// launcher is Run<Func>, run<Func> for an unexported function, and
// Run<Var> with var=.
func TestNames(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=n
func Heat(i int, n int) {}

//gompt:kernel dims=n
func cool(i int, n int) {}

//gompt:kernel dims=n var=Saxpy name=saxpy
func saxpy(i int, n int) {}

//gompt:kernel dims=n var=mine name=dot
func dot(i int, n int) {}
`, ir.Options{Clang: "no-such-clang"})
	src := string(out[ir.GoFileName])
	for _, want := range []string{
		"var HeatKernel = ", "func RunHeat(", `Name: "Heat"`, `Entry: "gompt_Heat"`,
		"var coolKernel = ", "func runCool(", `Name: "cool"`,
		"var Saxpy = ", "func RunSaxpy(", `Name: "saxpy"`, `Entry: "gompt_saxpy"`,
		"var mine = ", "func runMine(", `Name: "dot"`, `Entry: "gompt_dot"`,
	} {
		assert.Contains(t, src, want)
	}
	assert.Contains(t, string(out["gompt_dot.cl"]), "__kernel void gompt_dot(", "the OpenCL entry point is never an OpenCL built-in's name")
}

// -launchers writes the launchers into another package, which imports
// the kernels' package; the kernels' file then does not import target.
func TestLaunchersElsewhere(t *testing.T) {
	dir := writePkg(t, map[string]string{
		"k.go":            "package k\n\n//gompt:kernel dims=n var=Fill\nfunc fill(i int, n int, v float32, x []float32) { x[i] = v }\n",
		"run/doc.go":      "// Package run has the launchers.\npackage run\n",
		"run/use_test.go": "package run\n",
	})
	out, err := generate(ir.Options{Dir: dir, Launchers: "run", Clang: "no-such-clang"})
	require.NoError(t, err)
	assert.NotContains(t, string(out[ir.GoFileName]), "target")
	l := string(out[filepath.Join("run", ir.LauncherFileName)])
	assert.Contains(t, l, "package run")
	assert.Contains(t, l, `gomptkernels "example.com/k"`)
	assert.Contains(t, l, "func RunFill(dev gompttarget.DeviceClause, n int, v float32, x []float32) error")
	assert.Contains(t, l, "Kernel: gomptkernels.Fill")
	require.NoError(t, write(dir, out))
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir, tidy.Env = dir, append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	if msg, err := tidy.CombinedOutput(); err != nil {
		t.Skipf("go mod tidy in the test module (offline): %v\n%s", err, msg)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go vet of the generated packages:\n%s", msg)

	dir = writePkg(t, map[string]string{"k.go": "package k\n\n//gompt:kernel dims=n\nfunc fill(i int, n int) {}\n"})
	_, err = generate(ir.Options{Dir: dir, Launchers: "run", Clang: "no-such-clang"})
	require.ErrorContains(t, err, "needs an exported kernel variable")
}

// The usage text explains the directive and the subset.
func TestUsage(t *testing.T) {
	cmd := exec.Command("go", "run", ".", "-h")
	out, _ := cmd.CombinedOutput()
	for _, want := range []string{"//gompt:kernel dims=nx[,ny[,nz]]", "reduce=", "len(buf)=", "//gompt:func", "The subset of Go",
		"Sqrt", "Exp", "from when the generator proves", "-launchers", "MinInt%-1 == 0", "device.Kernel.Needs"} {
		assert.Contains(t, string(out), want)
	}
}

// A package without kernels, or a folder that is not a package, is an
// error that says so.
func TestNothingToGenerate(t *testing.T) {
	dir := writePkg(t, map[string]string{"k.go": "package k\n\nfunc F() {}\n"})
	_, err := generate(ir.Options{Dir: dir})
	require.ErrorContains(t, err, "no //gompt:kernel function in package k")
	_, err = generate(ir.Options{Dir: t.TempDir()})
	require.Error(t, err)
}

// The prover drops a device's bounds test only for indexes it proves in
// range: each kernel here indexes buffer b (or a view v of it) once; its name says whether
// the index must be proven (P) or must not (N, an index that can fall
// outside, or that the prover cannot follow). N34's bound wraps: j <=
// big-2+i is j <= MaxInt at point 2 (the loop never ends: j wraps to
// MinInt). P24 to P26's bounds, n-1 and n-2, wrap for an int parameter n
// near MinInt: they are proven because the kernel's Bounds make the
// runtime refuse such a launch (bounds, below). N38's view b[0:i*m] is
// empty where i*m wraps to 0, and P27's b[0:m*k] is proven only with m*k
// among its Bounds. N39's len(c) is max(n-m, 0), not n-m: its loop runs
// to m where n-m is negative. N40's digit j+2^62 with j below 2^62+10
// overflowed the prover's own int64 arithmetic. P28 and P29 bound a loop
// by len(b) alone, which serves whatever the sign of b's Len. N41's and
// N42's loop variable is rewritten by a for j = range inside the loop.
func TestProvenIndexes(t *testing.T) {
	src := `package k

const big = 0x7fffffffffffffff

//gompt:kernel dims=n
func P1(i int, n int, b []float32) { b[i] = 1 }

//gompt:kernel dims=nx,ny
func P2(x, y int, nx, ny int, b []float32) { b[x+nx*y] = 1 }

//gompt:kernel dims=nx,ny,nz
func P3(x, y, z int, nx, ny, nz int, b []float32) { b[(z*ny+y)*nx+x] = 1 }

//gompt:kernel dims=nx,ny
func P4(x, y int, nx, ny int, b []float32) {
	i := y*nx + x
	if x == 0 || y == 0 || x == nx-1 || y == ny-1 {
		return
	}
	b[i-1] = b[i+nx] + b[i-nx] + b[i+1]
}

//gompt:kernel dims=nx,ny
func P5(x, y int, nx, ny int, b []float32) {
	if x > 0 && y < ny-1 {
		b[(y+1)*nx+x-1] = 1
	}
}

//gompt:kernel dims=n,m len(b)=m*k
func P6(j, i int, m, n, k int, b []float32) {
	for p := 0; p < k; p++ {
		b[i*k+p] = 1
	}
	for p := range k {
		b[p+k*i] = 2
	}
}

//gompt:kernel dims=n len(b)=3*n
func P7(i int, n int, b []float32) { b[3*i+2] = 1 }

//gompt:kernel dims=n
func P8(i int, n int, b []float32) {
	if i != 0 {
		b[i-1] = 1
	}
}

//gompt:kernel dims=nx,ny
func P9(x, y int, nx, ny int, b []float32) { b[x*ny+y] = 1 }

//gompt:kernel dims=n
func P10(i int, n int, b []float32) {
	for j := range 5 {
		if i+j >= n {
			continue
		}
		b[i] = float32(j)
	}
}

//gompt:kernel dims=n
func N1(i int, n int, b []float32) { b[i+1] = 1 }

//gompt:kernel dims=n
func N2(i int, n int, b []float32) { b[i-1] = 1 }

//gompt:kernel dims=n len(b)=k
func N3(i int, n, k int, b []float32) { b[i] = 1 }

//gompt:kernel dims=n len(b)=2*n
func N4(i int, n int, b []float32) { b[2*i+2] = 1 }

//gompt:kernel dims=nx,ny
func N5(x, y int, nx, ny int, b []float32) { b[x*nx+y] = 1 }

//gompt:kernel dims=n
func N6(i int, n int, b []float32) {
	if i == 1 {
		return
	}
	b[i-1] = 1
}

//gompt:kernel dims=n
func N7(i int, n int, b []float32) {
	if i > 0 || n > 5 {
		b[i-1] = 1
	}
}

//gompt:kernel dims=n len(b)=k
func N8(i int, n, k int, b []float32) {
	for p := 0; p < k; p++ {
		p++
		b[p] = 1
	}
}

//gompt:kernel dims=n len(b)=k
func N9(i int, n, k int, b []float32) {
	for p := 0; p <= k; p++ {
		b[p] = 1
	}
}

//gompt:kernel dims=n
func N10(i int, n int, b []float32) {
	i = i + 1
	b[i] = 1
}

//gompt:kernel dims=n
func N11(i int, n int, b []float32) {
	n = n + 5
	b[i] = 1
}

//gompt:kernel dims=n
func N12(i int, n int, b []float32) {
	if i > 0 {
		i := 0
		b[i-1] = 1
	}
}

//gompt:kernel dims=n
func N13(i int, n int, b []float32) { b[i+big+big+3] = 1 }

//gompt:kernel dims=n
func N14(i int, n int, b []float32) { b[i-big-big-2+big] = 1 }

//gompt:kernel dims=n
func N15(i int, n int, b []float32) {
	j := int32(i)
	b[j+1] = 1
}

//gompt:kernel dims=n len(b)=k
func N16(i int, n, k int, b []float32) {
	for p := 0; p < n; p++ {
		b[p] = 1
	}
}

//gompt:kernel dims=n len(b)=256
func P11(i int, n int, x uint8, b []float32) { b[x] = 1 }

//gompt:kernel dims=n len(b)=64
func P12(i int, n int, b []float32) { b[i&63] = 1 }

//gompt:kernel dims=n len(b)=16
func P13(i int, n int, b []float32) {
	c := uint32(i) % 16
	b[c] = 1
}

//gompt:kernel dims=n len(b)=65536
func P14(i int, n int, x uint16, b []float32) { b[int(x)] = 1 }

//gompt:kernel dims=n len(b)=256
func P15(i int, n int, x uint8, b []float32) { b[int32(uint16(x))&(int32(i)|1<<20)] = 1 }

//gompt:kernel dims=n len(b)=255
func N18(i int, n int, x uint8, b []float32) { b[x] = 1 }

//gompt:kernel dims=n len(b)=16
func N19(i int, n int, b []float32) { b[i%16] = 1 }

//gompt:kernel dims=n len(b)=64
func N20(i int, n int, b []float32) { b[i&64] = 1 }

//gompt:kernel dims=n len(b)=256
func N21(i int, n int, b []float32) { b[int8(i)] = 1 }

//gompt:kernel dims=n len(b)=128
func N22(i int, n int, b []float32) { b[uint8(i)] = 1 }

//gompt:kernel dims=n len(b)=16
func N23(i int, n int, b []float32) {
	c := i & 15
	c += 16
	b[c] = 1
}

//gompt:kernel dims=n len(b)=n+1
func P16(i int, n int, b []float32) { b[i+1] = b[i] }

//gompt:kernel dims=n len(b)=2*n+3
func P17(i int, n int, b []float32) { b[2*i+3] = 1 }

//gompt:kernel dims=n len(b)=n+1
func P18(i int, n int, b []float32) { b[0] = 1 }

//gompt:kernel dims=n len(b)=n+1
func N24(i int, n int, b []float32) { b[i+2] = 1 }

//gompt:kernel dims=n len(b)=n-1
func N25(i int, n int, b []float32) { b[i] = 1 }

//gompt:kernel dims=n len(b)=n+k+1
func N26(i int, n, k int, b []float32) { b[i] = 1 }

//gompt:kernel dims=n len(b)=1-n
func N27(i int, n int, b []float32) { b[0] = 1 }

//gompt:kernel dims=n len(b)=n*n
func P19(i int, n int, b []float32) {
	if i < 1 || i >= n-1 {
		return
	}
	for j := 1; j < n-1; j++ {
		c := i*n + j
		b[c] = b[c-1] + b[c+1] + b[c-n] + b[c+n]
	}
}

//gompt:kernel dims=n len(b)=n*n*n
func P20(i int, n int, b []float32) {
	if i < 1 || i >= n-1 {
		return
	}
	for j := 1; j < n-1; j++ {
		for k := 2; k < n; k++ {
			c := (i*n+j)*n + k
			b[c-2] = b[c+n*n-1] + b[c-n*n-2] + b[c+n] + b[c-n]
		}
	}
}

//gompt:kernel dims=n len(b)=n*n
func P21(i int, n int, b []float32) {
	for j := i; j < n; j++ {
		for k := i + 1; k < n; k++ {
			b[j*n+k-1] = b[k*n+i]
		}
	}
}

//gompt:kernel dims=n len(b)=n*n
func N32(i int, n int, b []float32) {
	for j := i + 2; j < n+1; j++ {
		b[i*n+j-2] = 1
	}
}

//gompt:kernel dims=n len(b)=n*n
func N33(i int, n int, b []float32) {
	for j := i - 1; j < n; j++ {
		b[i*n+j] = 1
	}
}

//gompt:kernel dims=n len(b)=n*n
func N28(i int, n int, b []float32) {
	for j := 1; j < n; j++ {
		b[i*n+j+1] = 1
	}
}

//gompt:kernel dims=n len(b)=n*n
func N29(i int, n int, b []float32) {
	for j := 0; j < n; j++ {
		b[i*n+j-1] = 1
	}
}

//gompt:kernel dims=n len(b)=n*n
func N30(i int, n int, b []float32) {
	for j := 1; j < n+1; j++ {
		b[i*n+j] = 1
	}
}

//gompt:kernel dims=n len(b)=n*n
func N31(i int, n int, b []float32) {
	if i >= n-1 {
		return
	}
	for j := 1; j < n-1; j++ {
		b[(i+2)*n+j] = 1
	}
}

//gompt:kernel dims=n len(b)=n
func N34(i int, n int, b []float32) {
	for j := big - 2; j <= big-2+i; j++ {
		b[j-(big-2)] = 1
	}
}

//gompt:kernel dims=m len(b)=n
func P24(i int, m, n int, b []float32) {
	for j := 0; j < n-1; j++ {
		b[j+1] = 1
	}
}

//gompt:kernel dims=m len(b)=m*n
func P25(i int, m, n int, b []float32) {
	for j := range n - 1 {
		b[i*n+j] = 1
	}
}

//gompt:kernel dims=m len(b)=n
func P26(i int, m, n int, b []float32) {
	for j := 0; j <= n-2; j++ {
		b[j+1] = 1
	}
}

//gompt:kernel dims=n len(b)=n*n
func P22(i int, n int, b []float32) {
	for j := 0; j <= i; j++ {
		b[i*n+j] = 1
	}
}

//gompt:kernel dims=n len(b)=n
func P23(i int, n int, b []float32) {
	for j := range n - 1 {
		b[j+1] = 1
	}
}

//gompt:kernel dims=n
func N38(i int, n, m int, b []float32) {
	v := b[0 : i*m]
	for z := range i {
		for y := range m {
			v[y+m*z] = 1
			return
		}
	}
}

//gompt:kernel dims=n len(c)=n-m
func N39(i int, n, m int, b, c []float32) {
	for j := 0; j < len(c)+m; j++ {
		b[j] = 1
	}
}

//gompt:kernel dims=n len(b)=2
func N40(i int, n int, b []float32) {
	for j := 0; j < 4611686018427387914; j++ {
		if j == 4 {
			break
		}
		b[j+4611686018427387904] = 1
	}
}

//gompt:kernel dims=n
func P27(i int, n, m, k int, b []float32) {
	v := b[0 : m*k]
	for z := range k {
		for y := range m {
			v[y+m*z] = 1
			return
		}
	}
}

//gompt:kernel dims=n len(b)=k
func P28(i int, n, k int, b []float32) {
	for j := range b {
		b[j] = 1
	}
}

//gompt:kernel dims=n len(b)=k
func P29(i int, n, k int, b []float32) {
	for j := 0; j < len(b); j++ {
		b[j] = 1
	}
}

//gompt:kernel dims=n len(b)=4
func N41(i int, n int, b []float32) {
	for j := 0; j < 4; j++ {
		for j = range 100 {
		}
		b[j] = 1
	}
}

//gompt:kernel dims=n len(b)=4 len(idx)=1
func N42(i int, n int, idx []int, b []float32) {
	for j := 0; j < 4; j++ {
		for _, j = range idx {
		}
		b[j] = 1
	}
}

//gompt:kernel dims=n
func N17(i int, n int, b []float32) {
	switch {
	case i == 0:
	default:
		b[i-1] = 1
	}
}
`
	out := generateSrc(t, src, ir.Options{Clang: "no-such-clang"})
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "func ") {
			continue
		}
		name := strings.Fields(strings.TrimPrefix(line, "func "))[0]
		name = name[:strings.Index(name, "(")]
		cl := string(out["gompt_"+name+".cl"])
		require.NotEmpty(t, cl, name)
		body := cl[strings.Index(cl, "gompt_body_"+name):]
		guarded := strings.Contains(body, "gompt_ldc_float(b,") || strings.Contains(body, "gompt_stc_float(b,") ||
			strings.Contains(body, "gompt_stc_float(v,") // N38's and P27's view
		if name[0] == 'P' {
			assert.False(t, guarded, "%s: an index in range is tested on the device:\n%s", name, body)
		} else {
			assert.True(t, guarded, "%s: an index that may fall outside is not tested on the device:\n%s", name, body)
		}
	}
	goSrc := string(out[ir.GoFileName])
	bounds := func(name string) string {
		decl := goSrc[strings.Index(goSrc, "var "+name+"Kernel = "):]
		decl = decl[:strings.Index(decl, "\n}\n")]
		if m := regexp.MustCompile(`Bounds:\s+\[\]string\{(.*)\},`).FindStringSubmatch(decl); m != nil {
			return m[1]
		}
		return ""
	}
	for name, want := range map[string]string{
		"P24": `"n-1"`, "P25": `"n-1"`, "P26": `"n-1", "n-2"`, // j <= n-2: n-2 and n-2+1
		"P27": `"k*m"`, "P28": "", "P29": "",
		"P19": "", "P22": "", "N34": "", // n an extent, i a point's index: no wrap; big-2+i: not over the parameters
	} {
		assert.Equal(t, want, bounds(name), "%s's Bounds", name)
	}
}

// The OpenCL plugin checks a kernel's Params by name against its OpenCL C
// entry's arguments, so the generated Params are named as the entry's:
// a Go name OpenCL C cannot take (a keyword, a built-in, gompt_'s prefix,
// a letter outside ASCII) is the entry's in Params and in the Lens that
// name it, and the kernel's comment says which; a reduction's partial and
// a checked kernel's gompt_fault follow Params in the entry as in
// Kernel.DeviceParams.
func TestParamsNamedAsTheOpenCLEntry(t *testing.T) {
	out := generateSrc(t, `package k

//gompt:kernel dims=n len(kernel)=global*2
func Names(i int, n int, global int, min float32, kernel []float32, gompt_x []int32, ä []float32) {
	kernel[2*i] = min + ä[i] + float32(gompt_x[i])
}

//gompt:kernel dims=n reduce=+
func Sum(i int, n int, max []float32) float32 { return max[i] }
`, ir.Options{Clang: "no-such-clang"})
	src := string(out[ir.GoFileName])
	entryNames := func(entry string) []string {
		m := regexp.MustCompile(`__kernel void ` + entry + `\(([^)]*)\)`).FindStringSubmatch(string(out[entry+".cl"]))
		require.NotNil(t, m, "no entry %s in:\n%s", entry, out[entry+".cl"])
		var names []string
		// Less the loop guard's parameter, empty unless a driver needs it.
		args := strings.TrimSuffix(strings.TrimSpace(m[1]), " "+emitc.LoopParam)
		for _, a := range strings.Split(args, ",") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(a), "*"))
			names = append(names, strings.TrimPrefix(f[len(f)-1], "*"))
		}
		return names
	}
	params := func(varName string) (names, lens []string) {
		start := strings.Index(src, "var "+varName+" = &gomptdevice.Kernel{")
		require.GreaterOrEqual(t, start, 0, "no %s in:\n%s", varName, src)
		block := src[start:]
		block = block[strings.Index(block, "Params:"):strings.Index(block, "Images:")]
		for _, m := range regexp.MustCompile(`\{Name: "([^"]*)"[^}]*?(?:Len: "([^"]*)")?\}`).FindAllStringSubmatch(block, -1) {
			names, lens = append(names, m[1]), append(lens, m[2])
		}
		return names, lens
	}

	names, lens := params("NamesKernel")
	assert.Equal(t, []string{"n", "global_", "min_", "kernel_", "gompt_x_", "_u00e4"}, names, "Names' Params")
	assert.Equal(t, []string{"", "", "", "global_*2", "n", "n"}, lens, "Names' Lens name the renamed scalar as Params do")
	assert.Equal(t, append(names, "gompt_fault"), entryNames("gompt_Names"), "Names' OpenCL C entry")
	assert.Contains(t, src, "// Its Params name the parameters as its OpenCL C does, where OpenCL C cannot take the Go name: global is global_, min is min_, kernel is kernel_, gompt_x is gompt_x_, ä is _u00e4.")

	names, _ = params("SumKernel")
	assert.Equal(t, []string{"n", "max_", "partial"}, names, "Sum's Params")
	assert.Equal(t, names, entryNames("gompt_Sum"), "Sum's OpenCL C entry")
}
