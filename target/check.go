package target

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
)

// checkRegion validates r for device d (nil for the initial device)
// before any device work, so a bad region changes nothing. The rules are
// the same on every device; only the limits are each device's. It is on
// the hot path: the common cases cost a few comparisons, and the messages
// are made by functions called only on error. loaded says r's kernel is
// loaded on d: not nil, and its declaration checked (checkKernel) at its
// first load.
func checkRegion(r *Region, d *dev, loaded bool) error {
	k := r.Kernel
	if !loaded {
		if k == nil {
			return errors.New("target: region has no kernel")
		}
		if err := checkKernel(k); err != nil {
			return err
		}
	}
	if len(r.Maps) > 0 {
		if err := checkMaps(r.Maps); err != nil {
			return err
		}
	}
	if r.Device.hasTeams || r.Device.hasThreads {
		if err := teamsClauses(r); err != nil {
			return err
		}
	}
	s := &r.Shape
	if err := device.CheckShape(s); err != nil {
		return fmt.Errorf("target: kernel %s: %w", k.Name, err)
	}
	info := &initialInfo
	if d != nil {
		info = &d.info
	}
	if (s.Size[1] > 1 || s.Size[2] > 1) && s.Dims() > k.IterationDims() ||
		s.Teams > 0 && info.MaxTeams > 0 && s.Teams > info.MaxTeams ||
		s.Threads > 0 && (info.MaxThreadsPerTeam > 0 && s.Threads > info.MaxThreadsPerTeam || k.MaxThreads > 0 && s.Threads > k.MaxThreads) {
		return shapeErr(k, s, d, info)
	}
	if s.Threads > 0 {
		if t := k.TeamSize(); t > 0 && s.Threads != t {
			return fmt.Errorf("target: kernel %s: launch shape: %d threads per team; the kernel runs teams of exactly %d threads (its team size, Kernel.TeamSize)", k.Name, s.Threads, t)
		}
	}
	if len(r.Args) != len(k.Params) {
		return fmt.Errorf("target: kernel %s takes %d arguments, got %d", k.Name, len(k.Params), len(r.Args))
	}
	buffers := false
	for i := range k.Params {
		p, a := &k.Params[i], &r.Args[i]
		if a.kind == argScalar && a.scalar == p.Kind {
			continue // int64, float32 or float64, passed as such
		}
		if err := checkArg(k, i, p, a); err != nil {
			return err
		}
		buffers = buffers || p.Kind == device.ParamBuffer
	}
	if len(k.Bounds) > 0 {
		if err := k.CheckBounds(r.Shape, func(j int) uint64 { return r.Args[j].bits }); err != nil {
			return fmt.Errorf("target: kernel %s: %w", k.Name, err)
		}
	}
	// A kernel with Extents runs its points on every device, split alike
	// among teams: its Size is set to them (r is the construct's own copy
	// of the user's Region). An extent's bits are its value as an int64
	// whatever its integer kind: checkArg refused an int32 or uint32
	// argument out of its range.
	for d, j := range k.Extents {
		if int64(r.Args[j].bits) != int64(s.Size[d]) {
			if err := k.FitExtents(s, func(j int) uint64 { return r.Args[j].bits }); err != nil {
				return fmt.Errorf("target: kernel %s: %w", k.Name, err)
			}
			break
		}
	}
	if !buffers {
		return nil
	}
	// Lengths last: a Len reads scalars checked above.
	for i := range k.Params {
		if k.Params[i].Kind == device.ParamBuffer {
			if err := checkLen(r, d, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkedKernels remembers the kernels whose declaration passed
// device.Kernel.Check, so each is checked once, at its first construct.
// The hot path only reads: one atomic load for the kernel checked last
// (a program with one kernel), else a lookup in a copy-on-write map, so
// goroutines launching different kernels do not write one shared word at
// every construct. A declaration that fails is checked again at every
// use: it is never run.
var checkedKernels struct {
	last atomic.Pointer[Kernel]
	mu   sync.Mutex
	m    atomic.Pointer[map[*Kernel]struct{}]
}

// checkKernel reports the first mistake in k's declaration (device.Kernel's
// Check: a missing or repeated parameter name, an unknown kind, Dims
// outside 0..3, ...), so a kernel declared wrong is refused before any
// device work instead of running with its arguments checked against a
// meaningless declaration. k must not be changed after its first use.
func checkKernel(k *Kernel) error {
	if checkedKernels.last.Load() == k {
		return nil
	}
	if m := checkedKernels.m.Load(); m != nil {
		if _, ok := (*m)[k]; ok {
			return nil
		}
	}
	if err := k.Check(); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	checkedKernels.mu.Lock()
	old := checkedKernels.m.Load()
	m := make(map[*Kernel]struct{}, 1+len(deref(old)))
	for kk := range deref(old) {
		m[kk] = struct{}{}
	}
	m[k] = struct{}{}
	checkedKernels.m.Store(&m)
	checkedKernels.mu.Unlock()
	checkedKernels.last.Store(k)
	return nil
}

// shapeErr says why checkRegion refused the valid shape s for kernel k on
// device d, whose limits are info: more dimensions than k iterates over,
// or teams or threads beyond the device's or the kernel's limits.
func shapeErr(k *Kernel, s *Shape, d *dev, info *device.Info) error {
	if dims := s.Dims(); dims > k.IterationDims() {
		return fmt.Errorf("target: kernel %s: launch shape size %v uses %d dimensions; the kernel iterates over %d (Kernel.Dims)",
			k.Name, s.Size, dims, k.IterationDims())
	}
	if info.MaxTeams > 0 && s.Teams > info.MaxTeams {
		return fmt.Errorf("target: kernel %s: launch shape: %d teams; %s runs at most %d (MaxTeams)", k.Name, s.Teams, devName(d), info.MaxTeams)
	}
	if info.MaxThreadsPerTeam > 0 && s.Threads > info.MaxThreadsPerTeam {
		return fmt.Errorf("target: kernel %s: launch shape: %d threads per team; %s runs at most %d (MaxThreadsPerTeam)",
			k.Name, s.Threads, devName(d), info.MaxThreadsPerTeam)
	}
	return fmt.Errorf("target: kernel %s: launch shape: %d threads per team; the kernel runs at most %d (Kernel.MaxThreads)",
		k.Name, s.Threads, k.MaxThreads)
}

// devName names d in messages; nil is the initial device.
func devName(d *dev) string {
	if d == nil {
		return initialDevice
	}
	return fmt.Sprintf("device %d (%s)", d.num, d.id)
}

// checkArg checks argument a for parameter i (p) of k, all but its length.
func checkArg(k *Kernel, i int, p *device.Param, a *Arg) error {
	switch {
	case a.kind == 0:
		return fmt.Errorf("target: kernel %s argument %d (%s): zero target.Arg; build arguments with target.Slice, target.Ptr, target.Int, target.Float32 or target.Float64",
			k.Name, i, p.Name)
	case p.Kind == device.ParamBuffer && a.kind == argScalar:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a buffer (target.Slice or target.Ptr), got a scalar", k.Name, i, p.Name)
	case p.Kind != device.ParamBuffer && a.kind != argScalar:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a %s scalar, got a slice or pointer", k.Name, i, p.Name, p.Kind)
	case a.kind == argScalar && scalarOf(p.Kind) != a.scalar:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a scalar of type %s (target.%s), got target.%s",
			k.Name, i, p.Name, p.Kind, scalarFunc[scalarOf(p.Kind)], scalarFunc[a.scalar])
	case a.kind == argScalar && (p.Kind == device.ParamInt32 || p.Kind == device.ParamUint32):
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if p.Kind == device.ParamUint32 {
			lo, hi = 0, math.MaxUint32
		}
		if v := int64(a.bits); v < lo || v > hi {
			return fmt.Errorf("target: kernel %s argument %d (%s): %d does not fit the %s parameter (%d to %d)", k.Name, i, p.Name, v, p.Kind, lo, hi)
		}
	case a.kind == argSlice && len(a.host) == 0:
		return fmt.Errorf("target: kernel %s argument %d (%s): empty or nil slice", k.Name, i, p.Name)
	case a.kind == argSlice && a.et.pointers:
		return pointersErr(fmt.Sprintf("kernel %s argument %d (%s)", k.Name, i, p.Name), a.et)
	case a.kind == argSlice && p.Elem != 0 && a.et.kind != p.Elem:
		return fmt.Errorf("target: kernel %s argument %d (%s): want a slice of %s (the parameter's element type), got []%s",
			k.Name, i, p.Name, p.Elem, a.et.name)
	case a.kind == argPtr && a.ptr == 0:
		return fmt.Errorf("target: kernel %s argument %d (%s): nil device pointer", k.Name, i, p.Name)
	}
	return nil
}

// checkLen checks that buffer argument i of r holds the elements its
// parameter's Len asks for: a slice by its length, a device pointer by the
// bytes from it to the end of its allocation where the runtime knows the
// allocation (AllocMem, mapped buffers, the initial device's memory).
func checkLen(r *Region, d *dev, i int) error {
	k, p, a := r.Kernel, &r.Kernel.Params[i], &r.Args[i]
	need, err := k.NeedLen(i, r.Shape, func(j int) uint64 { return r.Args[j].bits })
	if err != nil {
		return fmt.Errorf("target: kernel %s argument %d (%s): %w", k.Name, i, p.Name, err)
	}
	if need == 0 {
		return nil
	}
	have := len(a.host)
	if a.kind == argPtr {
		if d == nil {
			b, err := state().initial.resolve(a.ptr)
			if err != nil {
				return fmt.Errorf("target: kernel %s argument %d (%s): %w", k.Name, i, p.Name, err)
			}
			have = len(b)
		} else if have, err = d.extent(a.ptr); err != nil {
			return nil // not the runtime's: the plugin checks the pointer
		}
	}
	if n := have / p.ElemSize(); n < need {
		unit, what := "bytes", "slice"
		if p.Elem != 0 {
			unit = p.Elem.String() + " elements"
		}
		if a.kind == argPtr {
			what = fmt.Sprintf("device memory from %v to the end of its allocation", a.ptr)
		}
		return fmt.Errorf("target: kernel %s argument %d (%s): %s of %d %s, but the kernel needs %d (Len %q)",
			k.Name, i, p.Name, what, n, unit, need, p.Len)
	}
	return nil
}

// scalarOf is the Arg constructor's kind that fits a scalar parameter:
// target.Int for every integer kind.
func scalarOf(k device.ParamKind) device.ParamKind {
	switch k {
	case device.ParamFloat32, device.ParamFloat64:
		return k
	}
	return device.ParamInt64
}

var scalarFunc = map[device.ParamKind]string{
	device.ParamInt64: "Int", device.ParamFloat32: "Float32", device.ParamFloat64: "Float64",
}
