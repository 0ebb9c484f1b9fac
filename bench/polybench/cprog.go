package polybench

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CSource is c/polybench.c: the same loops in C with OpenMP.
//
//go:embed c/polybench.c
var CSource string

// Clang is the C compiler, and CFlags its flags: clang-19's OpenMP runtime
// is LLVM's libomp (Debian's libomp-19-dev).
const Clang = "clang-19"

var CFlags = []string{"-O3", "-march=native", "-ffp-contract=off", "-fopenmp"}

// BuildC compiles CSource into dir and returns the executable's path.
func BuildC(dir string) (string, error) {
	cc, err := exec.LookPath(Clang)
	if err != nil {
		return "", fmt.Errorf("%s not found (%v): install clang-19 and libomp-19-dev", Clang, err)
	}
	src := filepath.Join(dir, "polybench.c")
	if err := os.WriteFile(src, []byte(CSource), 0o644); err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "polybench-c")
	args := append(append([]string{}, CFlags...), "-o", exe, src, "-lm")
	out, err := exec.Command(cc, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", Clang, strings.Join(args, " "), err, out)
	}
	return exe, nil
}

// RunC runs the C program exe on benchmark name with parameters p and
// returns the time of its parallel regions and the hash of its outputs.
func RunC(exe, name string, p []int) (time.Duration, uint64, error) {
	args := []string{name}
	for _, v := range p {
		args = append(args, strconv.Itoa(v))
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %v", exe, strings.Join(args, " "), err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%s %s: unexpected output %q", exe, strings.Join(args, " "), out)
	}
	sec, err1 := strconv.ParseFloat(f[0], 64)
	h, err2 := strconv.ParseUint(f[1], 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%s %s: unexpected output %q", exe, strings.Join(args, " "), out)
	}
	return time.Duration(sec * float64(time.Second)), h, nil
}
