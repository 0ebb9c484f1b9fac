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
// for s: the Sample's teams and threads where it sets them, and otherwise a
// grid smaller than the iteration space, so that the grid-stride loops run
// more than once.
func oclShape(s device.Shape) (dims int, global, local [3]uint64) {
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
	}
	global[0], local[0] = uint64(teams*threads), uint64(threads)
	for d := 1; d < dims; d++ {
		local[d] = 4
		global[d] = 4 * uint64(min((s.Size[d]+3)/4, 3))
	}
	return dims, global, local
}

// TestOpenCLImageMatchesGo runs each kernel's OpenCL C image on the first
// OpenCL device (POCL's CPU device here) through testdata/oclrun.c and
// compares every buffer with the Go image's, on the kernel's Sample. It skips
// when no OpenCL implementation is installed.
func TestOpenCLImageMatchesGo(t *testing.T) {
	dir := t.TempDir()
	bin := buildOCLRun(t, dir)
	for _, k := range kernels.All() {
		img, ok := k.Image(device.ImageOpenCL)
		if !ok {
			continue
		}
		src := filepath.Join(dir, k.Name+".cl")
		if err := os.WriteFile(src, []byte(img.Source), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 5000, 1 << 17} {
			s := k.Sample(n, 7)
			dims, global, local := oclShape(s.Shape)
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
			if err := os.WriteFile(jobFile, job, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, src, img.Entry, jobFile, outFile).CombinedOutput()
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 77 {
				t.Skipf("no OpenCL device: %s", out)
			}
			if err != nil {
				t.Fatalf("%s: oclrun: %v\n%s", k.Name, err, out)
			}
			got, err := os.ReadFile(outFile)
			if err != nil {
				t.Fatal(err)
			}
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
				if len(got) < size {
					t.Fatalf("%s: oclrun returned %d bytes, want at least %d more", k.Name, len(got), size)
				}
				what := fmt.Sprintf("%s n=%d OpenCL global %v local %v: %s", k.Name, n, global[:dims], local[:dims], p.Name)
				compare(t, what, got[:size], f32(want[i]), s.Tol)
				got = got[size:]
			}
		}
	}
}
