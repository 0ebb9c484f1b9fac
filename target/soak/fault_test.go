package soak

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/target"
	"github.com/gompt/gompt/target/internal/inspect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fdev = 0 // the faulty-wrapped host device

// fcase is one construct of the fault matrix: setup maps what the construct
// needs (no faults armed), run is the construct, check verifies its results
// when it succeeded, and teardown unmaps what setup mapped.
type fcase struct {
	name     string
	setup    func(s *fstate) error
	run      func(s *fstate) error
	check    func(s *fstate) error
	teardown func(s *fstate) error
}

type fstate struct {
	x, y, z []float32
	p, q    target.DevicePtr
}

const fn = 1024

func newState() *fstate {
	s := &fstate{x: make([]float32, fn), y: make([]float32, fn), z: make([]float32, fn)}
	for i := range s.x {
		s.x[i], s.y[i] = float32(i), 1
	}
	return s
}

func saxpy(dev int, x, y []float32, maps ...target.Map) error {
	return target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(len(x)), Maps: maps,
		Args: []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Slice(y)}})
}

// wantSaxpy checks y == 2*x + 1.
func wantSaxpy(x, y []float32) error {
	for i := range y {
		if y[i] != 2*x[i]+1 {
			return fmt.Errorf("y[%d] = %v, want %v", i, y[i], 2*x[i]+1)
		}
	}
	return nil
}

func none(*fstate) error { return nil }

var fcases = []fcase{
	{name: "target to/tofrom",
		setup: none,
		run:   func(s *fstate) error { return saxpy(fdev, s.x, s.y, target.To(s.x), target.ToFrom(s.y)) },
		check: func(s *fstate) error { return wantSaxpy(s.x, s.y) }, teardown: none},
	{name: "target implicit maps",
		setup: none,
		run:   func(s *fstate) error { return saxpy(fdev, s.x, s.y) },
		check: func(s *fstate) error { return wantSaxpy(s.x, s.y) }, teardown: none},
	{name: "target with present data",
		setup: func(s *fstate) error { return target.EnterData(fdev, target.To(s.x), target.To(s.y)) },
		run: func(s *fstate) error {
			if err := saxpy(fdev, s.x, s.y, target.To(s.x), target.ToFrom(s.y)); err != nil {
				return err
			}
			return target.Update(fdev, target.From(s.y))
		},
		check:    func(s *fstate) error { return wantSaxpy(s.x, s.y) },
		teardown: func(s *fstate) error { return target.ExitData(fdev, target.Delete(s.x), target.Delete(s.y)) }},
	{name: "enter data",
		setup: none,
		run: func(s *fstate) error {
			return target.EnterData(fdev, target.To(s.x), target.Alloc(s.y), target.To(s.z))
		},
		check: none,
		teardown: func(s *fstate) error {
			return target.ExitData(fdev, target.Delete(s.x), target.Delete(s.y), target.Delete(s.z))
		}},
	{name: "exit data",
		setup: func(s *fstate) error {
			if err := target.EnterData(fdev, target.To(s.x), target.To(s.y)); err != nil {
				return err
			}
			return saxpy(fdev, s.x, s.y)
		},
		run:   func(s *fstate) error { return target.ExitData(fdev, target.Release(s.x), target.From(s.y)) },
		check: func(s *fstate) error { return wantSaxpy(s.x, s.y) },
		teardown: func(s *fstate) error {
			// Only what the failed construct left mapped.
			var ms []target.Map
			if target.IsPresent(s.x, fdev) {
				ms = append(ms, target.Delete(s.x))
			}
			if target.IsPresent(s.y, fdev) {
				ms = append(ms, target.Delete(s.y))
			}
			if len(ms) == 0 {
				return nil
			}
			return target.ExitData(fdev, ms...)
		}},
	{name: "update",
		setup: func(s *fstate) error {
			if err := target.EnterData(fdev, target.To(s.x), target.To(s.y)); err != nil {
				return err
			}
			return saxpy(fdev, s.x, s.y)
		},
		run: func(s *fstate) error {
			s.x[0] = 7
			return target.Update(fdev, target.From(s.y), target.To(s.x))
		},
		check: func(s *fstate) error {
			s.x[0] = 0
			return wantSaxpy(s.x, s.y)
		},
		teardown: func(s *fstate) error { return target.ExitData(fdev, target.Delete(s.x), target.Delete(s.y)) }},
	{name: "data region",
		setup: none,
		run: func(s *fstate) error {
			return target.Data(fdev, []target.Map{target.To(s.x), target.ToFrom(s.y)}, func() error {
				return saxpy(fdev, s.x, s.y)
			})
		},
		check: func(s *fstate) error { return wantSaxpy(s.x, s.y) }, teardown: none},
	{name: "memcpy",
		setup: func(s *fstate) error {
			var err error
			if s.p, err = target.AllocMem(4*fn, fdev); err != nil {
				return err
			}
			s.q, err = target.AllocMem(4*fn, fdev)
			return err
		},
		run: func(s *fstate) error {
			if err := target.Memcpy(target.On(fdev, s.p), target.Host(s.x), 4*fn); err != nil {
				return err
			}
			if err := target.Memcpy(target.On(fdev, s.q), target.On(fdev, s.p), 4*fn); err != nil {
				return err
			}
			return target.Memcpy(target.Host(s.z), target.On(fdev, s.q), 4*fn)
		},
		check: func(s *fstate) error {
			if !slices.Equal(s.x, s.z) {
				return errors.New("memcpy round trip: z != x")
			}
			return nil
		},
		teardown: func(s *fstate) error {
			return errors.Join(target.FreeMem(s.p, fdev), target.FreeMem(s.q, fdev))
		}},
	{name: "alloc mem",
		setup: none,
		run: func(s *fstate) error {
			var err error
			s.p, err = target.AllocMem(4*fn, fdev)
			return err
		},
		check: none,
		teardown: func(s *fstate) error {
			if s.p == 0 {
				return nil
			}
			return target.FreeMem(s.p, fdev)
		}},
}

