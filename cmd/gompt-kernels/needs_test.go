package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// needKinds are the device.NeedKind constants the generated code names.
var needKinds = map[string]device.NeedKind{
	"NeedFP64":         device.NeedFP64,
	"NeedInt64Atomics": device.NeedInt64Atomics,
	"NeedLocalMem":     device.NeedLocalMem,
	"NeedTeamSize":     device.NeedTeamSize,
}

// declaredNeeds reads the Needs of every device.Kernel a generated Go file
// declares, by kernel name (each listed, with no Needs too).
func declaredNeeds(t *testing.T, src []byte) map[string][]device.Need {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), ir.GoFileName, src, 0)
	require.NoError(t, err)
	str := func(e ast.Expr) string {
		lit, ok := e.(*ast.BasicLit)
		require.True(t, ok && lit.Kind == token.STRING, "%s: want a string literal", astString(e))
		s, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		return s
	}
	out := map[string][]device.Need{}
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok || astString(cl.Type) != "gomptdevice.Kernel" {
			return true
		}
		name := ""
		var needs []device.Need
		for _, e := range cl.Elts {
			kv := e.(*ast.KeyValueExpr)
			switch kv.Key.(*ast.Ident).Name {
			case "Name":
				name = str(kv.Value)
			case "Needs":
				for _, ne := range kv.Value.(*ast.CompositeLit).Elts {
					var nd device.Need
					for _, f := range ne.(*ast.CompositeLit).Elts {
						fkv := f.(*ast.KeyValueExpr)
						switch fkv.Key.(*ast.Ident).Name {
						case "Kind":
							kind, ok := needKinds[strings.TrimPrefix(astString(fkv.Value), "gomptdevice.")]
							require.True(t, ok, "Need Kind %s", astString(fkv.Value))
							nd.Kind = kind
						case "Amount":
							v, err := strconv.ParseInt(fkv.Value.(*ast.BasicLit).Value, 10, 64)
							require.NoError(t, err)
							nd.Amount = v
						case "Use":
							nd.Use = str(fkv.Value)
						case "Pos":
							nd.Pos = str(fkv.Value)
						default:
							t.Fatalf("Need field %s", fkv.Key.(*ast.Ident).Name)
						}
					}
					needs = append(needs, nd)
				}
			}
		}
		require.NotEmpty(t, name, "a gomptdevice.Kernel without a Name")
		out[name] = needs
		return false
	})
	return out
}

func astString(e ast.Expr) string { return ir.ExprString(e) }

func needOf(needs []device.Need, kind device.NeedKind) (device.Need, bool) {
	for _, n := range needs {
		if n.Kind == kind {
			return n, true
		}
	}
	return device.Need{}, false
}

var (
	cComment      = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
	cDouble       = regexp.MustCompile(`\bdouble\b|#pragma OPENCL EXTENSION cl_khr_fp64 : enable`)
	cInt64Atomics = regexp.MustCompile(`(?m)^#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable$`)
	cLocalArray   = regexp.MustCompile(`__local\s+(\w+)\s+(\w+)\[(\d+)\];`)
	cTeamSize     = regexp.MustCompile(`reqd_work_group_size\((\d+), 1, 1\)`)
	cEntry        = regexp.MustCompile(`(?m)^__kernel\b`)
)

// cSizes are the sizes of OpenCL C's scalar types.
var cSizes = map[string]int64{"char": 1, "uchar": 1, "bool": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "float": 4, "long": 8, "ulong": 8, "double": 8}

