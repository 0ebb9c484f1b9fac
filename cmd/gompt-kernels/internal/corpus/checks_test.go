package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels/kerneltest"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The run-time checks of generated kernels (device.Kernel.Faults): an
// index the generator cannot prove in range, or a divisor that may be 0,
// fails the launch with Go's own words, the kernel's name and the Go
// source line, on every device; the construct copies nothing back, and
// the program goes on.

// checkFault requires err to be the *device.KernelFault of kernel at pos
// whose message matches want (a regular expression after the position).
func checkFault(t *testing.T, err error, kernel, pos, want string, what string) {
	t.Helper()
	require.Error(t, err, what)
	var f *device.KernelFault
	require.True(t, errors.As(err, &f), "%s: %v is not a *device.KernelFault", what, err)
	assert.Regexp(t, "^kernel "+regexp.QuoteMeta(kernel)+" \\("+regexp.QuoteMeta(pos)+"\\): "+want+"$", err.Error(), what)
}

// posOf is the position ("checks.go:12") of the first line of function
// fn in checks.go that holds snippet.
func posOf(t *testing.T, fn, snippet string) string {
	t.Helper()
	src, err := os.ReadFile("checks.go")
	require.NoError(t, err)
	in := false
	for i, line := range strings.Split(string(src), "\n") {
		in = in || strings.HasPrefix(line, "func "+fn+"(")
		if in && strings.Contains(line, snippet) {
			return "checks.go:" + itoa(i+1)
		}
	}
	t.Fatalf("no line holding %q in func %s of checks.go", snippet, fn)
	return ""
}

func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// An index one past the end, a negative one and a huge one, each at one
// point of many, on every device: Go's message, with the index and the
// length, and the output slice as it was.
func TestGatherIndexOutOfRange(t *testing.T) {
	const n, m = 1000, 64
	src := make([]float32, m)
	for i := range src {
		src[i] = float32(i)
	}
	for _, bad := range []struct {
		idx  int
		want string
	}{
		{m, `index out of range \[64\] with length 64`},
		{-1, `index out of range \[-1\]`},
		{1 << 40, `index out of range \[1099511627776\] with length 64`},
		{math.MinInt64, `index out of range \[-9223372036854775808\]`},
	} {
		for _, dev := range devices() {
			what := target.Describe(dev) + ": index " + itoa(bad.idx)
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i % m
			}
			idx[n/2+1] = bad.idx
			dst := filled(n, -1)
			err := RunGather(target.Dev(dev), n, m, idx, src, dst)
			checkFault(t, err, "Gather", posOf(t, "Gather", "dst[i] = src[idx[i]]"), bad.want, what)
			if dev != target.InitialDevice {
				// The initial device runs the Go image on dst itself: as a
				// Go loop that panicked, it has written the points before
				// the bad one. An offload device copies nothing back.
				assert.Equal(t, filled(n, -1), dst, "%s: dst after the failed construct", what)
			}
			// The device goes on: the same kernel with good indices.
			idx[n/2+1] = 3
			require.NoError(t, RunGather(target.Dev(dev), n, m, idx, src, dst), "%s: the next launch", what)
			for i := range dst {
				require.Equal(t, src[idx[i]], dst[i], "%s: dst[%d] of the next launch", what, i)
			}
		}
	}
}

// A failed check inside a //gompt:func helper names the helper's line.
func TestScatterIndexOutOfRangeInHelper(t *testing.T) {
	const n, m = 300, 300
	for _, dev := range devices() {
		what := target.Describe(dev)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = n - 1 - i
		}
		idx[7] = m + 5
		dst := filled(m, 2)
		err := RunScatter(target.Dev(dev), n, m, idx, filled(n, 1), dst)
		checkFault(t, err, "Scatter", posOf(t, "put", "dst[j] = v"), `index out of range \[305\] with length 300`, what)
		if dev != target.InitialDevice {
			assert.Equal(t, filled(m, 2), dst, "%s: dst after the failed construct", what)
		}
	}
}

