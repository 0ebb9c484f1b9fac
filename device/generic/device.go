// Package generic is the device layer every gompt plugin builds on, as
// LLVM's plugins-nextgen GenericDeviceTy is for its plugins: the
// bookkeeping of the device.Device and device.Queue contracts is here,
// once, and a plugin writes only its vendor calls.
//
// A plugin's device type embeds a Device, which implements device.Device's
// Alloc, Free, Load and Info, and device.MemInfo, and implements Driver
// (MemAlloc, MemFree, LoadImage), which Device calls after its checks; it
// adds NewQueue and Now, and its queues, themselves. Device keeps:
//
//   - the argument checks of Alloc (size in 1..MaxAlloc) and Free (the
//     start of a live allocation);
//   - the table of live allocations: what Free checks and MemInUse
//     reports, and what a plugin's queues look pointers up in (Lookup),
//     with the range checks and messages of every copy and launch;
//     optionally synthetic addresses, for memory that has none (OpenCL's
//     cl_mem);
//   - the one allocation policy of every plugin: size classes
//     (SizeClass), an allocation the cache may keep made at its class's
//     whole size (or, with Config.ExactFallback, at its exact size when
//     that is all that fits), and a cache of freed blocks by class,
//     bounded in bytes, emptied when memory runs out, and reused only
//     where the driver says no work can still use them: its queues as a
//     whole (Reuser), or block by block (Fencer, CUDA's events);
//   - the kernel cache: the image the device runs chosen from the
//     kernel's images (Config.Images, best first), built once per kernel
//     through LoadImage, with the "has no image" error naming the kinds
//     the kernel has; the runtime finds a loaded kernel without a call
//     into the plugin (Kernels).
//
// A plugin's queue type embeds a Queue (queue.go), which implements
// device.Queue's Launch and device.Profiler, and implements Launcher
// (KernelOf, EnqueueLaunch), which Queue calls around the launch checks
// (CheckLaunch, and with QueueConfig.ExactThreads the team size); a queue
// that implements device.CheckedLauncher makes the same steps in its
// LaunchChecked, directly, with the one check left (CheckTrusted). Queue
// keeps whether the queue profiles and the timing of
// the operation enqueued last, and the fault log of the kernels that got
// the queue's fault record (FaultLog), which the plugin's Sync reads
// through ReadFaults; Timings bounds the unread timings of a driver whose
// timings hold events. The plugin keeps its copies, events, waits and
// syncs, and times its operations.
//
// Plugin keeps the once-only device list; Move copies overlapping ranges
// for a driver that cannot.
//
// device/host is the model: its Device embeds Device[[]byte] (an
// allocation's handle is its memory), its queues find the memory of a
// pointer with Lookup, and its Driver methods are a dozen lines.
package generic

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/kcache"
)

// Driver is what a plugin implements for one device: the vendor calls that
// Device makes after its checks and around its bookkeeping. H is the
// plugin's handle of an allocation (its memory, a cl_mem, a record of its
// own), kept in the table beside the allocation's address and handed back
// by Lookup and MemFree. The methods are called concurrently, without
// Device's lock.
type Driver[H any] interface {
	// MemAlloc allocates span bytes of device memory for an allocation
	// of size bytes (1 <= size <= span, size <= Info().MaxAlloc,
	// checked) and returns their address and handle. span is size, or
	// for an allocation the cache may keep (Config.CacheLimit) its size
	// class's whole size (SizeClass), so that the block serves any later
	// size of the class. An address of 0 asks Device for one from its
	// synthetic address space (Config.Space). The errors are the
	// device's own, about size, with the device.Code that fits
	// (CodeOutOfResources when memory is exhausted).
	MemAlloc(size, span int) (device.DevicePtr, H, error)

	// MemFree releases an allocation MemAlloc made, of size bytes (its
	// class's size for a block coming out of the cache). The allocation
	// has left the table already: Lookup no longer finds it.
	MemFree(p device.DevicePtr, h H, size int) error

	// LoadImage builds img, the image of k that the device runs (the
	// first of Config.Images the kernel has whose Source or Host is set),
	// and returns the function to launch. Device calls it once per kernel
	// and keeps the function; a kernel that failed is built again at its
	// next Load, unless Config.KeepLoadErrors. An error that is not a
	// *device.Error reaches the caller as one of this device, of the
	// kernel's load, with CodeInvalidBinary.
	LoadImage(k *device.Kernel, img *device.Image) (device.Function, error)
}