// clNeeds reads what OpenCL C source cl needs of a device: double,
// cl_khr_int64_base_atomics, the bytes of the __local arrays its entry
// declares (which must be the only ones), its reqd_work_group_size.
func clNeeds(t *testing.T, what, cl string) (fp64, atomics64 bool, local int64, team int64) {
	t.Helper()
	code := cComment.ReplaceAllString(cl, "")
	fp64 = cDouble.MatchString(code)
	atomics64 = cInt64Atomics.MatchString(code)
	entries := cEntry.FindAllStringIndex(code, -1)
	require.Len(t, entries, 1, "%s: one __kernel", what)
	for _, m := range cLocalArray.FindAllStringSubmatchIndex(code, -1) {
		typ, name, n := code[m[2]:m[3]], code[m[4]:m[5]], code[m[6]:m[7]]
		assert.Greater(t, m[0], entries[0][0], "%s: __local %s %s[%s] is declared outside the entry", what, typ, name, n)
		size, ok := cSizes[typ]
		require.True(t, ok, "%s: __local array %s of C type %s", what, name, typ)
		count, err := strconv.ParseInt(n, 10, 64)
		require.NoError(t, err)
		local += size * count
	}
	if m := cTeamSize.FindStringSubmatch(code); m != nil {
		team, _ = strconv.ParseInt(m[1], 10, 64)
		require.NotZero(t, team, "%s: %s", what, m[0])
	}
	return fp64, atomics64, local, team
}

// TestNeedsMatchTheOpenCL checks, for every kernel of every package that
// runs gompt-kernels (the library, the corpus, the examples), the Needs
// its generated device.Kernel declares against its generated OpenCL C:
// NeedFP64 where the C uses double, NeedInt64Atomics where it enables
// cl_khr_int64_base_atomics, NeedLocalMem of the bytes of the __local
// arrays its entry declares, NeedTeamSize of its reqd_work_group_size; each
// with a use and a position in the package's sources; and that the
// library needs neither float64 nor 64-bit atomics, so that every OpenCL
// device runs it.
func TestNeedsMatchTheOpenCL(t *testing.T) {
	root := modRoot(t)
	pkgs, dirs := generatorPackages(t, root)
	counts := map[device.NeedKind]int{}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		o := ir.Options{Dir: dir, Clang: "no-such-clang"} // the C is enough
		for i, a := range pkgs[dir] {
			if a == "-launchers" {
				o.Launchers = pkgs[dir][i+1]
			}
		}
		out, err := generate(o)
		require.NoError(t, err, rel)
		declared := declaredNeeds(t, out[ir.GoFileName])
		require.NotEmpty(t, declared, rel)
		files := sourceFiles(t, dir)
		for name, needs := range declared {
			what := rel + ": kernel " + name
			cl, ok := out["gompt_"+name+".cl"]
			require.True(t, ok, "%s: no OpenCL C", what)
			fp64, atomics64, local, team := clNeeds(t, what, string(cl))
			var kinds []device.NeedKind
			for _, n := range needs {
				kinds = append(kinds, n.Kind)
				counts[n.Kind]++
				assert.NotEmpty(t, n.Use, "%s: %v has no Use", what, n.Kind)
				assert.Regexp(t, `^\w+\.go:[1-9][0-9]*$`, n.Pos, "%s: %v's Pos", what, n.Kind)
				file, line, _ := strings.Cut(n.Pos, ":")
				lines, ok := files[file]
				if assert.True(t, ok, "%s: %v at %s: no such source file", what, n.Kind, n.Pos) {
					l, _ := strconv.Atoi(line)
					assert.LessOrEqual(t, l, lines, "%s: %v at %s: past the end of the file", what, n.Kind, n.Pos)
				}
			}
			for i := 1; i < len(kinds); i++ {
				assert.Less(t, kinds[i-1], kinds[i], "%s: Needs %v: want the order fp64, int64 atomics, local memory, team size, each once", what, kinds)
			}
			k := &device.Kernel{Name: name, Needs: needs, MaxThreads: int(team)}
			assert.NoError(t, k.Check(), what)

			n, has := needOf(needs, device.NeedFP64)
			assert.Equal(t, fp64, has, "%s: NeedFP64 %v (%+v), but its OpenCL C uses double: %v", what, has, n, fp64)
			n, has = needOf(needs, device.NeedInt64Atomics)
			assert.Equal(t, atomics64, has, "%s: NeedInt64Atomics %v (%+v), but its OpenCL C enables cl_khr_int64_base_atomics: %v", what, has, n, atomics64)
			n, _ = needOf(needs, device.NeedLocalMem)
			assert.Equal(t, local, n.Amount, "%s: NeedLocalMem %d bytes (%+v); its OpenCL C's entry declares %d bytes of __local arrays", what, n.Amount, n, local)
			n, _ = needOf(needs, device.NeedTeamSize)
			assert.Equal(t, team, n.Amount, "%s: NeedTeamSize %d (%+v); its OpenCL C's reqd_work_group_size: %d", what, n.Amount, n, team)
			if rel == "kernels" {
				for _, kind := range []device.NeedKind{device.NeedFP64, device.NeedInt64Atomics} {
					n, has := needOf(needs, kind)
					assert.False(t, has, "%s: a library kernel needs %v (%s at %s); every OpenCL device must run the library", what, kind, n.Use, n.Pos)
				}
			}
		}
	}
	// The corpus has kernels of each kind of need, so that none of the
	// comparisons above is only ever made against its absence.
	for kind := range needKinds {
		assert.NotZero(t, counts[needKinds[kind]], "no kernel needs %s", kind)
	}
}

