package polybench

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/gompt/gompt/kernelrt"
	"github.com/stretchr/testify/assert"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels/kerneltest"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := target.Shutdown(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "target.Shutdown:", err)
		code = 1
	}
	os.Exit(code)
}

var testSizes = []Size{Mini, Small}

// TestKernelsOnEveryDevice runs each kernel's generated Sample on every
// device present against its Go image (kerneltest.CheckKernel: bit for
// bit; a device without float64 must refuse it), at Samples of 1, 7 and
// 100 points: most of these kernels take an n x n matrix, which at
// CheckKernel's largest default (5000 points) is minutes of test, even
// with each Sample's buffers kept within kernelrt.SampleBytes
// (TestSamplesFit).
func TestKernelsOnEveryDevice(t *testing.T) {
	defer func(s []int) { kerneltest.Sizes = s }(kerneltest.Sizes)
	kerneltest.Sizes = []int{1, 7, 100}
	seen := map[*device.Kernel]bool{}
	for _, b := range All {
		for _, k := range b.Kernels {
			if seen[k] {
				continue
			}
			seen[k] = true
			t.Run(k.Name, func(t *testing.T) { kerneltest.CheckKernel(t, k) })
		}
	}
}

// TestAgainstReference runs every benchmark, MINI and SMALL, on every
// device present through its launchers, and compares the live-out arrays
// with the plain-Go reference's, bit for bit.
func TestAgainstReference(t *testing.T) {
	for _, b := range All {
		t.Run(b.Name, func(t *testing.T) {
			for _, s := range testSizes {
				ref := b.New(b.Args(s))
				ref.Ref()
				want := ref.Outputs()
				for _, d := range kerneltest.Devices() {
					what := fmt.Sprintf("%s %s on %s", b.Name, s, target.Describe(d))
					if refusing(b, d) {
						err := b.New(b.Args(s)).Run(d)
						require.ErrorIs(t, err, device.ErrUnsupported, "%s: the device lacks what a kernel needs, so it must refuse it", what)
						continue
					}
					in := b.New(b.Args(s))
					require.NoError(t, in.Run(d), what)
					sameBits(t, what, in.Outputs(), want)
				}
			}
		})
	}
}

// refusing says whether device d lacks what one of b's kernels needs
// (float64 on Mesa's rusticl).
func refusing(b *Bench, d int) bool {
	for _, k := range b.Kernels {
		if _, _, r := kerneltest.Refuses(k, d); r {
			return true
		}
	}
	return false
}

func sameBits(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for a := range want {
		require.Equal(t, len(want[a]), len(got[a]), what)
		for i := range want[a] {
			if math.Float64bits(got[a][i]) != math.Float64bits(want[a][i]) {
				t.Fatalf("%s: output %d element %d = %v (%#x), want %v (%#x), the Go reference's bits",
					what, a, i, got[a][i], math.Float64bits(got[a][i]), want[a][i], math.Float64bits(want[a][i]))
			}
		}
	}
	// The outputs must be real numbers, not a zero array that agrees by accident.
	var sum float64
	for _, o := range want {
		for _, v := range o {
			sum += math.Abs(v)
		}
	}
	require.False(t, sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0), "%s: the reference's outputs sum to %v", what, sum)
}

// needClang skips the test when clang-19 is missing, saying why, except
// with CI=true, where a missing clang-19 is a failure.
func needClang(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(Clang); err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "%s not found (%v); CI is set, so this is a failure: install clang-19 and libomp-19-dev", Clang, err)
		t.Skipf("%s not found (%v): the C side cannot be built; install clang-19 and libomp-19-dev", Clang, err)
	}
}

// TestCAgreesWithGo builds c/polybench.c as cmd/polybench does and checks,
// for every benchmark at MINI and SMALL, that the hash of its outputs is
// the Go reference's: the C keeps Go's order of operations everywhere
// (-ffp-contract=off), so its results are bit for bit the same.
func TestCAgreesWithGo(t *testing.T) {
	needClang(t)
	exe, err := BuildC(t.TempDir())
	require.NoError(t, err)
	for _, b := range All {
		for _, s := range testSizes {
			p := b.Args(s)
			_, h, err := RunC(exe, b.Name, p)
			require.NoError(t, err)
			ref := b.New(p)
			ref.Ref()
			require.Equal(t, Hash(ref.Outputs()), h, "%s %s: the C program's outputs differ from the Go reference's (hashes %016x, C %016x)", b.Name, s, Hash(ref.Outputs()), h)
		}
	}
}

// TestSizes checks the dataset table's shape: every benchmark has its
// parameters for each dataset, and they grow.
func TestSizes(t *testing.T) {
	for _, b := range All {
		for s := Mini; s <= Large; s++ {
			require.Len(t, b.Sizes[s], len(splitFields(b.Params)), "%s %s", b.Name, s)
			if s > Mini {
				for i := range b.Sizes[s] {
					require.Greater(t, b.Sizes[s][i], b.Sizes[s-1][i], "%s %s %d", b.Name, s, i)
				}
			}
		}
	}
	require.Len(t, All, 15)
}

func splitFields(s string) []string {
	var f []string
	start := -1
	for i, c := range s + " " {
		if c == ' ' {
			if start >= 0 {
				f = append(f, s[start:i])
			}
			start = -1
		} else if start < 0 {
			start = i
		}
	}
	return f
}

// A Sample's buffers fit kernelrt.SampleBytes at every size kerneltest
// runs: a kernel whose buffers grow faster than its points (Heat3D's
// n x n x n grid for n points, gesummv's n x n matrices) gets fewer
// points. Heat3D's Sample(1000) took 8 GB before, and a test run was
// killed for memory.
func TestSamplesFit(t *testing.T) {
	seen := map[*device.Kernel]bool{}
	for _, b := range All {
		for _, k := range b.Kernels {
			if seen[k] {
				continue
			}
			seen[k] = true
			for _, n := range kerneltest.Sizes {
				s := k.Sample(n, 1)
				var total int
				for _, buf := range s.Bufs {
					total += len(buf)
				}
				assert.LessOrEqual(t, total, kernelrt.SampleBytes, "%s: Sample(%d) makes %d bytes of buffers", k.Name, n, total)
				assert.Positive(t, s.Shape.Iterations(), "%s: Sample(%d) has points", k.Name, n)
			}
		}
	}
}
