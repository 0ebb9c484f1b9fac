package devicetest

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
)

func (s *suite) testConcurrent(t *testing.T) {
	const goroutines, iters = 16, 6
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			if err := s.worker(g, iters); err != nil {
				t.Errorf("goroutine %d: %v", g, err)
			}
		})
	}
	wg.Wait()
}

// worker is one goroutine of testConcurrent. It reports failures as errors,
// since only the test's goroutine may call t.Fatal.
func (s *suite) worker(g, iters int) (err error) {
	q, err := s.dev.NewQueue()
	if err != nil {
		return fmt.Errorf("NewQueue: %w", err)
	}
	defer func() {
		if rerr := q.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("Release: %w", rerr)
		}
	}()
	var live []device.DevicePtr
	defer func() {
		for _, p := range live {
			if ferr := s.dev.Free(p); ferr != nil && err == nil {
				err = fmt.Errorf("Free: %w", ferr)
			}
		}
	}()
	get := func(n int) (device.DevicePtr, error) {
		b, err := s.dev.Alloc(n)
		if err != nil {
			return 0, fmt.Errorf("Alloc(%d): %w", n, err)
		}
		live = append(live, b.Ptr)
		return b.Ptr, nil
	}
	for it := range iters {
		n := 1000 + 4099*g + it
		if g%4 == 0 {
			n += 600 << 10 // large enough to be asynchronous on some devices
		}
		data := pattern(n, uint64(g*100+it))
		a, err := get(n)
		if err != nil {
			return err
		}
		b, err := get(n)
		if err != nil {
			return err
		}
		out := make([]byte, n)
		if err := q.CopyIn(a, data); err != nil {
			return fmt.Errorf("CopyIn: %w", err)
		}
		if err := q.Copy(b, a, n); err != nil {
			return fmt.Errorf("Copy: %w", err)
		}
		if err := q.CopyOut(out, b); err != nil {
			return fmt.Errorf("CopyOut: %w", err)
		}
		if len(s.runnable) > 0 {
			rk := s.runnable[(g+it)%len(s.runnable)]
			args := slices.Clone(rk.small.Args)
			args = append(args, make([]device.Arg, max(0, len(rk.k.Params)-len(args)))...)
			ptrs := make([]device.DevicePtr, len(rk.k.Params))
			for i, p := range rk.k.Params {
				if p.Kind != device.ParamBuffer {
					continue
				}
				if ptrs[i], err = get(max(len(rk.small.Bufs[i]), 1)); err != nil {
					return err
				}
				args[i] = device.Arg{Ptr: ptrs[i]}
				if err := q.CopyIn(ptrs[i], rk.small.Bufs[i]); err != nil {
					return fmt.Errorf("CopyIn: %w", err)
				}
			}
			if err := q.Launch(rk.f, rk.small.Shape, args); err != nil {
				return fmt.Errorf("Launch %s: %w", rk.k.Name, err)
			}
			got := make([][]byte, len(ptrs))
			for i, p := range ptrs {
				if p != 0 {
					got[i] = make([]byte, len(rk.small.Bufs[i]))
					if err := q.CopyOut(got[i], p); err != nil {
						return fmt.Errorf("CopyOut: %w", err)
					}
				}
			}
			if err := q.Sync(); err != nil {
				return fmt.Errorf("Sync: %w", err)
			}
			for i, p := range rk.k.Params {
				if p.Kind == device.ParamBuffer && !equalWithin(got[i], rk.want[i], p.Elem, rk.small.Tol) {
					return fmt.Errorf("kernel %s buffer %d (%s) differs from its Go image's result", rk.k.Name, i, p.Name)
				}
			}
		}
		if err := q.Sync(); err != nil {
			return fmt.Errorf("Sync: %w", err)
		}
		if !bytes.Equal(out, data) {
			return fmt.Errorf("iteration %d: %d bytes copied in, to another buffer and out differ", it, n)
		}
		for _, p := range live {
			if err := s.dev.Free(p); err != nil {
				return fmt.Errorf("Free(%v): %w", p, err)
			}
		}
		live = live[:0]
	}
	return nil
}