// HostAliaser is a Driver that can make an allocation of the program's
// memory itself (device.Aliaser): MemAlias returns the address of b's
// allocation (0 asks for a synthetic one) and its handle, or ok false
// where the device cannot use b in place. Such an allocation is never
// cached: its Free goes to MemFree, which releases the handle, not b.
type HostAliaser[H any] interface {
	MemAlias(b []byte) (p device.DevicePtr, h H, ok bool, err error)
}

// Config describes a device to Device.Init.
type Config struct {
	ID   string      // "host:0", device.ID's form: names the device in errors
	Info device.Info // what Info returns; MaxAlloc bounds Alloc

	// MaxAllocFrom, when set, says where Info.MaxAlloc comes from, for
	// Alloc's error ("CL_DEVICE_MAX_MEM_ALLOC_SIZE").
	MaxAllocFrom string

	// Images are the kinds of kernel image the device runs, best first:
	// Load builds the first one a kernel has. Hint, when set, ends the
	// error for a kernel with none ("generate PTX with clang...").
	Images []device.ImageKind
	Hint   string

	// KeepLoadErrors keeps a kernel's failed load, as its loads that
	// succeed are kept: Load returns the same error again without a
	// build (OpenCL: a source that does not compile will not, and a
	// build costs a compile). Without it a failed kernel is built again
	// at its next Load (CUDA: a JIT failure of the driver may pass).
	KeepLoadErrors bool

	// Space, when Hi > Lo, is the range [Lo, Hi) of synthetic addresses
	// Device gives allocations whose MemAlloc returned address 0.
	Space struct{ Lo, Hi uint64 }

	// CacheLimit, when > 0, is how many bytes of freed allocations of at
	// most CacheMax bytes the device keeps for reuse: a freed block goes
	// to MemFree only once the cache is full (or Trim empties it), and
	// Alloc takes a block of the size's class from the cache before it
	// calls MemAlloc (where the driver, a Reuser, says a block may be
	// reused now). With Space, an allocation the cache takes holds its
	// class's whole size of addresses.
	CacheLimit int64
	CacheMax   int

	// ExactFallback, with a cache, tries an allocation whose size
	// class's whole size MemAlloc could not make for lack of memory
	// (CodeOutOfResources), even with the cache emptied, once more at
	// its exact size: such an allocation never enters the cache (CUDA:
	// the class's rounding may be what does not fit).
	ExactFallback bool
}

// Reuser is a Driver whose queues may still be using a freed block after
// Free (OpenCL's release waits for the commands that use a buffer; a
// cached block does not): MayReuse reports whether no work the device has
// enqueued can still use memory freed before the call, so that a cached
// block may serve a new allocation. Device asks it after each Free that
// caches a block, and again at an Alloc that finds only blocks freed
// while it said no: a block freed with the queues idle serves later
// allocations whatever runs by then (the second array of a map while the
// first is being copied), and one freed with work in flight waits until
// MayReuse reports true; meanwhile Alloc allocates afresh.
type Reuser interface {
	MayReuse() bool
}

