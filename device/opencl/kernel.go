//go:build cgo

package opencl

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// function is a kernel built for one device. kern answers the work-group
// queries; launches use each queue's own cl_kernel of prog (queue.kernel),
// since a cl_kernel holds argument state and a shared one would need a lock
// from set-argument to enqueue across every queue launching it.
type function struct {
	d     *clDevice
	k     *device.Kernel
	bytes int
	prog  cl.Program
	entry string
	kern  cl.Kernel
	lim   wgLimits // work-group limits of this kernel on this device
	guard bool     // built with LoopGuardDefine, it takes a fault record beyond k.DeviceParams (loops.go)
	sext  bool     // built with SextCompareDefine (sext.go)
}

func (f *function) Kernel() *device.Kernel  { return f.k }
func (f *function) Image() device.ImageKind { return ImageC }
func (f *function) Bytes() int              { return f.bytes }

func (f *function) release() error {
	err := cl.ReleaseKernel(f.kern)
	if perr := cl.ReleaseProgram(f.prog); err == nil {
		err = perr
	}
	return err
}

// LoadImage builds img, k's OpenCL C image, for this device
// (generic.Driver), with -cl-kernel-arg-info, and checks the built
// kernel's arguments against k's parameters.
func (d *clDevice) LoadImage(k *device.Kernel, img *device.Image) (device.Function, error) {
	if err := d.init(); err != nil {
		return nil, err
	}
	f, err := d.build(k, img)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CPUDefine is the macro the OpenCL plugin defines when it builds a
// kernel for a CPU device (POCL, say): there a work-group's work-items run
// one after another on one core, so a loop whose work-items stride through
// memory together, as a GPU wants (coalesced), reads each cache line once
// per work-item; code may take contiguous ranges per work-item instead.
// gompt-kernels' reductions do.
// GOMPT_OPENCL_CODE=gpu builds without it on a CPU device too (the GPU's
// paths, tested on POCL), and =cpu with it on every device.
const CPUDefine = "GOMPT_CPU_DEVICE"

// codeMode is the choice of codeEnv: "cpu", "gpu" or "auto".
var codeMode = sync.OnceValue(func() string { return autoChoice(codeEnv, "cpu", "gpu") })

// cpuCode reports whether kernels built for a device of type typ get
// CPUDefine.
func cpuCode(typ string) bool { return choose(codeMode(), "cpu", "gpu", typ == "cpu") }

func (d *clDevice) build(k *device.Kernel, img *device.Image) (*function, error) {
	op := "load " + k.Name
	entry := img.Entry
	if entry == "" {
		entry = k.Name
	}
	prog, err := cl.CreateProgramWithSource(d.ctx, img.Source)
	if err != nil {
		return nil, d.wrap(op, err)
	}
	// The image's own options, -cl-kernel-arg-info (the arguments' types
	// and names, checked against k.Params below), and on a CPU device
	// GOMPT_CPU_DEVICE, so that code may pick the access order a CPU
	// wants (see CPUDefine).
	opts := img.Options + " -cl-kernel-arg-info"
	if cpuCode(d.info.Type) {
		opts += " -D" + CPUDefine
	}
	guard := d.loopGuard()
	if guard {
		opts += " -D" + LoopGuardDefine
	}
	// A driver that orders sign-extended values wrong (sext.go).
	sext := d.sextBroken()
	if sext {
		opts += " -D" + SextCompareDefine
	}
	if err := cl.BuildProgram(prog, d.dev, strings.TrimSpace(opts)); err != nil {
		log, lerr := cl.GetProgramBuildLog(prog, d.dev)
		cl.ReleaseProgram(prog)
		if lerr != nil {
			log = "(no build log: " + lerr.Error() + ")"
		}
		return nil, d.errorf(op, device.CodeInvalidBinary, "building the OpenCL C source of kernel %s failed: %v; build log:\n%s",
			k.Name, err, strings.TrimSpace(log))
	}
	kern, err := cl.CreateKernel(prog, entry)
	if err != nil {
		names, _ := cl.GetProgramKernelNames(prog)
		cl.ReleaseProgram(prog)
		if cl.StatusOf(err) == cl.INVALID_KERNEL_NAME {
			return nil, d.errorf(op, device.CodeNotFound, "entry point %q not found in the built program of kernel %s (it defines: [%s]): %v",
				entry, k.Name, strings.Join(names, ", "), err)
		}
		return nil, d.wrap(op, err)
	}
	f := &function{d: d, k: k, bytes: len(img.Source), prog: prog, entry: entry, kern: kern, sext: sext}
	fail := func(err error) (*function, error) {
		f.release()
		return nil, err
	}
	nargs, err := cl.GetKernelUint(kern, cl.KERNEL_NUM_ARGS)
	if err != nil {
		return fail(d.wrap(op, err))
	}
	params := k.DeviceParams()
	if guard && !k.Checked() && int(nargs) == len(params)+1 {
		// gompt-kernels' code with the loop guard on: its fault record
		// last (checked below when the driver names its arguments).
		f.guard = true
		params = append(params[:len(params):len(params)], device.FaultParam)
	}
	if int(nargs) != len(params) {
		what := ""
		if k.Checked() {
			what = " (and its fault record, as its Faults ask)"
		}
		return fail(d.errorf(op, device.CodeInvalidBinary, "OpenCL kernel %s takes %d arguments but the Kernel declares %d parameters%s",
			entry, nargs, len(k.Params), what))
	}
	switch args, err := cl.GetKernelArgs(kern, len(params)); {
	case errors.Is(err, cl.ErrNoArgInfo): // an OpenCL 1.1 library: the count was checked
	case err != nil:
		return fail(d.wrap(op+": reading its arguments' types", err))
	default:
		if f.guard && args[len(args)-1].Name != "" && args[len(args)-1].Name != device.FaultParam.Name {
			return fail(d.errorf(op, device.CodeInvalidBinary, "OpenCL kernel %s takes %d arguments but the Kernel declares %d parameters, and the last is %s, not the fault record (%s) of the loop guard",
				entry, nargs, len(k.Params), args[len(args)-1].Name, device.FaultParam.Name))
		}
		if err := checkKernelArgs(k, entry, args); err != nil {
			return fail(d.errorf(op, device.CodeInvalidBinary, "%v", err))
		}
	}
	wg, err := d.kernelGroup(kern)
	if err != nil {
		return fail(d.wrap(op, err))
	}
	limFrom := "CL_KERNEL_WORK_GROUP_SIZE"
	if wg < d.maxWG && !d.groupsTrust().kernelLimits {
		wg, limFrom = d.maxWG, "CL_DEVICE_MAX_WORK_GROUP_SIZE; the driver's CL_KERNEL_WORK_GROUP_SIZE is no limit"
	}
	f.lim = wgLimits{max: min(wg, d.maxWG), item: d.maxItem, cpu: d.info.Type == "cpu", units: d.info.ComputeUnits, multiple: 1, team: k.TeamSize()}
	if k.MaxThreads > 0 {
		f.lim.max = min(f.lim.max, k.MaxThreads)
	}
	if f.lim.max < 1 {
		return fail(d.errorf(op, device.CodeUnsupported, "kernel %s cannot run on this device: its work-group size limit is %d", k.Name, f.lim.max))
	}
	// A team kernel runs teams of exactly its size (reqd_work_group_size):
	// one the device cannot hold is refused here, before any copy, never
	// left to fail its launch.
	if t := f.lim.team; t > 0 {
		most, from := f.lim.max, limFrom
		if d.maxItem[0] > 0 && d.maxItem[0] < most {
			most, from = d.maxItem[0], "CL_DEVICE_MAX_WORK_ITEM_SIZES"
		}
		if t > most {
			return fail(device.BuiltNeedError(k, device.NeedTeamSize, int64(t), fmt.Sprintf("teams of %d threads", t), d.id, d.info.Name,
				fmt.Sprintf("runs this kernel in teams of at most %d threads (%s)", most, from)))
		}
	}
	// Its team-local memory, as the driver counts it once built, where
	// that count is true (groups.go).
	if lm, err := d.kernelLocal(kern); err == nil && lm > d.info.LocalMem && d.localsTrust().honest {
		return fail(device.BuiltNeedError(k, device.NeedLocalMem, int64(lm), fmt.Sprintf("%d bytes of team-local memory (CL_KERNEL_LOCAL_MEM_SIZE)", lm), d.id, d.info.Name,
			fmt.Sprintf("has at most %d bytes of team-local memory (CL_DEVICE_LOCAL_MEM_SIZE)", d.info.LocalMem)))
	}
	// A hint (32 on NVIDIA, 8 on POCL): an implementation without it
	// leaves local sizes unrounded.
	if m, err := cl.GetKernelWorkGroupUint(kern, d.dev, cl.KERNEL_PREFERRED_WG_MUL); err == nil && m > 0 && int(m) <= f.lim.max {
		f.lim.multiple = int(m)
	}
	return f, nil
}

// LaunchGeometry returns the NDRange (global and local work sizes per
// dimension) a launch of f with shape s uses on its OpenCL device, for
// diagnostics (GOMPT_INFO) and tests. f must come from an OpenCL device's
// Load.
func LaunchGeometry(f device.Function, s device.Shape) (global, local [3]int, err error) {
	fn, ok := f.(*function)
	if !ok {
		return global, local, fmt.Errorf("opencl: LaunchGeometry: function %T was not loaded by the OpenCL plugin", f)
	}
	if err := checkShape(s); err != nil {
		return global, local, fn.d.errorf("launch "+fn.k.Name, device.CodeInvalidArgument, "%v", err)
	}
	_, g, l := geometry(s, fn.lim, 1)
	for i := range g {
		global[i], local[i] = int(g[i]), int(l[i])
	}
	return global, local, nil
}

// KernelOf implements generic.Launcher: f must have been loaded on
// this device, and the queue not released.
func (q *queue) KernelOf(f device.Function) (*device.Kernel, error) {
	fn, ok := f.(*function)
	if !ok || fn.d != q.d {
		name := "<nil>"
		if f != nil && f.Kernel() != nil {
			name = f.Kernel().Name
		}
		return nil, q.d.errorf("launch "+name, device.CodeInvalidArgument, "function was not loaded on this device (%s)", q.d.id)
	}
	if err := q.live("launch"); err != nil {
		return nil, err
	}
	return fn.k, nil
}

// EnqueueLaunch implements generic.Launcher: it enqueues f over shape with
// args, through this queue's own cl_kernel of f. A buffer argument may
// point anywhere inside an allocation: at its start it is passed whole,
// at an offset that is a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN as a
// sub-buffer (cached per buffer and offset, see subCache), and at any
// other offset through a temporary buffer (see stage), which costs a
// copy of the allocation's tail each way.
func (q *queue) EnqueueLaunch(f device.Function, k *device.Kernel, shape *device.Shape, args []device.Arg) (faults bool, err error) {
	fn := f.(*function) // KernelOf's
	op := "launch"      // the kernel's name is added on the error paths only
	if fn.lim.team > 0 {
		if err := checkTeamLaunch(*shape, fn.lim.team); err != nil {
			return false, q.d.errorf("launch "+fn.k.Name, device.CodeInvalidArgument, "%v", err)
		}
	}
	q.args = q.args[:0]
	q.subs = q.subs[:0]
	q.bufs = q.bufs[:0]
	defer q.releaseSubs()
	unaligned := false
	for i, p := range fn.k.Params {
		a := args[i]
		if p.Kind != device.ParamBuffer {
			q.args = append(q.args, cl.Arg{Size: uintptr(p.Kind.Size()), Value: a.Bits})
			continue
		}
		m, off, size, err := q.d.resolve(op, a.Ptr, 0)
		if err != nil {
			op = "launch " + fn.k.Name
			return faults, q.d.errorf(op, device.CodeInvalidArgument, "argument %d (%s): %v is not in a live allocation of this device", i, p.Name, a.Ptr)
		}
		q.bufs = append(q.bufs, bufArg{arg: i, m: m, off: off, size: size, home: m, hoff: off})
		unaligned = unaligned || off%q.d.align != 0
		q.args = append(q.args, cl.Arg{Size: 8})
	}
	if fn.k.Checked() || fn.guard {
		m, err := q.faultRecord()
		if err != nil {
			return faults, q.d.wrap("launch "+fn.k.Name+": creating the queue's fault record", err)
		}
		q.args = append(q.args, cl.Arg{Size: 8, Value: uint64(m)})
		faults = true
	}
	var staged []staging
	if unaligned {
		op = "launch " + fn.k.Name
		var err error
		if staged, err = q.stage(op, fn, shape, args); err != nil {
			return faults, err
		}
	}
	kern, err := q.kernel(fn.prog, fn.entry)
	if err != nil {
		op = "launch " + fn.k.Name
		return faults, q.d.wrap(op+": creating this queue's kernel object", err)
	}
	// Sub-buffers for arguments inside a buffer: per launch for staged
	// ones, from the device's cache for the others, whose read lock is
	// held until the enqueue.
	cached := false
	for _, b := range q.bufs {
		q.args[b.arg].Value = uint64(b.m)
		if b.off == 0 {
			continue
		}
		if b.m == b.home {
			cached = true
			continue
		}
		sub, err := cl.CreateSubBuffer(b.m, cl.MEM_READ_WRITE, uintptr(b.off), uintptr(b.size-b.off))
		if err != nil {
			op = "launch " + fn.k.Name
			return faults, q.d.wrap(fmt.Sprintf("%s: argument %d (%s)", op, b.arg, fn.k.Params[b.arg].Name), err)
		}
		q.subs = append(q.subs, sub)
		q.args[b.arg].Value = uint64(sub)
	}
	if cached {
		if bad, err := q.d.subs.lookup(q.bufs, q.args); err != nil {
			op = "launch " + fn.k.Name
			return faults, q.d.wrap(fmt.Sprintf("%s: argument %d (%s)", op, bad, fn.k.Params[bad].Name), err)
		}
	}
	work := int64(1)
	if fn.lim.cpu && fn.k.Work != "" {
		work = fn.k.PointWork(*shape, func(j int) uint64 {
			if j < len(args) {
				return args[j].Bits
			}
			return 0
		})
	}
	dims, global, local := geometry(*shape, fn.lim, work)
	q.global, q.local = global, local // queue-owned: no allocation for the C call
	var ev cl.Event
	evp := q.event(&ev)
	bad, err := cl.EnqueueKernel(q.q, kern, q.args, dims, &q.global, &q.local, evp)
	if cached {
		q.d.subs.mu.RUnlock()
	}
	if err != nil {
		op = "launch " + fn.k.Name
		if bad >= 0 && bad < len(fn.k.Params) {
			p := fn.k.Params[bad]
			return faults, q.d.wrap(fmt.Sprintf("%s: argument %d (%s %s)", op, bad, p.Name, p.Kind), err)
		}
		return faults, q.d.wrap(fmt.Sprintf("%s: global %v local %v", op, q.global[:dims], q.local[:dims]), err)
	}
	q.enqueued()
	if evp != nil {
		q.track(ev, typeKernel, groups(dims, global, local))
	}
	// Staged arguments go back after the kernel, on the same in-order queue.
	if err := q.unstage(staged); err != nil {
		op = "launch " + fn.k.Name
		return faults, q.d.wrap(fmt.Sprintf("%s: copying staged arguments back into their buffer", op), err)
	}
	return faults, nil
}

// bufArg is a buffer argument of the launch being enqueued: argument arg
// points off bytes into buffer m of size bytes, which stage may change to
// a staging buffer; home and hoff are where it points in the allocation.
type bufArg struct {
	arg       int
	m         cl.Mem
	off, size uint64
	home      cl.Mem
	hoff      uint64
}

// staging is a temporary buffer standing in for bytes [from, from+n) of
// buffer m during one launch. back lists the byte ranges of m (sorted,
// disjoint) that go back after the kernel: those its arguments may change.
// With a twin (a second copy, untouched by the kernel), only the bytes the
// kernel changed within them go back.
type staging struct {
	m, tmp, twin cl.Mem
	from, n      uint64
	back         [][2]uint64
}

// stage makes the launch's buffer arguments that point at offsets not a
// multiple of the device's base address alignment usable: OpenCL takes a
// buffer argument only as a whole buffer or a sub-buffer at such an
// offset. The arguments into one buffer fall into classes by their offset
// modulo the alignment. Each class other than the aligned one moves to a
// new buffer holding the bytes from its lowest offset to the buffer's end,
// where its arguments lie at aligned offsets, and stage points them there
// (q.bufs); Launch copies them back after the kernel, on the same queue.
//
// What goes back is only what the kernel may change: each argument's own
// range, from its offset for as many bytes as its parameter's Len asks
// (to the buffer's end when Len is undeclared), never the bytes between
// or around them, which other queues may be writing meanwhile (disjoint
// sub-slices of one array, written by concurrent constructs). When an
// argument's range overlaps that of an argument of another class (or its
// Len is undeclared), the kernel sees those bytes through two memories,
// and a second copy taken before the kernel (the twin, copied from the
// temporary so that the two agree whatever other queues do) lets only the
// bytes the kernel changed go back (mergeSource): right for kernels in
// which no byte written through one argument is read or written through
// another of a different class, which a kernel whose result does not
// depend on its number of threads already satisfies across iterations.
// The temporary buffers are released with the launch's sub-buffers;
// OpenCL keeps them until the commands that use them complete.
func (q *queue) stage(op string, fn *function, shape *device.Shape, args []device.Arg) ([]staging, error) {
	var staged []staging
	align := q.d.align
	// end[i] is where q.bufs[i]'s range ends in its allocation.
	end := q.ends[:0]
	for _, b := range q.bufs {
		e := b.size
		p := fn.k.Params[b.arg]
		if n, err := fn.k.NeedLen(b.arg, *shape, func(j int) uint64 { return args[j].Bits }); err == nil && p.Len != "" {
			e = min(b.hoff+uint64(n)*uint64(p.ElemSize()), b.size)
		}
		end = append(end, e)
	}
	q.ends = end
	for i := range q.bufs {
		b := &q.bufs[i]
		if b.off%align == 0 || b.m != b.home {
			continue // aligned, or staged with its class already
		}
		m, class := b.m, b.off%align
		st := staging{m: m, from: b.hoff}
		twin := false
		for j, o := range q.bufs {
			if o.home != m || o.hoff%align != class {
				continue
			}
			st.from = min(st.from, o.hoff)
			st.back = addRange(st.back, o.hoff, end[j])
			twin = twin || fn.k.Params[o.arg].Len == ""
			for k, x := range q.bufs { // another class over the same bytes
				if x.home == m && x.hoff%align != class && x.hoff < end[j] && o.hoff < end[k] {
					twin = true
				}
			}
		}
		// The temporary holds the buffer from there to its end, as the
		// kernel would see it unstaged, even past the arguments' Len.
		st.n = b.size - st.from
		what := func() string {
			return fmt.Sprintf("%s: argument %d (%s) is %d bytes into its buffer, not a multiple of %d (CL_DEVICE_MEM_BASE_ADDR_ALIGN)",
				op, b.arg, fn.k.Params[b.arg].Name, b.off, align)
		}
		if twin {
			if _, err := q.d.mergeKernel(); err != nil {
				return nil, q.d.wrap(what()+"; building the kernel that merges it back", err)
			}
		}
		copies := []*cl.Mem{&st.tmp}
		if twin {
			copies = append(copies, &st.twin)
		}
		src, srcOff := m, st.from
		for _, dst := range copies {
			tmp, err := cl.CreateBuffer(q.d.ctx, cl.MEM_READ_WRITE, uintptr(st.n))
			if err != nil {
				return nil, q.d.wrap(fmt.Sprintf("%s; a %d-byte temporary buffer for it", what(), st.n), err)
			}
			q.subs = append(q.subs, tmp)
			if err := q.copyBuffer(src, tmp, srcOff, 0, st.n); err != nil {
				return nil, q.d.wrap(what()+"; copying it into a temporary buffer", err)
			}
			*dst = tmp
			src, srcOff = tmp, 0 // the twin is a copy of the temporary
		}
		staged = append(staged, st)
		for j := range q.bufs {
			if o := &q.bufs[j]; o.home == m && o.hoff%align == class {
				o.m, o.off, o.size = st.tmp, o.hoff-st.from, st.n
			}
		}
	}
	q.d.staged.Add(1)
	return staged, nil
}

// addRange adds [lo, hi) to the sorted disjoint ranges rs, merging it with
// those it overlaps or touches.
func addRange(rs [][2]uint64, lo, hi uint64) [][2]uint64 {
	if lo >= hi {
		return rs
	}
	out := rs[:0:0]
	for _, r := range rs {
		switch {
		case r[1] < lo || r[0] > hi:
			out = append(out, r)
		default:
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
	}
	out = append(out, [2]uint64{lo, hi})
	slices.SortFunc(out, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// unstage enqueues the copies of staged arguments back into their
// buffers: each range the kernel may have changed, and nothing else.
func (q *queue) unstage(staged []staging) error {
	for _, st := range staged {
		for _, r := range st.back {
			lo, n := r[0]-st.from, r[1]-r[0]
			if st.twin == 0 {
				if err := q.copyBuffer(st.tmp, st.m, lo, r[0], n); err != nil {
					return err
				}
				continue
			}
			prog, _ := q.d.mergeKernel() // built by stage
			k, err := q.kernel(prog, "gompt_merge")
			if err != nil {
				return err
			}
			args := [6]cl.Arg{{Size: 8, Value: uint64(st.m)}, {Size: 8, Value: r[0]},
				{Size: 8, Value: uint64(st.tmp)}, {Size: 8, Value: uint64(st.twin)}, {Size: 8, Value: lo}, {Size: 8, Value: n}}
			global := [3]uintptr{uintptr(min(n, 1<<16)), 1, 1}
			if _, err := cl.EnqueueKernel(q.q, k, args[:], 1, &global, nil, nil); err != nil {
				return err
			}
			q.enqueued()
		}
	}
	return nil
}

// mergeSource copies back into dst, from dstOff on, the bytes of a staged
// argument's buffer that the kernel changed: those that differ from its
// twin, copied before the kernel.
const mergeSource = `__kernel void gompt_merge(__global uchar *dst, ulong dstOff, __global const uchar *tmp, __global const uchar *twin, ulong off, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    uchar v = tmp[off + i];
    if (v != twin[off + i]) dst[dstOff + i] = v;
  }
}
`

// mergeKernel builds the device's merge kernel once and returns its
// program; queues make their own cl_kernel of it (queue.kernel).
func (d *clDevice) mergeKernel() (cl.Program, error) {
	d.mergeOnce.Do(func() { d.mergeProg, d.mergeKern, d.mergeErr = d.buildInternal(mergeSource, "gompt_merge") })
	return d.mergeProg, d.mergeErr
}

// buildInternal builds one of the plugin's own kernels from source.
func (d *clDevice) buildInternal(src, name string) (cl.Program, cl.Kernel, error) {
	return cl.BuildKernel(d.ctx, d.dev, src, name)
}

// copyBuffer enqueues a copy of n bytes from src at srcOff to dst at
// dstOff, untimed: part of a launch.
func (q *queue) copyBuffer(src, dst cl.Mem, srcOff, dstOff, n uint64) error {
	if err := cl.EnqueueCopyBuffer(q.q, src, dst, uintptr(srcOff), uintptr(dstOff), uintptr(n), nil); err != nil {
		return err
	}
	q.enqueued()
	return nil
}

// releaseSubs drops this launch's sub-buffers and staging buffers; OpenCL
// keeps them until the commands that use them complete.
func (q *queue) releaseSubs() {
	for _, s := range q.subs {
		cl.ReleaseMemObject(s)
	}
	q.subs = q.subs[:0]
}

// kernel returns the queue's own cl_kernel of entry in prog, created on
// first use and released with the queue. Only the enqueuing goroutine sets
// its arguments, so no lock is held from set-argument to enqueue.
func (q *queue) kernel(prog cl.Program, entry string) (cl.Kernel, error) {
	q.mu.Lock()
	k, ok := q.kerns[prog]
	q.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := cl.CreateKernel(prog, entry)
	if err != nil {
		return 0, err
	}
	q.mu.Lock()
	if q.released {
		q.mu.Unlock()
		cl.ReleaseKernel(k)
		return 0, q.d.errorf("launch", device.CodeInvalidArgument, "queue already released")
	}
	if q.kerns == nil {
		q.kerns = map[cl.Program]cl.Kernel{}
	}
	q.kerns[prog] = k
	q.mu.Unlock()
	return k, nil
}

// releaseKernels releases the queue's cl_kernels; called once the queue
// is marked released.
func (q *queue) releaseKernels() error {
	q.mu.Lock()
	ks := q.kerns
	q.kerns = nil
	q.mu.Unlock()
	var first error
	for _, k := range ks {
		if err := cl.ReleaseKernel(k); err != nil && first == nil {
			first = q.d.wrap("release queue", err)
		}
	}
	return first
}

// subCacheMax bounds the sub-buffers a device keeps; past it the cache is
// emptied and refilled.
const subCacheMax = 1024

// subKey names a sub-buffer: from byte off of buffer m to its end.
type subKey struct {
	m   cl.Mem
	off uint64
}

// subCache keeps the sub-buffers that launches pass for arguments pointing
// inside a buffer at an aligned offset, so a launch does not create and
// release one each time. A launch holds mu's read lock from its lookup to
// its enqueue; emptying the cache (on Free of a buffer, or when full)
// takes the write lock, so no launch is between the two then. OpenCL
// keeps a released sub-buffer for the commands already enqueued on it.
type subCache struct {
	mu   sync.RWMutex
	subs map[subKey]cl.Mem
}

// lookup sets args[b.arg] for each argument of bufs at a non-zero offset
// in its own buffer (not a staging one) to the cached sub-buffer, creating
// the missing ones. It returns with mu read-locked, unless it fails: then
// it returns the argument that failed.
func (c *subCache) lookup(bufs []bufArg, args []cl.Arg) (int, error) {
	for {
		c.mu.RLock()
		missing := false
		for _, b := range bufs {
			if b.off == 0 || b.m != b.home {
				continue
			}
			s, ok := c.subs[subKey{b.m, b.off}]
			if !ok {
				missing = true
				break
			}
			args[b.arg].Value = uint64(s)
		}
		if !missing {
			return 0, nil
		}
		c.mu.RUnlock()
		c.mu.Lock()
		if c.subs == nil || len(c.subs)+len(bufs) > subCacheMax {
			c.clear()
			c.subs = map[subKey]cl.Mem{}
		}
		for _, b := range bufs {
			key := subKey{b.m, b.off}
			if _, ok := c.subs[key]; ok || b.off == 0 || b.m != b.home {
				continue
			}
			s, err := cl.CreateSubBuffer(b.m, cl.MEM_READ_WRITE, uintptr(b.off), uintptr(b.size-b.off))
			if err != nil {
				c.mu.Unlock()
				return b.arg, err
			}
			c.subs[key] = s
		}
		c.mu.Unlock()
	}
}

// drop releases the cached sub-buffers of buffer m (every one, when m is
// 0), before m itself is released.
func (c *subCache) drop(m cl.Mem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m == 0 {
		c.clear()
		return
	}
	for k, s := range c.subs {
		if k.m == m {
			cl.ReleaseMemObject(s)
			delete(c.subs, k)
		}
	}
}

// clear releases every cached sub-buffer; called with mu write-locked.
func (c *subCache) clear() {
	for k, s := range c.subs {
		cl.ReleaseMemObject(s)
		delete(c.subs, k)
	}
}