// An integer division by zero.
func TestQuotientDivideByZero(t *testing.T) {
	const n = 513
	a, b := make([]int32, n), make([]int32, n)
	for i := range a {
		a[i], b[i] = int32(i), int32(i%5+1)
	}
	b[n-1] = 0
	for _, dev := range devices() {
		what := target.Describe(dev)
		q := make([]int32, n)
		checkFault(t, RunQuotient(target.Dev(dev), n, a, b, q), "Quotient", posOf(t, "Quotient", "q[i] = a[i] / b[i]"), "integer divide by zero", what)
	}
	b[n-1] = -1
	for _, dev := range devices() {
		q := make([]int32, n)
		require.NoError(t, RunQuotient(target.Dev(dev), n, a, b, q), target.Describe(dev))
		for i := range q {
			require.Equal(t, a[i]/b[i], q[i], "%s: q[%d]", target.Describe(dev), i)
		}
	}
}

// A reduction with a bad index fails rather than returning a sum.
func TestGatherSumIndexOutOfRange(t *testing.T) {
	const n, m = 5000, 10
	src := filled(m, 1)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i % m
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		s, err := RunGatherSum(target.Dev(dev), n, m, idx, src)
		require.NoError(t, err, what)
		require.Equal(t, float32(n), s, what)
		for bad, want := range map[int]string{
			m:       `index out of range \[10\] with length 10`,
			-3:      `index out of range \[-3\]`,
			1 << 50: `index out of range \[1125899906842624\] with length 10`,
		} {
			idx[4321] = bad
			_, err = RunGatherSum(target.Dev(dev), n, m, idx, src)
			checkFault(t, err, "GatherSum", posOf(t, "GatherSum", "return src[idx[i]]"), want, what)
		}
		idx[4321] = 1
		s, err = RunGatherSum(target.Dev(dev), n, m, idx, src)
		require.NoError(t, err, what+": after the failures")
		require.Equal(t, float32(n), s, what+": after the failures")
	}
}

// A loop whose condition reads past the end stops at the first failed
// read: it neither hangs nor goes on reading zeros.
func TestSeekStopsAtTheFailedRead(t *testing.T) {
	const n, m = 64, 100
	src := make([]int32, m)
	for i := range src {
		src[i] = int32(i % 10) // a zero at every multiple of 10
	}
	src[0] = 1 // no zero before 10
	for i := 90; i < m; i++ {
		src[i] = 7 // and none from 90 to the end
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		pos := make([]int, n)
		require.NoError(t, RunSeek(target.Dev(dev), n, m, idx, src, pos), what)
		for i := range pos {
			require.Equal(t, (i+9)/10*10+map[bool]int{true: 10, false: 0}[i == 0], pos[i], "%s: pos[%d]", what, i)
		}
		idx[3] = 95
		err := RunSeek(target.Dev(dev), n, m, idx, src, pos)
		checkFault(t, err, "Seek", posOf(t, "Seek", "for src[j] != 0 {"), `index out of range \[100\] with length 100`, what)
	}
}

// check=off: no checks in the device code, no fault record, and the
// kernel still computes Gather's result.
func TestCheckOff(t *testing.T) {
	assert.Empty(t, GatherUncheckedKernel.Faults, "check=off declares no checks")
	assert.NotEmpty(t, GatherKernel.Faults, "Gather checks its src index")
	cl, err := os.ReadFile("gompt_GatherUnchecked.cl")
	require.NoError(t, err)
	// As built where loops do not end early (see device.FaultLoopLimit):
	// without the loop guard.
	if i, j := bytes.Index(cl, []byte("#ifdef GOMPT_LOOP_GUARD\n")), bytes.Index(cl, []byte("#else\n")); i >= 0 && j > i {
		cl = append(cl[:i:i], cl[j:]...)
	}
	assert.NotContains(t, string(cl), "gompt_fault", "check=off kernel's OpenCL C")
	assert.NotContains(t, string(cl), "gompt_ld", "check=off kernel's OpenCL C reads src directly")
	const n, m = 777, 50
	src := make([]float32, m)
	for i := range src {
		src[i] = float32(i * i)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = (i * 7) % m
	}
	for _, dev := range devices() {
		dst := make([]float32, n)
		require.NoError(t, RunGatherUnchecked(target.Dev(dev), n, m, idx, src, dst), target.Describe(dev))
		for i := range dst {
			require.Equal(t, src[idx[i]], dst[i], "%s: dst[%d]", target.Describe(dev), i)
		}
	}
}

