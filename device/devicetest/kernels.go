package devicetest

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
)

// sampleSizes are the problem sizes each kernel's Sample is run at.
var sampleSizes = []int{1, 257, 100_003}

// checkSample reports a kernel whose declaration is wrong (Kernel.Check),
// or a Sample that does not give one buffer and one argument per parameter
// (nil buffers and zero arguments where they do not apply), which the rest
// of the suite relies on, or that the runtime would refuse: a shape with
// more dimensions than the kernel's Dims, a buffer shorter than its
// parameter's Len.
func checkSample(k *device.Kernel, smp device.Sample) error {
	if err := k.Check(); err != nil {
		return err
	}
	if len(smp.Bufs) != len(k.Params) || len(smp.Args) != len(k.Params) {
		return fmt.Errorf("kernel %s: Sample has %d buffers and %d arguments; want one of each per parameter (%d: nil buffers for scalars, zero arguments for buffers)",
			k.Name, len(smp.Bufs), len(smp.Args), len(k.Params))
	}
	if err := smp.Shape.Check(); err != nil {
		return fmt.Errorf("kernel %s: Sample: %v", k.Name, err)
	}
	if dims := smp.Shape.Dims(); dims > k.IterationDims() {
		return fmt.Errorf("kernel %s: Sample shape %v uses %d dimensions; the kernel declares %d (Kernel.Dims)", k.Name, smp.Shape.Size, dims, k.IterationDims())
	}
	for i, p := range k.Params {
		if p.Kind != device.ParamBuffer {
			continue
		}
		need, err := k.NeedLen(i, smp.Shape, func(j int) uint64 { return smp.Args[j].Bits })
		if err != nil {
			return fmt.Errorf("kernel %s: Sample: parameter %s: %v", k.Name, p.Name, err)
		}
		if have := len(smp.Bufs[i]) / p.ElemSize(); have < need {
			return fmt.Errorf("kernel %s: Sample: buffer %s has %d elements; its Len %q needs %d", k.Name, p.Name, have, p.Len, need)
		}
	}
	return nil
}

