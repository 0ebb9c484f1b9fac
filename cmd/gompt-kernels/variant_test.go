package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A user's kernel with a variant: the base's launchers (RunSum, its nowait
// form) pick the variant on a device that matches its device=, through
// SumVariant; the variant's own launchers compute its team count with the
// function arg(teams)= names. The generated package builds, and its own
// test runs both forms on every device, checking which kernel each device
// gets and the answer.
func TestUserVariant(t *testing.T) {
	const src = `package k

import "github.com/gompt/gompt/kernelrt"

// Sum adds pairs: out[i] = a[2i] + a[2i+1].
//
//gompt:kernel dims=n len(a)=2*n
func Sum(i int, n int, a, out []float32) { out[i] = a[2*i] + a[2*i+1] }

// SumTeams is the number of teams of SumTeam for n points.
func SumTeams(n int) int { return (n + 63) / 64 }

// SumTeam is Sum in teams of 64 threads, staging a through a team array.
//
//gompt:kernel team=64 dims=teams len(a)=2*n len(out)=n arg(teams)=SumTeams
//gompt:variant of=Sum device=opencl,cuda
func SumTeam(t, th int, teams int, n int, a, out []float32) {
	var s [128]float32
	if t*128+th < 2*n {
		s[th] = a[t*128+th]
	}
	if t*128+64+th < 2*n {
		s[64+th] = a[t*128+64+th]
	}
	kernelrt.Barrier()
	if t*64+th < n {
		out[t*64+th] = s[2*th] + s[2*th+1]
	}
}
`
	const test = `package k

import (
	"testing"

	"github.com/gompt/gompt/target"
)

func TestVariant(t *testing.T) {
	devs := []target.DeviceClause{target.Dev(target.InitialDevice)}
	for _, d := range target.Devices() {
		devs = append(devs, target.Dev(d.Num))
	}
	const n = 1000
	a := make([]float32, 2*n)
	for i := range a {
		a[i] = float32(i)
	}
	for _, dev := range devs {
		want := SumKernel
		if target.MatchDevice(dev, "opencl", "cuda") {
			want = SumTeamKernel
		}
		if got := SumVariant(dev); got != want {
			t.Errorf("%s: SumVariant = %s, want %s", target.Describe(dev.Num()), got.Name, want.Name)
		}
		out := make([]float32, n)
		if err := RunSum(dev, n, a, out); err != nil {
			t.Fatal(err)
		}
		out2 := make([]float32, n)
		if err := RunSumNowait(dev, n, a, out2, target.DependOut(out2)).Wait(); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if w := float32(4*i + 1); out[i] != w || out2[i] != w {
				t.Fatalf("%s: out[%d] = %v and %v, want %v", target.Describe(dev.Num()), i, out[i], out2[i], w)
			}
		}
	}
}
`
	t.Setenv("GOFLAGS", "-mod=mod") // kernelrt's own requirements, into the test module's go.mod
	dir := writePkg(t, map[string]string{"k.go": src})
	out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
	require.NoError(t, err)
	g := string(out[ir.GoFileName])
	for _, want := range []string{
		"func RunSum(dev gompttarget.DeviceClause, n int, a []float32, out []float32) error {\n\tif n <= 0 {\n\t\treturn nil\n\t}\n\tswitch SumVariant(dev) {\n\tcase SumTeamKernel:\n\t\treturn RunSumTeam(dev, n, a, out)\n\t}",
		"func RunSumNowait(dev gompttarget.DeviceClause, n int, a []float32, out []float32, deps ...gompttarget.Map) *gompttarget.Task {\n\tif n <= 0 {\n\t\treturn gompttarget.Go(func() error { return nil }, deps...)\n\t}\n\tswitch SumVariant(dev) {\n\tcase SumTeamKernel:\n\t\treturn RunSumTeamNowait(dev, n, a, out, deps...)\n\t}",
		"func SumVariant(dev gompttarget.DeviceClause) *gompttarget.Kernel {\n\tif gompttarget.MatchDevice(dev, \"opencl\", \"cuda\") {\n\t\treturn SumTeamKernel\n\t}\n\treturn SumKernel\n}",
		"func RunSumTeam(dev gompttarget.DeviceClause, n int, a []float32, out []float32) error {\n\tteams := SumTeams(n)\n",
	} {
		assert.Contains(t, g, want)
	}
	require.NoError(t, write(dir, out))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k_test.go"), []byte(test), 0o644))
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir, tidy.Env = dir, append(os.Environ(), "GOPROXY=off")
	if msg, err := tidy.CombinedOutput(); err != nil {
		t.Skipf("go mod tidy in the test module (offline): %v\n%s", err, msg)
	}
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go test of the generated package:\n%s", msg)
}

// What //gompt:variant and arg(PARAM)= refuse, each at its directive,
// saying what differs.
func TestVariantErrors(t *testing.T) {
	checkErrors(t, `package k

func Teams(n int) int { return n }
func Wrong(n int) float32 { return 0 }
func ByM(m int) int { return m }

//gompt:kernel dims=n
func Base(i int, n int, s float32, x []float32) { x[i] = s }

//gompt:kernel team=8 dims=teams arg(teams)=Teams
//gompt:variant of=Base device=opencl
func Good(t, th int, teams int, n int, s float32, x []float32) {}

//gompt:kernel dims=n
//gompt:variant of=Base device=host // want "its parameter 2 is s float64 where Base's is s float32"
func Type(i int, n int, s float64, x []float32) {}

//gompt:kernel dims=n
//gompt:variant of=Base device=cuda // want "its parameter extra int is not one of Base's; compute it with arg(extra)=FUNC"
func Extra(i int, n int, s float32, x []float32, extra int) {}

//gompt:kernel dims=n
//gompt:variant of=Base device=gpu // want "it lacks Base's parameter x []float32"
func Fewer(i int, n int, s float32) {}

//gompt:kernel dims=n reduce=+
//gompt:variant of=Base device=cpu // want "its launcher returns a float32 (reduce=+), Base's nothing"
func Reduces(i int, n int, s float32, x []float32) float32 { return 0 }

//gompt:kernel dims=n
//gompt:variant of=Base device=opencl // want "Good and Twice are both variants of Base for device=opencl"
func Twice(i int, n int, s float32, x []float32) {}

//gompt:kernel dims=n
//gompt:variant of=Nothing device=opencl // want "of=Nothing: Nothing is not a //gompt:kernel function of package k"
func NoBase(i int, n int) {}

//gompt:kernel dims=n
//gompt:variant of=Self device=opencl // want "a kernel is not a variant of itself"
func Self(i int, n int) {}

//gompt:kernel dims=n
//gompt:variant of=Good device=host // want "Good is itself a variant (of Base); name the base kernel"
func Chain(i int, n int, s float32, x []float32) {}

//gompt:kernel dims=n
//gompt:variant of=Base device=fpga // want "\"fpga\" is not a device selector; they are host, opencl, cuda, gpu, cpu, accelerator, initial"
func Fpga(i int, n int, s float32, x []float32) {}

//gompt:kernel dims=n
//gompt:variant of=Base // want "want of=BASE"
func NoDevice(i int, n int, s float32, x []float32) {}

//gompt:variant of=Base device=opencl // want "//gompt:variant on NotKernel, which is not marked //gompt:kernel"
func NotKernel(i int, n int) {}

//gompt:kernel dims=n arg(m)=Missing // want "arg(m)=Missing: Missing is not a function of package k"
func A1(i int, n int, m int) {}

//gompt:kernel dims=n arg(m)=Wrong // want "Wrong must return one int (the type of m), not float32"
func A2(i int, n int, m int) {}

//gompt:kernel dims=n arg(m)=ByM // want "ByM's parameter m is computed by arg() too"
func A3(i int, n int, m int) {}

//gompt:kernel dims=k arg(m)=Teams // want "Teams's parameter n names no parameter of A4"
func A4(i int, k int, m int) {}

//gompt:kernel dims=n arg(x)=Teams // want "\"x\" is not a scalar parameter of A5"
func A5(i int, n int, x []float32) {}

//gompt:kernel dims=n arg(m)=Base // want "Base is a kernel"
func A6(i int, n int, m int) {}

//gompt:kernel dims=n arg(i)=Teams // want "i is one of the point's indices"
func A7(i int, n int) {}
`)
}

// -h explains the nowait launchers, arg(p)= and //gompt:variant.
func TestUsageVariants(t *testing.T) {
	out, _ := exec.Command("go", "run", ".", "-h").CombinedOutput()
	for _, want := range []string{"//gompt:variant of=BASE device=SEL[,SEL...]", "arg(p)=FUNC", "arg(teams)=Tiles",
		"func RunDotNowait(dev target.DeviceClause, n int, x, y []float32, deps ...target.Map) *target.Result[float32]",
		"target.MatchDevice", "host, opencl, cuda", "gpu, cpu,\naccelerator", "BASEVariant(dev)"} {
		assert.Contains(t, string(out), want)
	}
}