// A nowait construct whose kernel fails a check: its task fails with the
// fault, and a construct that depends on it gets ErrDependence and runs
// nothing. The dependent names the task (DependOn): a depend clause on a
// slice orders it only after constructs still in flight when it begins,
// and on the initial device the first construct may already have ended
// then (the dependent then ran, and failed its own check: 1 run in 30).
func TestNowaitFaultFailsDependents(t *testing.T) {
	const n, m = 256, 16
	src := filled(m, 3)
	for _, dev := range devices() {
		what := target.Describe(dev)
		idx := make([]int, n)
		idx[n-1] = m
		dst := filled(n, -1)
		region := func(d target.Map) target.Region {
			return target.Region{
				Device: target.Dev(dev),
				Kernel: GatherKernel,
				Shape:  target.N(n),
				Maps:   []target.Map{target.To(idx), target.To(src), target.ToFrom(dst), d},
				Args:   []target.Arg{target.Int(n), target.Int(m), target.Slice(idx), target.Slice(src), target.Slice(dst)},
			}
		}
		first := target.TargetNowait(region(target.DependOut(dst)))
		second := target.TargetNowait(region(target.DependOn(first)))
		checkFault(t, first.Wait(), "Gather", posOf(t, "Gather", "dst[i] = src[idx[i]]"), `index out of range \[16\] with length 16`, what+": the failing construct")
		err := second.Wait()
		require.ErrorIs(t, err, target.ErrDependence, "%s: its dependent", what)
		if dev != target.InitialDevice {
			assert.Equal(t, filled(n, -1), dst, "%s: dst after both", what)
		}
		assert.True(t, strings.Contains(err.Error(), "index out of range"), "%s: the dependent's error names the cause: %v", what, err)
	}
}

// An atomic on an element outside its buffer fails the launch, and the
// counts are not copied back.
func TestAtomicCountIndexOutOfRange(t *testing.T) {
	const n, m = 4096, 16
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i % m
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		h := make([]uint32, m)
		require.NoError(t, RunAtomicCount(target.Dev(dev), n, m, idx, h), what)
		for b := range h {
			require.Equal(t, uint32(n/m), h[b], "%s: h[%d]", what, b)
		}
		idx[100] = m
		err := RunAtomicCount(target.Dev(dev), n, m, idx, h)
		checkFault(t, err, "AtomicCount", posOf(t, "AtomicCount", "atomic.AddUint32(&h[idx[i]], 1)"), `index out of range \[16\] with length 16`, what)
		if dev != target.InitialDevice {
			for b := range h {
				require.Equal(t, uint32(n/m), h[b], "%s: h[%d] after the failed construct", what, b)
			}
		}
		idx[100] = 100 % m
	}
}

var badIndexes = []struct {
	idx  func(length int) int
	want func(length int) string
}{
	{func(l int) int { return l }, func(l int) string { return `index out of range \[` + itoa(l) + `\] with length ` + itoa(l) }},
	{func(int) int { return -1 }, func(int) string { return `index out of range \[-1\]` }},
	{func(int) int { return 1 << 40 }, func(l int) string { return `index out of range \[1099511627776\] with length ` + itoa(l) }},
}

