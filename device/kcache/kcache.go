// Package kcache is a device's kernel cache: the runtime finds a kernel
// loaded before through it without a lock or a call into the plugin
// (Find), and the generic plugin layer (device/generic) loads through it.
// Both use it; neither needs the other.
package kcache

import (
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
)

// Kernels is a device's kernel cache: each kernel loaded once, by its
// pointer, and found again without a lock. It is the only kernel cache
// between a construct and a plugin: the runtime asks it first (Find), and
// calls the device's Load only for a kernel it does not hold yet. The
// zero Kernels holds nothing and loads nothing; the plugin's device sets
// its builder (Init).
type Kernels struct {
	d          func(*device.Kernel) (device.Function, error) // builds a kernel (Device.build)
	keepErrors bool                                          // a failed load is kept (Config.KeepLoadErrors)

	last atomic.Pointer[loaded]                     // the kernel found last, tried first
	m    atomic.Pointer[map[*device.Kernel]*loaded] // the kernels loaded, copy on write

	mu    sync.Mutex                 // serialises the writers of m
	loads map[*device.Kernel]*loaded // the loads begun (and not failed, unless keepErrors); under mu
}

// loaded is one kernel's load: once, then its function or error.
type loaded struct {
	k    *device.Kernel
	once sync.Once
	f    device.Function
	err  error
}

// Find returns k's function if k has loaded on the device, without a lock
// or an allocation: a loop launching one kernel costs one atomic load and
// a compare; others a map lookup, which makes theirs the last (a store).
// A nil *Kernels holds nothing.
func (c *Kernels) Find(k *device.Kernel) (device.Function, bool) {
	if c == nil {
		return nil, false
	}
	if l := c.last.Load(); l != nil && l.k == k {
		return l.f, true
	}
	return c.find(k)
}

func (c *Kernels) find(k *device.Kernel) (device.Function, bool) {
	if m := c.m.Load(); m != nil {
		if l, ok := (*m)[k]; ok {
			c.last.Store(l)
			return l.f, true
		}
	}
	return nil, false
}

// Load builds k once (concurrent loads of k wait for the first; loads of
// other kernels go on) and keeps the function. A load that fails is
// forgotten, so that the next one tries again, unless keepErrors.
func (c *Kernels) Load(k *device.Kernel) (device.Function, error) {
	c.mu.Lock()
	l, ok := c.loads[k]
	if !ok {
		if c.loads == nil {
			c.loads = map[*device.Kernel]*loaded{}
		}
		l = &loaded{k: k}
		c.loads[k] = l
	}
	c.mu.Unlock()
	l.once.Do(func() {
		f, err := c.d(k)
		if err == nil && f == nil {
			err = device.Errorf("", "load "+k.Name, device.CodeUnknown, "the plugin loaded no function")
		}
		if err != nil {
			l.err = err
			if c.keepErrors {
				return
			}
			c.mu.Lock()
			if c.loads[k] == l {
				delete(c.loads, k)
			}
			c.mu.Unlock()
			return
		}
		l.f = f
		c.mu.Lock()
		old := c.m.Load()
		m := make(map[*device.Kernel]*loaded, 1+len(deref(old)))
		for kk, v := range deref(old) {
			m[kk] = v
		}
		m[k] = l
		c.m.Store(&m)
		c.mu.Unlock()
	})
	if l.err != nil {
		return nil, l.err
	}
	c.last.Store(l)
	return l.f, nil
}

// Take empties the cache, once the loads in flight have ended, and
// returns the functions it held, for a plugin that releases them when its
// device closes. A later Load builds the kernel again.
func (c *Kernels) Take() []device.Function {
	c.mu.Lock()
	ls := c.loads
	c.loads = nil
	c.mu.Unlock()
	var out []device.Function
	for _, l := range ls {
		l.once.Do(func() {}) // a load in flight ends first
		if l.f != nil {
			out = append(out, l.f)
		}
	}
	c.mu.Lock()
	c.m.Store(nil)
	c.last.Store(nil)
	c.mu.Unlock()
	return out
}

func deref[M any](p *M) M {
	var z M
	if p == nil {
		return z
	}
	return *p
}

// Init sets the cache's builder, build (the plugin's load of a kernel),
// and whether a failed load is kept (keepErrors) rather than tried again
// at the next Load. It is called once, before any Load.
func (c *Kernels) Init(build func(*device.Kernel) (device.Function, error), keepErrors bool) {
	c.d, c.keepErrors = build, keepErrors
}

// Of returns the kernel cache of d, a device that keeps one or a wrapper
// that passes one on (a method Kernels() *Kernels), or nil.
func Of(d device.Device) *Kernels {
	if c, ok := d.(interface{ Kernels() *Kernels }); ok {
		return c.Kernels()
	}
	return nil
}