// knownIssues are fault points where the runtime does not yet meet the
// fault contract of issue 8; each is reported in docs/reliability.md. The
// matrix still runs them and logs what it saw; with GOMPT_SOAK_STRICT=1
// they fail.
var knownIssues = map[string]string{
	"exit data/copy from device": partialExit,
}

const partialExit = "exit data is not atomic: items whose copy and free worked are unmapped; the failed item stays mapped with its " +
	"dynamic count, so the program can retry (mapping.Table.Exit, by design)"

// faultRow is one cell of the matrix, for the report.
type faultRow struct {
	construct string
	op        faulty.Op
	n         int
	err       string
	problem   string
}

// TestFaultMatrix runs each construct with the Nth call of each device
// operation failing, N = 1, 2, ... until the construct no longer reaches
// the Nth call. For each fault that fired: the construct returns an error
// naming the operation; the present table and the device's memory in use
// are exactly as before the construct; after cleaning up, the same
// construct works and gives correct results.
func TestFaultMatrix(t *testing.T) {
	var rows []faultRow
	ops := []faulty.Op{faulty.Alloc, faulty.Free, faulty.CopyIn, faulty.CopyOut, faulty.Copy, faulty.Launch, faulty.NewQueue}
	for _, fc := range fcases {
		for _, op := range ops {
			for n := 1; n <= 16; n++ {
				row, fired := runFault(t, fc, op, n)
				if !fired {
					break
				}
				rows = append(rows, row)
			}
		}
	}
	writeFaultReport(t, rows)
}