// A team kernel: a bad index into a buffer and into a team array, each
// one past the end, negative and huge, on every device; the team's
// threads still meet at the barrier (the device neither hangs nor fails
// otherwise), and the next launch is clean.
func TestTeamGatherIndexOutOfRange(t *testing.T) {
	const teams, m = 7, 100
	n := teams * 64
	src := make([]float32, m)
	for i := range src {
		src[i] = float32(i)
	}
	good := func() (idx, at []int) {
		idx, at = make([]int, n), make([]int, n)
		for i := range idx {
			idx[i], at[i] = (i*13)%m, 63-i%64
		}
		return idx, at
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		for _, bad := range badIndexes {
			idx, at := good()
			idx[3*64+5] = bad.idx(m)
			out := filled(n, -1)
			err := RunTeamGather(target.Dev(dev), teams, m, idx, at, src, out)
			checkFault(t, err, "TeamGather", posOf(t, "TeamGather", "buf[th] = src[idx[t*64+th]]"), bad.want(m), what+": into src")
			if dev != target.InitialDevice {
				assert.Equal(t, filled(n, -1), out, "%s: out after the failed construct", what)
			}
			idx, at = good()
			at[6*64+63] = bad.idx(64)
			err = RunTeamGather(target.Dev(dev), teams, m, idx, at, src, out)
			checkFault(t, err, "TeamGather", posOf(t, "TeamGather", "out[t*64+th] = buf[at[t*64+th]]"), bad.want(64), what+": into the team array")
		}
		idx, at := good()
		out := filled(n, -1)
		require.NoError(t, RunTeamGather(target.Dev(dev), teams, m, idx, at, src, out), what)
		for i := range out {
			require.Equal(t, src[idx[i/64*64+at[i]]], out[i], "%s: out[%d]", what, i)
		}
	}
}

// An array reduction whose bin index falls outside its array.
func TestBinsIndexOutOfRange(t *testing.T) {
	const n = 20000
	v := make([]int, n)
	for i := range v {
		v[i] = i % 16
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		h := make([]uint32, 16)
		require.NoError(t, RunBins(target.Dev(dev), n, v, h), what)
		for b := range h {
			require.Equal(t, uint32(n/16), h[b], "%s: h[%d]", what, b)
		}
		for _, bad := range badIndexes {
			v[n-7] = bad.idx(16)
			h := make([]uint32, 16)
			err := RunBins(target.Dev(dev), n, v, h)
			checkFault(t, err, "Bins", posOf(t, "Bins", "h[v[i]]++"), bad.want(16), what)
			if dev != target.InitialDevice {
				assert.Equal(t, make([]uint32, 16), h, "%s: h after the failed construct", what)
			}
			v[n-7] = (n - 7) % 16
		}
	}
}

// As TestBinsIndexOutOfRange, for a min: the failing point lowers nothing.
func TestBinMinIndexOutOfRange(t *testing.T) {
	const n = 20000
	v, w := make([]int, n), make([]float32, n)
	for i := range v {
		v[i], w[i] = i%16, float32(i)
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		lo := filled(16, 1e9)
		require.NoError(t, RunBinMin(target.Dev(dev), n, v, w, lo), what)
		for b := range lo {
			require.Equal(t, float32(b), lo[b], "%s: lo[%d]", what, b)
		}
		for _, bad := range badIndexes {
			v[n-7] = bad.idx(16)
			lo := filled(16, 1e9)
			err := RunBinMin(target.Dev(dev), n, v, w, lo)
			checkFault(t, err, "BinMin", posOf(t, "BinMin", "lo[v[i]] = min(w[i], lo[v[i]])"), bad.want(16), what)
			if dev != target.InitialDevice {
				assert.Equal(t, filled(16, 1e9), lo, "%s: lo after the failed construct", what)
			}
			v[n-7] = (n - 7) % 16
		}
	}
}

// Goroutines launching a checked kernel on one device at once, over
// disjoint parts of one shared output: the launches with a bad index
// fail with their own fault and leave their part as it was; the others,
// on the same device and the same queues' fault records, succeed with
// the right result. A fault is never reported to another construct.
func TestGatherFaultsStayWithTheirConstruct(t *testing.T) {
	const g, n, m, rounds = 8, 512, 64, 6
	src := make([]float32, m)
	for i := range src {
		src[i] = float32(i) + 0.5
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		dst := filled(g*n, -1)
		var wg sync.WaitGroup
		errs := make([]error, g*rounds)
		for w := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				part := dst[w*n : (w+1)*n]
				for r := range rounds {
					idx := make([]int, n)
					for i := range idx {
						idx[i] = (i + w + r) % m
					}
					if (w+r)%3 == 0 {
						idx[(w*37+r)%n] = m + w
					}
					errs[w*rounds+r] = RunGather(target.Dev(dev), n, m, idx, src, part)
				}
			}()
		}
		wg.Wait()
		for w := range g {
			last := -1          // the last round that succeeded wrote the part
			failedLast := false // a round after it failed: on the initial device, which writes the points before its panic (as Go does), the part is partly that round's
			for r := range rounds {
				err := errs[w*rounds+r]
				failedLast = (w+r)%3 == 0
				if (w+r)%3 == 0 {
					checkFault(t, err, "Gather", posOf(t, "Gather", "dst[i] = src[idx[i]]"),
						`index out of range \[`+itoa(m+w)+`\] with length 64`, fmt.Sprintf("%s: goroutine %d round %d", what, w, r))
					continue
				}
				require.NoError(t, err, "%s: goroutine %d round %d", what, w, r)
				last = r
			}
			if failedLast && dev == target.InitialDevice {
				continue
			}
			for i := range n {
				want := float32(-1)
				if last >= 0 {
					want = src[(i+w+last)%m]
				}
				require.Equal(t, want, dst[w*n+i], "%s: goroutine %d's part, element %d", what, w, i)
			}
		}
	}
}