// Fencer is a Driver that fences each freed block on its own, as CUDA
// does with an event after the work of each queue that used it: a block
// the cache keeps serves a new allocation only once the work enqueued on
// it before its Free is done. Device calls Fence and Reuse with its lock
// held (they must not call the Device, and should not wait), and Wait
// once the block has left the cache, before MemFree.
type Fencer[H any] interface {
	// Fence is called at the Free of allocation h that the cache is
	// about to keep: it records, in h, what must complete before the
	// block is used again. An error (a device closed or broken) keeps
	// the block out of the cache: it goes to MemFree, whose error Free
	// returns.
	Fence(h H) error
	// Reuse reports, without waiting, whether cached block h may serve
	// a new allocation now; when it reports true the block is taken,
	// and the driver makes h a fresh allocation's handle. Device asks
	// the cached blocks of a class newest first.
	Reuse(h H) bool
	// Wait waits for h's fences, and gives back what they hold, before
	// the block goes to MemFree (Trim).
	Wait(h H) error
}

// Device is the generic part of a plugin's device; a plugin's device type
// embeds it and calls Init once, before the device is used. Its methods
// are safe for concurrent use.
type Device[H any] struct {
	drv     Driver[H]
	fencer  Fencer[H] // drv, if it fences its blocks
	reuser  Reuser    // drv, if it says when its queues are done with freed memory
	exact   bool      // Config.ExactFallback
	id      string
	limit   string // MaxAlloc, as Alloc's error names it
	info    device.Info
	images  []device.ImageKind
	hint    string
	kernels kcache.Kernels

	mu sync.Mutex
	t  table[H]
}

// Init makes d the device of driver drv as c describes it. It panics on a
// nil driver, or a device without an ID, Info.MaxAlloc or image kinds, or
// with an image kind without a name, saying which.
func (d *Device[H]) Init(drv Driver[H], c Config) {
	var missing []string
	if drv == nil {
		missing = append(missing, "a driver (drv is nil)")
	}
	if c.ID == "" {
		missing = append(missing, "an ID (Config.ID)")
	}
	if c.Info.MaxAlloc == 0 {
		missing = append(missing, "the largest allocation (Config.Info.MaxAlloc)")
	}
	if len(c.Images) == 0 || slices.Contains(c.Images, "") {
		missing = append(missing, "the kinds of image it runs, each named (Config.Images)")
	}
	if len(missing) > 0 {
		panic(fmt.Sprintf("generic: Init of device %q: need %s", c.ID, strings.Join(missing, ", ")))
	}
	d.drv, d.id, d.info, d.images, d.hint = drv, c.ID, c.Info, c.Images, c.Hint
	d.limit = "MaxAlloc"
	if c.MaxAllocFrom != "" {
		d.limit += ": " + c.MaxAllocFrom
	}
	d.t.lo, d.t.hi, d.t.next = c.Space.Lo, c.Space.Hi, c.Space.Lo
	d.t.cacheLimit, d.t.cacheMax, d.t.maxAlloc = c.CacheLimit, c.CacheMax, c.Info.MaxAlloc
	d.fencer, _ = drv.(Fencer[H])
	d.reuser, _ = drv.(Reuser)
	d.exact = c.ExactFallback
	d.kernels.Init(d.build, c.KeepLoadErrors)
}

// ID returns the device's id, "host:0".
func (d *Device[H]) ID() string { return d.id }

// Info returns the Info of Init (device.Device).
func (d *Device[H]) Info() device.Info { return d.info }

// Images returns the kinds of kernel image the device runs, best first
// (Config.Images): a plugin registers the same list
// (device.Registration.Images), and devicetest checks that it does.
func (d *Device[H]) Images() []device.ImageKind { return slices.Clone(d.images) }

// Errorf builds a *device.Error of this device.
func (d *Device[H]) Errorf(op string, code device.Code, format string, args ...any) *device.Error {
	return device.Errorf(d.id, op, code, format, args...)
}