func (s *suite) testKernels(t *testing.T) {
	t.Run("no image", func(t *testing.T) {
		k := &device.Kernel{Name: "devicetest_no_image", Params: []device.Param{{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
		_, err := s.dev.Load(k)
		wantCode(t, "Load of a kernel with no image", err, device.CodeInvalidBinary)
	})
	t.Run("needs", s.testNeeds)
	for _, k := range s.kernels {
		t.Run(k.Name, func(t *testing.T) {
			f, err := s.dev.Load(k)
			var ne *device.NeedError
			switch {
			case err == nil:
			case errors.As(err, &ne) && errors.Is(err, device.ErrUnsupported) && s.dev.Info().Caps.Lacks(ne.Need) != "":
				t.Skipf("Load(%s): %v", k.Name, err) // it needs what the device lacks
			case device.CodeOf(err) != device.CodeInvalidBinary:
				t.Fatalf("Load(%s): %v (code %v), want success, CodeInvalidBinary or a *device.NeedError for what Info.Caps lacks", k.Name, err, device.CodeOf(err))
			default:
				t.Skipf("Load(%s): %v", k.Name, err)
			}
			if f.Kernel() != k || f.Bytes() <= 0 {
				t.Errorf("Load(%s): Kernel() %p (want %p), Bytes() %d (want > 0)", k.Name, f.Kernel(), k, f.Bytes())
			}
			if _, ok := k.Image(f.Image()); !ok {
				t.Errorf("Load(%s) chose image %v, which the kernel does not have", k.Name, f.Image())
			}
			if f2, err := s.dev.Load(k); err != nil {
				t.Errorf("second Load(%s): %v", k.Name, err)
			} else if reflect.TypeOf(f).Comparable() && f2 != f {
				t.Errorf("second Load(%s) returned a new Function, want the cached one", k.Name)
			}
			if k.Sample == nil {
				return
			}
			if k.Host() == nil {
				t.Skipf("kernel %s has a Sample but no host image (device.ImageHost) to compare with", k.Name)
			}
			q := newQueue(t, s.dev)
			var last device.Sample
			for _, n := range sampleSizes {
				smp := k.Sample(n, int64(n))
				if err := checkSample(k, smp); err != nil {
					t.Fatal(err)
				}
				if mt := s.dev.Info().MaxTeams; mt > 0 && smp.Shape.Teams > mt {
					t.Skipf("kernel %s's Sample launches %d teams; the device runs at most %d (Info.MaxTeams)", k.Name, smp.Shape.Teams, mt)
				}
				last = smp
				ptrs, args := s.upload(t, q, k, smp)
				must(t, "Launch", q.Launch(f, smp.Shape, args))
				got := download(t, q, smp, ptrs)
				compareBufs(t, k, smp, got, reference(k, smp, 1), 1)
			}
			if t.Failed() {
				return
			}
			s.badLaunches(t, q, k, f, last)
			s.mu.Lock()
			small := k.Sample(sampleSizes[1], 7)
			if err := checkSample(k, small); err != nil {
				s.mu.Unlock()
				t.Fatal(err)
			}
			s.runnable = append(s.runnable, runnable{k: k, f: f, smp: last, small: small, want: reference(k, small, 1)})
			s.mu.Unlock()
		})
	}
}

// testNeeds checks that Load refuses a kernel that needs what Info.Caps
// lacks, before it looks at the kernel's images, with a *device.NeedError
// matching ErrUnsupported that names the kernel, the need's source
// position and what the device lacks; and that one whose needs the device
// meets gets past that check (here to CodeInvalidBinary: the kernels have
// no image).
func (s *suite) testNeeds(t *testing.T) {
	c := s.dev.Info().Caps
	feature := func(f device.Feature) bool { return f.Has }
	cases := []struct {
		need    device.Need
		refused bool
	}{
		{device.Need{Kind: device.NeedLocalMem, Amount: c.LocalMem.N + 1, Use: "too much team-local memory", Pos: "needs.go:1"}, true},
		{device.Need{Kind: device.NeedTeamSize, Amount: c.TeamSize.N + 1, Use: "too large a team", Pos: "needs.go:2"}, true},
		{device.Need{Kind: device.NeedTeamSize, Amount: 1, Use: "a team of one", Pos: "needs.go:3"}, false},
		{device.Need{Kind: device.NeedFP64, Use: "float64", Pos: "needs.go:4"}, !feature(c.FP64)},
		{device.Need{Kind: device.NeedInt64Atomics, Use: "atomic.AddInt64", Pos: "needs.go:5"}, !feature(c.Int64Atomics)},
	}
	if c.LocalMem.N > 0 {
		cases = append(cases, struct {
			need    device.Need
			refused bool
		}{device.Need{Kind: device.NeedLocalMem, Amount: c.LocalMem.N, Use: "all of its team-local memory", Pos: "needs.go:6"}, false})
	}
	for i, tc := range cases {
		k := &device.Kernel{Name: fmt.Sprintf("devicetest_needs_%d", i), Needs: []device.Need{tc.need},
			Params: []device.Param{{Name: "x", Kind: device.ParamBuffer, Elem: device.ParamFloat32}}}
		_, err := s.dev.Load(k)
		if !tc.refused {
			wantCode(t, fmt.Sprintf("Load of a kernel needing %+v, which %+v meets (it has no image)", tc.need, c), err, device.CodeInvalidBinary)
			continue
		}
		var ne *device.NeedError
		if !errors.As(err, &ne) || !errors.Is(err, device.ErrUnsupported) {
			t.Errorf("Load of a kernel needing %+v on a device with %+v: %v; want a *device.NeedError matching ErrUnsupported", tc.need, c, err)
			continue
		}
		msg := err.Error()
		if ne.Need != tc.need || !strings.Contains(msg, k.Name) || !strings.Contains(msg, tc.need.Pos) || !strings.Contains(msg, tc.need.Use) || ne.Lacks == "" || !strings.Contains(msg, ne.Lacks) {
			t.Errorf("Load of a kernel needing %+v: %q (%+v); want it to name the kernel, the need, its position and what the device lacks", tc.need, msg, ne)
		}
	}
}

// badLaunches checks that bad arguments and shapes are refused and that the
// queue still works afterwards.
func (s *suite) badLaunches(t *testing.T, q device.Queue, k *device.Kernel, f device.Function, smp device.Sample) {
	t.Helper()
	ptrs, args := s.upload(t, q, k, smp)
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			err = q.Sync()
		} else if serr := q.Sync(); serr != nil {
			t.Errorf("%s: Sync after the refused launch: %v", what, serr)
		}
		wantCode(t, what, err, device.CodeInvalidArgument)
	}
	if len(args) > 0 {
		refused("Launch with one argument too few", q.Launch(f, smp.Shape, args[:len(args)-1]))
	}
	refused("Launch with one argument too many", q.Launch(f, smp.Shape, append(slices.Clone(args), device.Arg{})))
	bads := []device.Shape{
		{Size: [3]int{0}},
		{Size: [3]int{-1}},
		{Size: [3]int{4, -1}},
		{Size: [3]int{4}, Teams: -1},
		{Size: [3]int{4}, Threads: -1},
		{Size: [3]int{16, 1 << (bits.UintSize / 2), 1 << (bits.UintSize / 2)}}, // more iterations than an int counts
	}
	if m := s.dev.Info().MaxTeams; m > 0 && m < math.MaxInt {
		bads = append(bads, device.Shape{Size: [3]int{4}, Teams: m + 1})
	}
	for _, bad := range bads {
		refused(fmt.Sprintf("Launch with shape %+v", bad), q.Launch(f, bad, args))
	}
	must(t, "Launch after refused launches", q.Launch(f, smp.Shape, args))
	got := download(t, q, smp, ptrs)
	compareBufs(t, k, smp, got, reference(k, smp, 1), 1)
}