// A reduction array shorter than its len(h)= is refused before anything
// runs, naming the argument, on every device; h stays as it was.
func TestReduceArrayTooShort(t *testing.T) {
	v := make([]uint8, 50)
	for i := range v {
		v[i] = uint8(i)
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		h, s := make([]uint32, 100), make([]int64, 16)
		err := RunHist256(target.Dev(dev), len(v), v, h, s)
		require.Error(t, err, what)
		assert.Contains(t, err.Error(), "kernel Hist256 argument 2 (h): slice of 100 uint32 elements, but the kernel needs 256", what)
		assert.Equal(t, make([]uint32, 100), h, "%s: h", what)
		assert.Equal(t, make([]int64, 16), s, "%s: s", what)
	}
}

// A fault in each form of Go image names the kernel's line, as OpenCL
// does: in lanes (a declaration and a definition that are leaves), in a
// team kernel (a definition run over the team's threads) and in a row
// split at its border (the border computed once per row). The images
// wrote these statements without their position, and named
// gompt_kernels.go.
func TestFaultPositionsInEachImageForm(t *testing.T) {
	const n, m = 3000, 50
	src := filled(m, 1)
	for _, dev := range devices() {
		what := target.Describe(dev)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i % (m - 4)
		}
		idx[n-7] = m
		err := RunLanesGather(target.Dev(dev), n, m, 4, idx, src, filled(n, 0))
		checkFault(t, err, "LanesGather", posOf(t, "LanesGather", "var acc = src[idx[i]]"), `index out of range \[50\] with length 50`, what+": lanes, a declaration")
		idx[n-7] = m - 2
		err = RunLanesGather(target.Dev(dev), n, m, 4, idx, src, filled(n, 0))
		checkFault(t, err, "LanesGather", posOf(t, "LanesGather", "v := src[idx[i]+p]"), `index out of range \[50\] with length 50`, what+": lanes, a definition")

		const teams = 5
		tidx := make([]int, teams*64)
		tidx[2*64+9] = -1
		err = RunTeamDefine(target.Dev(dev), teams, m, tidx, src, filled(teams*64, 0))
		checkFault(t, err, "TeamDefine", posOf(t, "TeamDefine", "v := src[idx[t*64+th]]"), `index out of range \[-1\]`, what+": team")

		const nx, ny = 40, 30
		err = RunSplitEdge(target.Dev(dev), nx, ny, 0, filled(nx*ny, 1), filled(nx*ny, 0))
		checkFault(t, err, "SplitEdge", posOf(t, "SplitEdge", "if y == 0 || x == 0 || x < nx/r {"), "integer divide by zero", what+": split")
		// One column: Go never divides (x == 0 everywhere), so nothing
		// may fault, and every point is copied.
		one := filled(ny, 0)
		require.NoError(t, RunSplitEdge(target.Dev(dev), 1, ny, 0, filled(ny, 1), one), what+": one column, r = 0")
		assert.Equal(t, filled(ny, 1), one, "%s: one column", what)
	}
}