// Alloc allocates size bytes (device.Device): from the cache, or through
// MemAlloc, of the size class's whole size where the cache may keep the
// block. When MemAlloc fails, the cache is emptied (Trim) and it tries
// again, then, with Config.ExactFallback, at the exact size. A size
// outside 1..MaxAlloc is CodeInvalidArgument.
func (d *Device[H]) Alloc(size int) (device.Buffer, error) {
	if size <= 0 || uint64(size) > d.info.MaxAlloc {
		return device.Buffer{}, d.Errorf("alloc", device.CodeInvalidArgument,
			"size %d: want 1..%d bytes (%s)", size, d.info.MaxAlloc, d.limit)
	}
	span := size
	if d.t.cacheLimit > 0 && size <= d.t.cacheMax {
		if c, sp := SizeClass(size); uint64(sp) <= d.info.MaxAlloc {
			if p, ok := d.reuse(c, sp, size); ok {
				return device.Buffer{Ptr: p, Size: size}, nil
			}
			span = sp
		}
	}
	p, h, err := d.drv.MemAlloc(size, span)
	if err != nil && d.CacheBytes() > 0 {
		// The cache may hold what the device lacks: empty it, and try
		// once more.
		if _, terr := d.Trim(); terr == nil {
			p, h, err = d.drv.MemAlloc(size, span)
		}
	}
	exact := false
	if err != nil && d.exact && span != size && device.CodeOf(err) == device.CodeOutOfResources {
		// The class's rounding may be what does not fit.
		exact = true
		p, h, err = d.drv.MemAlloc(size, size)
	}
	if err != nil {
		return device.Buffer{}, err
	}
	d.mu.Lock()
	if p == 0 {
		if p, err = d.t.place(size); err != nil {
			d.mu.Unlock()
			if ferr := d.drv.MemFree(0, h, size); ferr != nil {
				err = fmt.Errorf("%w; and freeing the allocation: %v", err, ferr)
			}
			return device.Buffer{}, d.Errorf("alloc", device.CodeOutOfResources, "%v", err)
		}
	}
	d.t.add(p, size, h, exact)
	d.mu.Unlock()
	return device.Buffer{Ptr: p, Size: size}, nil
}

// reuse takes a cached block of class c (span bytes) for an allocation
// of size bytes, if one may be reused: one freed while the driver's
// queues were done with it (the runtime frees after its queue's work),
// or, where the class has only blocks freed with work in flight, any of
// those once the driver says the work enqueued so far is done; and, for
// a Fencer, one whose fences are done.
func (d *Device[H]) reuse(c, span, size int) (device.DevicePtr, bool) {
	d.mu.Lock()
	p, ok, waiting := d.t.reuse(c, span, size, d.fencer)
	mark := d.t.frees
	d.mu.Unlock()
	if ok || !waiting || !d.mayReuse() {
		return p, ok
	}
	d.mu.Lock()
	d.t.raiseClean(mark)
	p, ok, _ = d.t.reuse(c, span, size, d.fencer)
	d.mu.Unlock()
	return p, ok
}

// Alias implements device.Aliaser through the driver's MemAlias
// (HostAliaser): an allocation that is b itself, in the table as any
// other, never cached. ok is false for a driver without MemAlias, and
// for an empty b or one larger than MaxAlloc.
func (d *Device[H]) Alias(b []byte) (device.Buffer, bool, error) {
	a, can := d.drv.(HostAliaser[H])
	if !can || len(b) == 0 || uint64(len(b)) > d.info.MaxAlloc {
		return device.Buffer{}, false, nil
	}
	p, h, ok, err := a.MemAlias(b)
	if err != nil || !ok {
		return device.Buffer{}, false, err
	}
	d.mu.Lock()
	if p == 0 {
		if p, err = d.t.place(len(b)); err != nil {
			d.mu.Unlock()
			if ferr := d.drv.MemFree(0, h, len(b)); ferr != nil {
				err = fmt.Errorf("%w; and freeing the allocation: %v", err, ferr)
			}
			return device.Buffer{}, false, d.Errorf("alias", device.CodeOutOfResources, "%v", err)
		}
	}
	d.t.add(p, len(b), h, true)
	d.mu.Unlock()
	return device.Buffer{Ptr: p, Size: len(b)}, true, nil
}