func runFault(t *testing.T, fc fcase, op faulty.Op, n int) (faultRow, bool) {
	t.Helper()
	row := faultRow{construct: fc.name, op: op, n: n}
	s := newState()
	require.NoError(t, fc.setup(s), "%s: setup", fc.name)
	entries := inspect.MappingEntries(fdev)
	b0, a0, _ := memInUse(fdev)
	code := device.CodeOutOfResources
	if op != faulty.Alloc {
		code = device.CodeUnknown
	}
	before := plan.Injected(op)
	plan.FailNth(op, n, code)
	err := fc.run(s)
	plan.FailNth(op, 0, 0)
	if plan.Injected(op) == before {
		// The construct made fewer than n calls of op.
		if assert.NoError(t, err, "%s: no fault fired, but", fc.name) {
			assert.NoError(t, fc.check(s), "%s", fc.name)
		}
		assert.NoError(t, fc.teardown(s), "%s: teardown", fc.name)
		return row, false
	}
	if err != nil {
		row.err = err.Error()
	}
	var problems []string
	var de *device.Error
	switch {
	case err == nil && op == faulty.Free:
		// The runtime retries a failed free once, so a single injected
		// failure is absorbed: the construct must then have fully worked.
		row.err = "none: the free was retried"
		if cerr := fc.check(s); cerr != nil {
			problems = append(problems, "the free was retried but the results are wrong: "+cerr.Error())
		}
	case err == nil:
		problems = append(problems, "the construct returned no error")
	case !errors.Is(err, faulty.ErrInjected) || !errors.As(err, &de) || !strings.Contains(err.Error(), op.String()):
		problems = append(problems, fmt.Sprintf("the error does not carry the injected %q failure: %v", op, err))
	}
	if err != nil {
		after := inspect.MappingEntries(fdev)
		if !slices.Equal(entries, after) {
			problems = append(problems, fmt.Sprintf("present table changed: before %v, after %v", entries, after))
		}
		if b, a, _ := memInUse(fdev); b != b0 || a != a0 {
			problems = append(problems, fmt.Sprintf("device memory in use %d bytes in %d allocations, %d in %d before", b, a, b0, a0))
		}
	}
	row.problem = strings.Join(problems, "; ")
	name := fmt.Sprintf("%s/%v#%d", fc.name, op, n)
	if row.problem != "" {
		if why, ok := knownIssues[fc.name+"/"+op.String()]; ok && os.Getenv("GOMPT_SOAK_STRICT") == "" {
			t.Logf("%s: known issue (%s): %s", name, why, row.problem)
		} else {
			assert.Empty(t, row.problem, "%s", name)
		}
	}
	// Clean up whatever the failed construct left, then the same
	// construct, fault-free, on fresh data must work.
	cleanup(t, s)
	if terr := fc.teardown(s); terr != nil && !strings.Contains(terr.Error(), "not present") {
		assert.ErrorContains(t, terr, "not a live allocation", "%s: teardown: an error other than not present or not a live allocation", name)
	}
	s2 := newState()
	require.NoError(t, fc.setup(s2), "%s: setup after the fault", name)
	if assert.NoError(t, fc.run(s2), "%s: the construct after the fault failed", name) {
		assert.NoError(t, fc.check(s2), "%s: the construct after the fault", name)
	}
	assert.NoError(t, fc.teardown(s2), "%s: teardown after the fault", name)
	return row, true
}

// cleanup unmaps s's arrays if a failed construct left them mapped with a
// dynamic count. An entry stuck with a structured count cannot be removed
// by any construct; it stays, and the next runs use fresh arrays.
func cleanup(t *testing.T, s *fstate) {
	for _, a := range [][]float32{s.x, s.y, s.z} {
		for _, e := range inspect.MappingEntries(fdev) {
			if e.Dynamic > 0 && e.Host == addrOf(a) {
				assert.NoError(t, target.ExitData(fdev, target.Delete(a)), "cleanup")
			}
		}
	}
}

func saxpyKernel() *target.Kernel { return kernels.Saxpy }

func saxpyArgs(x, y []float32) []target.Arg {
	return []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Slice(y)}
}