// The kernels above give Go's answers where nothing faults.
func TestFaultFormsWithoutFaults(t *testing.T) {
	const n, m, k = 3000, 50, 4
	src := make([]float32, m)
	for i := range src {
		src[i] = float32(i)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = (i * 7) % (m - k)
	}
	want := filled(n, 0)
	for i := range want {
		LanesGather(i, n, m, k, idx, src, want)
	}
	const teams, nx, ny = 5, 40, 30
	tidx := make([]int, teams*64)
	for i := range tidx {
		tidx[i] = (i * 3) % m
	}
	in := make([]float32, nx*ny)
	for i := range in {
		in[i] = float32(i)
	}
	wantEdge := filled(nx*ny, 0)
	for y := range ny {
		for x := range nx {
			SplitEdge(x, y, nx, ny, 7, in, wantEdge)
		}
	}
	for _, dev := range devices() {
		what := target.Describe(dev)
		got := filled(n, 0)
		require.NoError(t, RunLanesGather(target.Dev(dev), n, m, k, idx, src, got), what)
		assert.Equal(t, want, got, "%s: LanesGather", what)
		out := filled(teams*64, 0)
		require.NoError(t, RunTeamDefine(target.Dev(dev), teams, m, tidx, src, out), what)
		for i := range out {
			require.Equal(t, src[tidx[i/64*64+63-i%64]], out[i], "%s: TeamDefine out[%d]", what, i)
		}
		edge := filled(nx*ny, 0)
		require.NoError(t, RunSplitEdge(target.Dev(dev), nx, ny, 7, in, edge), what)
		assert.Equal(t, wantEdge, edge, "%s: SplitEdge", what)
	}
}

// A row slice past the end of b fails RowShift (float32, so that rusticl's
// llvmpipe, without fp64, runs it too) at that slice on every device, with Go's message; on host:0 and the initial device the slice
// is in a loop jammed four turns at a time (the last turn's, taken before
// the first turn's updates), and the fault names the user's line.
func TestRowShiftViewOutOfRange(t *testing.T) {
	const m, n, nk = 3, 5, 8
	a, b := filled(m*nk, 0.5), filled(nk*n, 0.25)
	for _, dev := range devices() {
		what := target.Describe(dev)
		c := filled(m*n, 1)
		err := RunRowShift(target.Dev(dev), m, n, nk, 1, c, a, b)
		checkFault(t, err, "RowShift", posOf(t, "RowShift", "bk := b[k*n+shift : (k+1)*n+shift]"), `slice bounds out of range \[:41\] with capacity 40`, what)
		// In range, the kernel runs: every element gains the sum of its
		// row's weights times 0.25.
		c = filled(m*n, 1)
		require.NoError(t, RunRowShift(target.Dev(dev), m, n, nk, 0, c, a, b), "%s: shift 0", what)
		for i, v := range c {
			require.Equal(t, float32(1+nk*0.5*0.25), v, "%s: c[%d]", what, i)
		}
	}
}

// TriangleTo's loop to k (j <= k) keeps its check: k at the last column
// is in range, one past it fails the last row at the element.
func TestTriangleToOutOfRange(t *testing.T) {
	const n = 4
	for _, dev := range devices() {
		if _, _, refuses := kerneltest.Refuses(TriangleToKernel, dev); refuses {
			continue // no fp64 (TestAgainstGo checks the refusal)
		}
		what := target.Describe(dev)
		out := make([]float64, n*n)
		require.NoError(t, RunTriangleTo(target.Dev(dev), n, n-1, out), "%s: k at the last column", what)
		for i, v := range out {
			want := 0.0
			if i%n >= i/n {
				want = 1
			}
			require.Equal(t, want, v, "%s: out[%d]", what, i)
		}
		err := RunTriangleTo(target.Dev(dev), n, n, make([]float64, n*n))
		checkFault(t, err, "TriangleTo", posOf(t, "TriangleTo", "out[i*n+j] += 1"), `index out of range \[16\] with length 16`, what)
	}
}