// mayReuse reports whether no work the device has enqueued so far can
// still use memory freed before the call: always, unless the driver is a
// Reuser that says no.
func (d *Device[H]) mayReuse() bool {
	return d.reuser == nil || d.reuser.MayReuse()
}

// Free releases the allocation that starts at p (device.Device): into the
// cache (fenced, for a Fencer), or through MemFree. A p that is not the
// start of a live allocation (freed twice, never allocated, inside one)
// is CodeInvalidArgument and changes nothing.
func (d *Device[H]) Free(p device.DevicePtr) error {
	d.mu.Lock()
	i, ok := d.t.find(p, false)
	if !ok || d.t.ents[i].base != p {
		d.mu.Unlock()
		return d.Errorf("free", device.CodeInvalidArgument, "pointer %v is not the start of a live allocation", p)
	}
	e := &d.t.ents[i]
	size, h := e.size, e.h
	c, span, keep := d.t.keeps(e)
	if keep && d.fencer != nil && d.fencer.Fence(h) != nil {
		keep = false
	}
	if keep {
		d.t.kill(i, c, span)
		mark := d.t.frees
		if d.reuser == nil {
			// No work of the driver's queues can use the block but
			// what its fences (Fencer) wait for: it may serve a later
			// allocation at once.
			d.t.raiseClean(mark)
			d.mu.Unlock()
			return nil
		}
		d.mu.Unlock()
		// The block may serve a later allocation once no work enqueued
		// before its free can use it: at once, if none is in flight now.
		if d.mayReuse() {
			d.t.raiseClean(mark)
		}
		return nil
	}
	d.t.remove(i)
	d.mu.Unlock()
	return d.drv.MemFree(p, h, size)
}

// MemInUse returns the bytes and number of live allocations
// (device.MemInfo); cached blocks do not count.
func (d *Device[H]) MemInUse() (bytes int64, allocs int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t.bytes, d.t.n
}

// CacheBytes returns the bytes of freed blocks the device keeps for reuse.
func (d *Device[H]) CacheBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t.cached
}

// Lookup returns the handle of the live allocation that holds [p, p+n)
// (n >= 0; with n 0, p may be the allocation's end), p's offset in it,
// and its size. Otherwise the error, of operation op with
// CodeInvalidArgument, names the range and the allocation it extends
// past, if any. A plugin's queues call it for every pointer they are
// given.
func (d *Device[H]) Lookup(op string, p device.DevicePtr, n int) (h H, off, size int, err error) {
	d.mu.Lock()
	if i, ok := d.t.find(p, n == 0); ok {
		if e := &d.t.ents[i]; uint64(p-e.base)+uint64(n) <= uint64(e.size) && n >= 0 {
			h, off, size = e.h, int(p-e.base), e.size
			d.mu.Unlock()
			return h, off, size, nil
		}
	}
	var s Span[H]
	i, ok := d.t.find(p, true)
	if ok { // p inside, or at the end of, the allocation it extends past
		s = d.t.span(i)
	}
	d.mu.Unlock()
	return h, 0, 0, d.lookupErr(op, p, n, s, ok)
}

func (d *Device[H]) lookupErr(op string, p device.DevicePtr, n int, s Span[H], in bool) error {
	switch {
	case n < 0:
		return d.Errorf(op, device.CodeInvalidArgument, "range at %v: negative length %d", p, n)
	case in:
		return d.Errorf(op, device.CodeInvalidArgument, "range [%v,%#x) extends past allocation [%v,%v)", p, uint64(p)+uint64(n), s.Base, s.End())
	case n == 0:
		return d.Errorf(op, device.CodeInvalidArgument, "%v is not inside any live allocation", p)
	}
	return d.Errorf(op, device.CodeInvalidArgument, "range [%v,%#x) is not inside any live allocation", p, uint64(p)+uint64(n))
}

