package kernels_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/require"
)

// buildOCLRun compiles testdata/oclrun.c, a small C program that runs one
// OpenCL C kernel through the installed OpenCL implementation, or skips the
// test with the reason when gcc or the OpenCL headers and loader are missing.
func buildOCLRun(t *testing.T, dir string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("gcc not found (%v): cannot build testdata/oclrun.c", err)
	}
	bin := filepath.Join(dir, "oclrun")
	if out, err := exec.Command(gcc, "-O1", "-o", bin, "testdata/oclrun.c", "-lOpenCL").CombinedOutput(); err != nil {
		t.Skipf("cannot build testdata/oclrun.c (OpenCL headers and libOpenCL needed; apt install ocl-icd-opencl-dev opencl-headers): %v\n%s", err, out)
	}
	return bin
}

// oclShape returns the NDRange dims, global and local sizes oclrun launches
// for s: the Sample's teams and threads where it sets them, and otherwise,
// unless cover, a grid smaller than the iteration space, so that the
// grid-stride loops run more than once. With cover the grid covers the
// space with work-items to spare (a ragged last group and one more), so
// that the kernels take their one-item-per-point path.
func oclShape(s device.Shape, cover bool) (dims int, global, local [3]uint64) {
	dims = s.Dims()
	for d := range 3 {
		global[d], local[d] = 1, 1
	}
	threads := s.Threads
	if threads == 0 {
		threads = 32
		if dims > 1 {
			threads = 16
		}
	}
	teams := s.Teams
	if teams == 0 {
		teams = min((s.Size[0]+threads-1)/threads, 5)
		if cover {
			teams = (s.Size[0]+threads-1)/threads + 1
		}
	}
	global[0], local[0] = uint64(teams*threads), uint64(threads)
	for d := 1; d < dims; d++ {
		local[d] = 4
		global[d] = 4 * uint64(min((s.Size[d]+3)/4, 3))
		if cover {
			global[d] = 4 * uint64((s.Size[d]+3)/4+1)
		}
	}
	return dims, global, local
}

// TestOpenCLImageMatchesGo runs each kernel's OpenCL C image, built with
// its Options, on the first OpenCL device (POCL's CPU device here) through
// testdata/oclrun.c, without the OpenCL plugin, and compares every buffer
// with the Go image's, on the kernel's Sample, once with a grid smaller
// than the iteration space (grid-stride loops) and once with one that
// covers it (one work-item per point; for Dot, teams of at most one
// element per thread). It skips when no OpenCL implementation is installed.
func TestOpenCLImageMatchesGo(t *testing.T) {
	dir := t.TempDir()
	bin := buildOCLRun(t, dir)
	for _, k := range kernels.All() {
		img, ok := k.Image("opencl-c")
		if !ok {
			continue
		}
		src := filepath.Join(dir, k.Name+".cl")
		require.NoError(t, os.WriteFile(src, []byte(img.Source), 0o644))
		for _, c := range []struct {
			n     int
			cover bool
		}{{1, false}, {5000, false}, {1 << 17, false}, {1, true}, {5000, true}, {1 << 17, true}, {77777, true}} {
			n := c.n
			s := k.Sample(n, 7)
			if c.cover && k == kernels.Dot {
				// As many teams as cover n with one element per thread.
				teams := (int(s.Args[0].Bits) + kernels.DotMaxThreads - 1) / kernels.DotMaxThreads
				s.Shape.Teams = teams
				s.Bufs[3] = make([]byte, 4*teams)
			}
			dims, global, local := oclShape(s.Shape, c.cover)
			job := binary.LittleEndian.AppendUint32(nil, uint32(dims))
			for _, v := range append(global[:], local[:]...) {
				job = binary.LittleEndian.AppendUint64(job, v)
			}
			job = binary.LittleEndian.AppendUint32(job, uint32(len(k.Params)))
			for i, p := range k.Params {
				if p.Kind == device.ParamBuffer {
					job = binary.LittleEndian.AppendUint32(job, 0)
					job = binary.LittleEndian.AppendUint64(job, uint64(len(s.Bufs[i])))
					job = append(job, s.Bufs[i]...)
				} else {
					job = binary.LittleEndian.AppendUint32(job, uint32(p.Kind.Size()))
					job = binary.LittleEndian.AppendUint64(job, s.Args[i].Bits)
				}
			}
			jobFile, outFile := filepath.Join(dir, "job"), filepath.Join(dir, "out")
			require.NoError(t, os.WriteFile(jobFile, job, 0o644))
			out, err := exec.Command(bin, src, img.Entry, jobFile, outFile, img.Options).CombinedOutput()
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 77 {
				t.Skipf("no OpenCL device: %s", out)
			}
			require.NoError(t, err, "%s: oclrun:\n%s", k.Name, out)
			got, err := os.ReadFile(outFile)
			require.NoError(t, err)
			teams := 3
			if s.Shape.Teams > 0 {
				teams = s.Shape.Teams
			}
			want := runHost(k, s, teams, s.Shape.Size)
			for i, p := range k.Params {
				if p.Kind != device.ParamBuffer {
					continue
				}
				size := len(s.Bufs[i])
				require.GreaterOrEqual(t, len(got), size, "%s: bytes oclrun returned, against what is left to compare", k.Name)
				what := fmt.Sprintf("%s n=%d OpenCL global %v local %v: %s", k.Name, n, global[:dims], local[:dims], p.Name)
				compare(t, what, got[:size], f32(want[i]), s.Tol)
				got = got[size:]
			}
		}
	}
}