// NearMax's loop to the largest int wraps (j <= MaxInt never ends): a's
// element is not proven, and point 2, whose j-c reaches 3, fails there on
// every device instead of reading past a's end (it did, with the bound
// taken as E+1 without asking whether E+1 fits an int).
func TestNearMaxWrapsToAnError(t *testing.T) {
	for _, dev := range devices() {
		if _, _, refuses := kerneltest.Refuses(NearMaxKernel, dev); refuses {
			continue
		}
		what := target.Describe(dev)
		big := []float64{1, 2, 3, 100, 200}
		out := make([]float64, 3)
		err := RunNearMax(target.Dev(dev), 3, big[:3], out)
		checkFault(t, err, "NearMax", posOf(t, "NearMax", "v := a[j-9223372036854775805]"), `index out of range \[3\] with length 3`, what)
		out = make([]float64, 2)
		require.NoError(t, RunNearMax(target.Dev(dev), 2, big[:2], out), "%s: two points, both in range", what)
		assert.Equal(t, []float64{1, 3}, out, "%s", what)
	}
}

// WrapBound's n-1 wraps for n the smallest int: its loop would run past
// a's end, which holds no element (Len n is negative). a[j+1] is proven
// for every other n, and the launch at MinInt is refused, on every
// device, naming the bound; OpenCL read the mapped array there, with n-1
// taken as an integer, before the kernel had Bounds.
func TestWrapBoundWrapsToAnError(t *testing.T) {
	for _, dev := range append(devices(), target.InitialDevice) {
		if _, _, refuses := kerneltest.Refuses(WrapBoundKernel, dev); refuses {
			continue
		}
		what := target.Describe(dev)
		a := []float64{1, 2, 3, 4, -1, 6}
		run := func(n int, out []float64) error {
			return target.Target(target.Region{Device: target.Dev(dev), Kernel: WrapBoundKernel, Shape: target.N(1),
				Maps: []target.Map{target.To(a), target.ToFrom(out)},
				Args: []target.Arg{target.Int(1), target.Int(n), target.Slice(a), target.Slice(out)}})
		}
		out := make([]float64, 1)
		require.NoError(t, run(6, out), what)
		assert.Equal(t, []float64{9}, out, "%s: 2+3+4, then a break", what)
		err := run(math.MinInt, out)
		require.Error(t, err, what)
		assert.Contains(t, err.Error(), "kernel WrapBound: bound n-1 leaves an int64 with these arguments", what)
		require.NoError(t, run(math.MinInt+1, out), "%s: n-1 is the smallest int: no turn", what)
		assert.Equal(t, []float64{0}, out, what)
	}
}

// UnsignedIndex's index and view bounds are uint64s: an index of 1<<63 or
// more is named unsigned, with the length, as Go names it, on every
// device (the fault record holds it as an int64, and OpenCL's message
// read -9223372036854775808 without the length).
func TestUnsignedIndexFault(t *testing.T) {
	const n, m = 4, 16
	pos := posOf(t, "UnsignedIndex", "out[i] = a[p[i]] + int32(len(v))")
	viewPos := posOf(t, "UnsignedIndex", "v := a[lo[i]:hi[i]]")
	for _, dev := range append(devices(), target.InitialDevice) {
		what := target.Describe(dev)
		run := func(p, lo, hi []uint64) error {
			return RunUnsignedIndex(target.Dev(dev), n, m, p, lo, hi, make([]int32, m), make([]int32, n))
		}
		zero, ok := []uint64{0, 0, 0, 0}, []uint64{2, 3, 4, 5}
		for _, c := range []struct {
			p      uint64
			want   string
			lo, hi []uint64
			at     string
		}{
			{1 << 63, `index out of range \[9223372036854775808\] with length 16`, zero, ok, pos},
			{math.MaxUint64, `index out of range \[18446744073709551615\] with length 16`, zero, ok, pos},
			{0, `slice bounds out of range \[:9223372036854775808\] with capacity 16`, zero, []uint64{2, 3, 1 << 63, 5}, viewPos},
			{0, `slice bounds out of range \[9223372036854775808:2\]`, []uint64{0, 0, 1 << 63, 0}, []uint64{2, 3, 2, 5}, viewPos},
		} {
			p := []uint64{0, 1, c.p, 3}
			checkFault(t, run(p, c.lo, c.hi), "UnsignedIndex", c.at, c.want, what)
		}
	}
}
