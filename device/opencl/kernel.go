//go:build cgo

package opencl

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl/internal/cl"
)

const (
	// defaultThreads is the work-group size used when a launch asks for
	// none (capped by the device's and the kernel's limits).
	defaultThreads = 256
	// defaultThreadsCPU is the same for CPU devices, where a work-group is
	// a loop on one core: saxpy of 2^24 floats on POCL took 11.5 ms with
	// 256, 10.3 ms with 1024 and 10.5 ms with 4096.
	defaultThreadsCPU = 1024

	// maxTeams is the largest Shape.Teams a launch takes (Info.MaxTeams).
	// The work-groups of one NDRange must be countable in 32 bits: POCL's
	// CPU driver numbers them with an unsigned int and asserts, or runs
	// nothing, past that; OpenCL has no query for the limit.
	maxTeams = math.MaxInt32
	// maxAutoGroups caps the work-groups of a launch that leaves Teams to
	// the plugin, and maxGroupsZ those of dimension 2 within it: device
	// code covers a larger iteration space with its grid-stride loops, as
	// on CUDA, where the grid is capped likewise.
	maxAutoGroups = 1 << 16
	maxGroupsZ    = 1 << 8
)

// loadEntry is the cached result of loading one kernel on one device.
type loadEntry struct {
	once sync.Once
	fn   *function
	err  error
}

// function is a kernel built for one device. Its cl_kernel holds argument
// state, so launches on it are serialised by mu (from set-argument to
// enqueue; OpenCL captures the arguments at enqueue).
type function struct {
	d     *clDevice
	k     *device.Kernel
	bytes int
	prog  cl.Program
	kern  cl.Kernel
	limit int // largest legal work-group size for this kernel on this device

	mu sync.Mutex
}

func (f *function) Kernel() *device.Kernel  { return f.k }
func (f *function) Image() device.ImageKind { return device.ImageOpenCL }
func (f *function) Bytes() int              { return f.bytes }

func (f *function) release() error {
	err := cl.ReleaseKernel(f.kern)
	if perr := cl.ReleaseProgram(f.prog); err == nil {
		err = perr
	}
	return err
}

// Load builds k's OpenCL C image for this device, once per *Kernel; later
// calls return the cached function or error.
func (d *clDevice) Load(k *device.Kernel) (device.Function, error) {
	if k == nil {
		return nil, d.errorf("load", device.CodeInvalidArgument, "nil kernel")
	}
	if err := d.init(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, d.errorf("load "+k.Name, device.CodeInvalidDevice, "device is closed")
	}
	e := d.kernels[k]
	if e == nil {
		e = &loadEntry{}
		d.kernels[k] = e
	}
	d.mu.Unlock()
	e.once.Do(func() { e.fn, e.err = d.build(k) })
	if e.err != nil {
		return nil, e.err
	}
	return e.fn, nil
}