// sourceFiles are the Go files of the package in dir, with their number
// of lines.
func sourceFiles(t *testing.T, dir string) map[string]int {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	out := map[string]int{}
	for _, m := range matches {
		b, err := os.ReadFile(m)
		require.NoError(t, err)
		out[filepath.Base(m)] = strings.Count(string(b), "\n")
	}
	return out
}

// needsSrc is a package whose kernels each need something at a known
// line: a comment "// need KERNEL KIND AMOUNT USE" says that the line is
// the position of kernel KERNEL's Need of KIND.
const needsSrc = `package k

import (
	"math"
	"sync/atomic"

	"github.com/gompt/gompt/kernelrt"
)

// F32 computes in float32 only: float64 constants are folded, and
// math.Float32bits takes a float32.
//
//gompt:kernel dims=n
func F32(i int, n int, x []float32, b []uint32) {
	const half = 0.5
	const third float64 = 1.0 / 3
	x[i] = x[i]*half + float32(third)
	b[i] = math.Float32bits(x[i])
}

// InHelper's float64 is first in scale, which it calls before its own
// (scale is declared after it).
//
//gompt:kernel dims=n
func InHelper(i int, n int, x []float32) {
	x[i] = scale(x[i])
	y := float64(x[i]) // a later use of its own
	x[i] = float32(y)
}

//gompt:func
func scale(v float32) float32 {
	w := v * 2
	d := float64(w) // need InHelper NeedFP64 0 float64
	return float32(d)
}

// Local's first float64 is a local declared without a value.
//
//gompt:kernel dims=n
func Local(i int, n int, x []float32) {
	var acc float64 // need Local NeedFP64 0 float64
	acc += 2
	x[i] = float32(acc)
}

// Mathf64 calls math.Sqrt of a constant.
//
//gompt:kernel dims=n
func Mathf64(i int, n int, x []float32) {
	x[i] = float32(math.Sqrt(2)) // need Mathf64 NeedFP64 0 float64
}

// Result64 is a reduction of float64: its result type, its scratch.
//
//gompt:kernel dims=n reduce=+ // need Result64 NeedLocalMem 2048 2048 bytes of team-local memory (reduce=+'s scratch: 256 float64, one per thread)
func Result64(i int, n int, x []float32) float64 { // need Result64 NeedFP64 0 float64
	return 1
}

// Atomics: 32-bit atomics and a 64-bit Load need nothing; the first Add
// of a 64-bit element does.
//
//gompt:kernel dims=n len(h)=4 len(c)=4
func Atomics(i int, n int, h []uint32, c []uint64) {
	atomic.AddUint32(&h[i%4], 1)
	if atomic.LoadUint64(&c[i%4]) > 10 {
		return
	}
	if atomic.CompareAndSwapUint32(&h[0], 0, 1) {
		h[1] = 2
	}
	atomic.AddUint64(&c[i%4], 3) // need Atomics NeedInt64Atomics 0 atomic.AddUint64
}

// AtomicInHelper's 64-bit atomic is in a helper.
//
//gompt:kernel dims=n len(c)=4
func AtomicInHelper(i int, n int, c []int64) {
	bump(c, i%4)
}

//gompt:func
func bump(c []int64, j int) {
	atomic.CompareAndSwapInt64(&c[j], 0, 1) // need AtomicInHelper NeedInt64Atomics 0 atomic.CompareAndSwapInt64
}

// Bins: a 32-bit array reduction needs local memory only; the update of
// the 64-bit one needs 64-bit atomics too.
//
//gompt:kernel dims=n reduce(h)=+ reduce(s)=max len(h)=8 len(s)=4 // need Bins NeedLocalMem 64 64 bytes of team-local memory (the team's copies of reduce(h)=+, reduce(s)=max)
func Bins(i int, n int, h []uint32, s []uint64) {
	h[i%8]++
	s[i%4] = max(s[i%4], uint64(i)) // need Bins NeedInt64Atomics 0 an array reduction of uint64 (reduce(s)=max)
}

// Idle's 64-bit array reduction has no update: its copy is merged all
// the same.
//
//gompt:kernel dims=n reduce(s)=+ len(s)=2 // need Idle NeedInt64Atomics 0 an array reduction of int (reduce(s)=+) // need Idle NeedLocalMem 16 16 bytes of team-local memory (the team's copy of reduce(s)=+)
func Idle(i int, n int, s []int) {
}

// Team's arrays (int16 and float32) are its local memory.
//
//gompt:kernel team=32 dims=teams len(out)=teams*32 // need Team NeedTeamSize 32 teams of 32 threads (team=32)
func Team(t, th int, teams int, out []float32) {
	var a [32]int16 // need Team NeedLocalMem 200 200 bytes of team-local memory (team arrays a, b)
	var b [34]float32
	a[th] = int16(th)
	b[th] = float32(th)
	kernelrt.Barrier()
	out[t*32+th] = float32(a[31-th]) + b[31-th]
}
`