// Trim empties the cache of freed blocks through MemFree (after their
// fences, for a Fencer) and returns how many bytes it held, with the
// first error.
func (d *Device[H]) Trim() (int64, error) {
	d.mu.Lock()
	n := d.t.cached
	blocks := d.t.takeCache()
	d.mu.Unlock()
	var first error
	for _, b := range blocks {
		var err error
		if d.fencer != nil {
			err = d.fencer.Wait(b.Handle)
		}
		if ferr := d.drv.MemFree(b.Base, b.Handle, b.Size); err == nil {
			err = ferr
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return n, first
}

// Forget empties the table for a device that closes: it returns every live
// allocation and cached block (whose fences, for a Fencer, the plugin
// waits for or Trim has), which the plugin releases with the device;
// MemInUse is 0 afterwards, and a Free of any of them is an error.
func (d *Device[H]) Forget() (live, cached []Span[H]) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cached = d.t.takeCache()
	live = d.t.all()
	d.t.ents, d.t.n, d.t.bytes = nil, 0, 0
	return live, cached
}

// Kernels returns the device's kernel cache, for a runtime that looks
// loaded kernels up on its launch path without a call through
// device.Device.
func (d *Device[H]) Kernels() *kcache.Kernels { return &d.kernels }

// Load returns k loaded on the device (device.Device): from the cache, or
// built once through LoadImage from the first image kind of
// Config.Images that k has. A nil kernel, or one whose declaration is
// wrong (Kernel.Check), is CodeInvalidArgument, so a kernel the cache
// holds has been checked; one with no such image is CodeInvalidBinary
// naming the kinds it has.
func (d *Device[H]) Load(k *device.Kernel) (device.Function, error) {
	if k == nil {
		return nil, d.Errorf("load", device.CodeInvalidArgument, "nil kernel")
	}
	if f, ok := d.kernels.Find(k); ok {
		return f, nil
	}
	return d.kernels.Load(k)
}

// build is the kernel cache's miss: the declaration check, the image
// choice and LoadImage.
func (d *Device[H]) build(k *device.Kernel) (device.Function, error) {
	if err := k.Check(); err != nil {
		return nil, d.Errorf("load "+k.Name, device.CodeInvalidArgument, "%v", err)
	}
	if err := device.CheckNeeds(k, d.id, d.info.Name, d.info.Caps); err != nil {
		return nil, err
	}
	for _, kind := range d.images {
		if img, ok := k.Image(kind); ok && (img.Host != nil || strings.TrimSpace(img.Source) != "") {
			f, err := d.drv.LoadImage(k, img)
			var de *device.Error
			if err != nil && !errors.As(err, &de) {
				// a bare error of the driver: say which device and kernel
				err = &device.Error{Op: "load " + k.Name, Device: d.id, Code: device.CodeInvalidBinary, Err: err}
			}
			return f, err
		}
	}
	has := make([]string, 0, len(k.Images))
	for _, img := range k.Images {
		kind := img.Kind.String()
		if img.Host == nil && strings.TrimSpace(img.Source) == "" {
			kind += " (empty: no Source or Host)"
		}
		has = append(has, kind)
	}
	if len(has) == 0 {
		has = append(has, "none")
	}
	runs := make([]string, len(d.images))
	for i, kind := range d.images {
		runs[i] = kind.String()
	}
	msg := fmt.Sprintf("kernel %s has no image for %s (has: %s); the device runs %s images", k.Name, d.id,
		strings.Join(has, ", "), strings.Join(runs, " or "))
	if d.hint != "" {
		msg += "; " + d.hint
	}
	return nil, d.Errorf("load "+k.Name, device.CodeInvalidBinary, "%s", msg)
}