func (d *clDevice) build(k *device.Kernel) (*function, error) {
	op := "load " + k.Name
	img, ok := k.Image(device.ImageOpenCL)
	if !ok {
		kinds := make([]string, len(k.Images))
		for i, im := range k.Images {
			kinds[i] = im.Kind.String()
		}
		return nil, d.errorf(op, device.CodeInvalidBinary, "kernel %s has no %s image for OpenCL device %q; it has: [%s]",
			k.Name, device.ImageOpenCL, d.info.Name, strings.Join(kinds, ", "))
	}
	entry := img.Entry
	if entry == "" {
		entry = k.Name
	}
	prog, err := cl.CreateProgramWithSource(d.ctx, img.Source)
	if err != nil {
		return nil, d.wrap(op, err)
	}
	if err := cl.BuildProgram(prog, d.dev, ""); err != nil {
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
	f := &function{d: d, k: k, bytes: len(img.Source), prog: prog, kern: kern}
	fail := func(err error) (*function, error) {
		f.release()
		return nil, err
	}
	nargs, err := cl.GetKernelUint(kern, cl.KERNEL_NUM_ARGS)
	if err != nil {
		return fail(d.wrap(op, err))
	}
	if int(nargs) != len(k.Params) {
		return fail(d.errorf(op, device.CodeInvalidBinary, "OpenCL kernel %s takes %d arguments but the Kernel declares %d parameters",
			entry, nargs, len(k.Params)))
	}
	wg, err := cl.GetKernelWorkGroupUint(kern, d.dev, cl.KERNEL_WORK_GROUP_SIZE)
	if err != nil {
		return fail(d.wrap(op, err))
	}
	f.limit = min(int(wg), d.maxWG)
	if d.maxItem[0] > 0 {
		f.limit = min(f.limit, d.maxItem[0])
	}
	if k.MaxThreads > 0 {
		f.limit = min(f.limit, k.MaxThreads)
	}
	if f.limit < 1 {
		return fail(d.errorf(op, device.CodeUnsupported, "kernel %s cannot run on this device: its work-group size limit is %d", k.Name, f.limit))
	}
	return f, nil
}

// geometry maps a launch shape onto an NDRange. Work-groups are 1-D along
// dimension 0 (local = [threads,1,1]); dimensions 1 and 2 get one work-item
// per index. threads is shape.Threads clamped to the kernel's limit on this
// device (the smallest of CL_KERNEL_WORK_GROUP_SIZE,
// CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES[0] and
// Kernel.MaxThreads), as OpenMP's thread_limit is an upper bound; with
// Threads 0 it is 256 (1024 on CPU devices) capped the same way, and no
// larger than Size[0].
// Dimensions 2 and 1 get one work-item per index up to maxGroupsZ and
// maxAutoGroups work-items. Teams, when set, is the total number of
// work-groups (spread along dimension 0; the caller keeps it within
// maxTeams); with Teams 0 dimension 0 gets ceil(Size[0]/threads) groups,
// one work-item per iteration, up to maxAutoGroups groups in all. Device
// code loops grid-stride, so every choice computes the same result, and
// the NDRange stays one the device can run for any valid shape.
func (f *function) geometry(s device.Shape) (dims int, global, local [3]uintptr) {
	dims = s.Dims()
	threads := s.Threads
	if threads == 0 {
		threads = defaultThreads
		if f.d.info.Type == "cpu" {
			threads = defaultThreadsCPU
		}
		threads = min(threads, s.Size[0])
	}
	threads = max(1, min(threads, f.limit))
	yz := [3]int{1, 1, 1}
	if dims > 2 {
		yz[2] = min(s.Size[2], maxGroupsZ)
	}
	if dims > 1 {
		yz[1] = min(s.Size[1], maxAutoGroups/yz[2])
	}
	rest := yz[1] * yz[2]
	var groups int
	if s.Teams > 0 {
		groups = max(1, (s.Teams+rest-1)/rest)
	} else {
		// One work-item per iteration. Measured on POCL (saxpy, 2^24
		// floats, 2 cores): 11 ms, as fast as the host device, against
		// 240 ms with 64 groups looping grid-stride, since POCL vectorises
		// across the work-items of a group but not along a work-item's
		// loop. GPUs want this shape too.
		groups = min((s.Size[0]-1)/threads+1, max(1, maxAutoGroups/rest))
	}
	global = [3]uintptr{uintptr(groups * threads), uintptr(yz[1]), uintptr(yz[2])}
	local = [3]uintptr{uintptr(threads), 1, 1}
	return dims, global, local
}

// checkShape refuses what geometry cannot map: an invalid shape, or more
// teams than maxTeams.
func checkShape(s device.Shape) error {
	if err := s.Check(); err != nil {
		return err
	}
	if s.Teams > maxTeams {
		return fmt.Errorf("launch shape: %d teams: at most %d (MaxTeams)", s.Teams, maxTeams)
	}
	return nil
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
	_, g, l := fn.geometry(s)
	for i := range g {
		global[i], local[i] = int(g[i]), int(l[i])
	}
	return global, local, nil
}

// Launch enqueues f over shape with args. A buffer argument may point
// anywhere inside an allocation: at its start it is passed whole, at an
// offset that is a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN as a
// sub-buffer, and at any other offset through a temporary buffer (see
// stage), which costs a copy of the allocation's tail each way.
func (q *queue) Launch(f device.Function, shape device.Shape, args []device.Arg) error {
	fn, ok := f.(*function)
	if !ok || fn.d != q.d {
		name := "<nil>"
		if f != nil && f.Kernel() != nil {
			name = f.Kernel().Name
		}
		return q.d.errorf("launch "+name, device.CodeInvalidArgument, "function was not loaded on this device (%s)", q.d.id)
	}
	op := "launch" // the kernel's name is added on the error paths only
	if err := q.live(op); err != nil {
		return err
	}
	if err := checkShape(shape); err != nil {
		op = "launch " + fn.k.Name
		return q.d.errorf(op, device.CodeInvalidArgument, "%v", err)
	}
	if err := fn.k.CheckArgs(args); err != nil {
		op = "launch " + fn.k.Name
		return q.d.errorf(op, device.CodeInvalidArgument, "%v", err)
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
			return q.d.errorf(op, device.CodeInvalidArgument, "argument %d (%s): %v is not in a live allocation of this device", i, p.Name, a.Ptr)
		}
		q.bufs = append(q.bufs, bufArg{arg: i, m: m, off: off, size: size, home: m, hoff: off})
		unaligned = unaligned || off%q.d.align != 0
		q.args = append(q.args, cl.Arg{Size: 8})
	}
	var staged []staging
	if unaligned {
		op = "launch " + fn.k.Name
		var err error
		if staged, err = q.stage(op, fn); err != nil {
			return err
		}
	}
	for _, b := range q.bufs {
		m := b.m
		if b.off != 0 {
			// Aligned, in the buffer or in its staging buffer: a sub-buffer.
			sub, err := cl.CreateSubBuffer(m, cl.MEM_READ_WRITE, uintptr(b.off), uintptr(b.size-b.off))
			if err != nil {
				op = "launch " + fn.k.Name
				return q.d.wrap(fmt.Sprintf("%s: argument %d (%s)", op, b.arg, fn.k.Params[b.arg].Name), err)
			}
			q.subs = append(q.subs, sub)
			m = sub
		}
		q.args[b.arg].Value = uint64(m)
	}
	dims, global, local := fn.geometry(shape)
	q.global, q.local = global, local // queue-owned: no allocation for the C call
	var ev cl.Event
	evp := q.event(&ev)
	fn.mu.Lock()
	bad, err := cl.EnqueueKernel(q.q, fn.kern, q.args, dims, &q.global, &q.local, evp)
	fn.mu.Unlock()
	if err != nil {
		op = "launch " + fn.k.Name
		if bad >= 0 {
			p := fn.k.Params[bad]
			return q.d.wrap(fmt.Sprintf("%s: argument %d (%s %s)", op, bad, p.Name, p.Kind), err)
		}
		return q.d.wrap(fmt.Sprintf("%s: global %v local %v", op, q.global[:dims], q.local[:dims]), err)
	}
	q.enqueued()
	if evp != nil {
		q.track(ev, typeKernel, groups(dims, global, local))
	}
	// Staged arguments go back after the kernel, on the same in-order queue.
	if err := q.unstage(staged); err != nil {
		op = "launch " + fn.k.Name
		return q.d.wrap(fmt.Sprintf("%s: copying staged arguments back into their buffer", op), err)
	}
	return nil
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
// buffer m during one launch. With a twin (a second copy, untouched by the
// kernel), only the bytes the kernel changed go back.
type staging struct {
	m, tmp, twin cl.Mem
	from, n      uint64
}

// stage makes the launch's buffer arguments that point at offsets not a
// multiple of the device's base address alignment usable: OpenCL takes a
// buffer argument only as a whole buffer or a sub-buffer at such an
// offset. The arguments into one buffer fall into classes by their offset
// modulo the alignment. Each class other than the aligned one moves to a
// new buffer holding the bytes from its lowest offset to the buffer's end,
// where its arguments lie at aligned offsets, and stage points them there
// (q.bufs); Launch copies the bytes back after the kernel, on the same
// queue. When every argument into the buffer is in one class, the kernel
// sees one memory through all of them and the whole copy goes back. When
// there are several, each sees its own, and a second copy taken before the
// kernel (the twin) lets only the bytes the kernel changed go back
// (mergeSource): right for kernels in which no byte written through one
// argument is read or written through another of a different class, which
// a kernel whose result does not depend on its number of threads already
// satisfies across iterations. The temporary buffers are released with
// the launch's sub-buffers; OpenCL keeps them until the commands that use
// them complete.
func (q *queue) stage(op string, fn *function) ([]staging, error) {
	var staged []staging
	align := q.d.align
	for i := range q.bufs {
		b := &q.bufs[i]
		if b.off%align == 0 {
			continue
		}
		m, class := b.m, b.off%align
		from, mixed := b.off, false
		for _, o := range q.bufs {
			if o.home != m {
				continue
			}
			if o.hoff%align != class {
				mixed = true
			} else {
				from = min(from, o.off)
			}
		}
		n := b.size - from
		st := staging{m: m, from: from, n: n}
		what := func() string {
			return fmt.Sprintf("%s: argument %d (%s) is %d bytes into its buffer, not a multiple of %d (CL_DEVICE_MEM_BASE_ADDR_ALIGN)",
				op, b.arg, fn.k.Params[b.arg].Name, b.off, align)
		}
		copies := []*cl.Mem{&st.tmp}
		if mixed {
			if _, err := q.d.mergeKernel(); err != nil {
				return nil, q.d.wrap(what()+"; building the kernel that merges it back", err)
			}
			copies = append(copies, &st.twin)
		}
		for _, dst := range copies {
			tmp, err := cl.CreateBuffer(q.d.ctx, cl.MEM_READ_WRITE, uintptr(n))
			if err != nil {
				return nil, q.d.wrap(fmt.Sprintf("%s; a %d-byte temporary buffer for it", what(), n), err)
			}
			q.subs = append(q.subs, tmp)
			if err := q.copyBuffer(m, tmp, from, 0, n); err != nil {
				return nil, q.d.wrap(what()+"; copying it into a temporary buffer", err)
			}
			*dst = tmp
		}
		staged = append(staged, st)
		for j := range q.bufs {
			if o := &q.bufs[j]; o.home == m && o.hoff%align == class {
				o.m, o.off, o.size = st.tmp, o.off-from, n
			}
		}
	}
	q.d.staged.Add(1)
	return staged, nil
}

// unstage enqueues the copies of staged arguments back into their buffers.
func (q *queue) unstage(staged []staging) error {
	for _, st := range staged {
		if st.twin == 0 {
			if err := q.copyBuffer(st.tmp, st.m, 0, st.from, st.n); err != nil {
				return err
			}
			continue
		}
		k, _ := q.d.mergeKernel() // built by stage
		args := [5]cl.Arg{{Size: 8, Value: uint64(st.m)}, {Size: 8, Value: st.from},
			{Size: 8, Value: uint64(st.tmp)}, {Size: 8, Value: uint64(st.twin)}, {Size: 8, Value: st.n}}
		global := [3]uintptr{uintptr(min(st.n, 1<<16)), 1, 1}
		q.d.mergeMu.Lock()
		_, err := cl.EnqueueKernel(q.q, k, args[:], 1, &global, nil, nil)
		q.d.mergeMu.Unlock()
		if err != nil {
			return err
		}
		q.enqueued()
	}
	return nil
}

// mergeSource copies back into dst, from dstOff on, the bytes of a staged
// argument's buffer that the kernel changed: those that differ from its
// twin, copied before the kernel.
const mergeSource = `__kernel void gompt_merge(__global uchar *dst, ulong dstOff, __global const uchar *tmp, __global const uchar *twin, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    uchar v = tmp[i];
    if (v != twin[i]) dst[dstOff + i] = v;
  }
}
`

// mergeKernel builds the device's merge kernel once.
func (d *clDevice) mergeKernel() (cl.Kernel, error) {
	d.mergeOnce.Do(func() { d.mergeProg, d.mergeKern, d.mergeErr = d.buildInternal(mergeSource, "gompt_merge") })
	return d.mergeKern, d.mergeErr
}

// buildInternal builds one of the plugin's own kernels from source.
func (d *clDevice) buildInternal(src, name string) (cl.Program, cl.Kernel, error) {
	p, err := cl.CreateProgramWithSource(d.ctx, src)
	if err != nil {
		return 0, 0, err
	}
	if err := cl.BuildProgram(p, d.dev, ""); err != nil {
		cl.ReleaseProgram(p)
		return 0, 0, err
	}
	k, err := cl.CreateKernel(p, name)
	if err != nil {
		cl.ReleaseProgram(p)
		return 0, 0, err
	}
	return p, k, nil
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