var needComment = regexp.MustCompile(`^(\w+) (\w+) (\d+) (.*\S)\s*$`)

// TestNeedsNameTheirFirstUse generates needsSrc and checks each kernel's
// Needs against the "// need" comments: their kinds, amounts and uses,
// and their positions: the line of the first use in the order the source
// runs (a helper's at its call of it), or the directive's.
func TestNeedsNameTheirFirstUse(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod") // it imports kernelrt
	out := generateSrc(t, needsSrc, ir.Options{Clang: "no-such-clang"})
	want := map[string][]device.Need{"F32": nil}
	for i, l := range strings.Split(needsSrc, "\n") {
		for _, c := range strings.Split(l, "// need ")[1:] {
			m := needComment.FindStringSubmatch(c)
			require.NotNil(t, m, "%q", c)
			kind, ok := needKinds[m[2]]
			require.True(t, ok, m[0])
			amount, err := strconv.ParseInt(m[3], 10, 64)
			require.NoError(t, err)
			want[m[1]] = append(want[m[1]], device.Need{Kind: kind, Amount: amount, Use: m[4], Pos: "k.go:" + strconv.Itoa(i+1)})
		}
	}
	for _, w := range want {
		sort.Slice(w, func(i, j int) bool { return w[i].Kind < w[j].Kind })
	}
	declared := declaredNeeds(t, out[ir.GoFileName])
	require.Len(t, declared, len(want), "kernels declared: %v", declared)
	for name, w := range want {
		got, ok := declared[name]
		if assert.True(t, ok, "kernel %s is not declared", name) {
			assert.Equal(t, w, got, "kernel %s's Needs", name)
		}
	}
}

// A kernel whose only float64 is a constant passed to a math function
// (sqrt(0x1p+01) in its C, no "double" written) still enables cl_khr_fp64:
// the pragma follows the plan's NeedFP64, not the word.
func TestFloat64LiteralEnablesFP64(t *testing.T) {
	out := generateSrc(t, `package k

import "math"

//gompt:kernel dims=n
func Root(i int, n int, out []float32) { out[i] = float32(math.Sqrt(2)) }
`, ir.Options{Clang: "no-such-clang"})
	cl := string(out["gompt_Root.cl"])
	assert.NotRegexp(t, `\bdouble\b`, cl, "the C writes no double (else this test checks nothing new)")
	assert.Contains(t, cl, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable", "Root computes sqrt in float64:\n%s", cl)
	assert.Contains(t, string(out[ir.GoFileName]), "gomptdevice.NeedFP64", "Root's Needs")
}
