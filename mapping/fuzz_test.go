package mapping_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/mapping"
	"github.com/stretchr/testify/require"
)

// FuzzMapping drives random sequences of constructs (target enter/exit
// data, target regions and target data regions, target update, associate,
// disassociate, kernels writing device memory, the host writing its memory)
// with random sub-slices of a few host buffers, against both a
// mapping.Table (with devMem, an Ops whose device memory is real byte
// slices) and the reference model of model_test.go. A step may inject a
// device failure at its Nth device operation. After every step it compares
// the error (none, or its code), the device operations performed (alloc,
// copies with the host range they moved, free, in order), the entries and
// their counts, presence and translated offsets, device memory contents and
// host memory contents.
//
// Run it with: go test -fuzz FuzzMapping -fuzztime 3m ./mapping
func FuzzMapping(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prog []byte) {
		h := newHarness()
		h.run(t, prog)
	})
}

const (
	fzBufs = 3  // host buffers
	fzSize = 48 // bytes each
	fzMax  = 80 // steps per input
)

// fuzzSeeds are programs that reach each kind of step; the committed corpus
// under testdata/fuzz/FuzzMapping holds more.
var fuzzSeeds = [][]byte{
	{0, 2, 0, 0, 16, 1, 2, 1, 0, 16, 4},
	{2, 1, 0, 4, 20, 3, 8, 1, 5, 0},
	{5, 0, 1, 10, 0, 2, 1, 1, 12, 4, 3, 8, 6, 1, 10, 4},
	{4, 2, 0, 0, 48, 3, 7, 1, 0, 4, 8, 2, 9, 1, 0, 0, 48, 2},
	{0, 1, 2, 0, 30, 1, 0x21, 1, 2, 5, 10, 2, 1, 0x12, 1, 2, 0, 30, 1},
	{3, 2, 0, 0, 8, 3, 1, 8, 8, 2, 6, 3, 0, 5, 1, 0x31, 7},
}

// devMem is the fake device behind the table: its memory is byte slices
// addressed by DevicePtr, so copies really move data; it logs each
// operation with the host range it concerns, in the model's words, and can
// fail one operation per step.
type devMem struct {
	host   [][]byte
	next   device.DevicePtr
	bufs   map[device.DevicePtr][]byte
	log    []string
	calls  int
	failAt int
}

var errFake = errors.New("fake device: injected failure")

func (d *devMem) where(b []byte) rng {
	return d.whereAddr(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// whereAddr names the host range of n bytes at a as (buffer, lo, hi);
// buffer -1 if it is not in one.
func (d *devMem) whereAddr(a uintptr, n int) rng {
	for i, hb := range d.host {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(hb)))
		if a >= base && a+uintptr(n) <= base+uintptr(len(hb)) {
			lo := int(a - base)
			return rng{i, lo, lo + n}
		}
	}
	return rng{-1, 0, n}
}

func (d *devMem) op(what string) error {
	d.calls++
	if d.failAt != 0 && d.calls == d.failAt {
		d.log = append(d.log, what+" failed")
		return device.Errorf("fake:0", strings.Fields(what)[0], device.CodeUnknown, "%w", errFake)
	}
	d.log = append(d.log, what)
	return nil
}

// alloc makes a device buffer without logging (the user's memory for
// Associate).
func (d *devMem) alloc(n int) device.DevicePtr {
	p := d.next
	d.next += device.DevicePtr(n + 64)
	d.bufs[p] = make([]byte, n)
	return p
}

// mem returns the device bytes [p, p+n), which must lie in one buffer.
func (d *devMem) mem(p device.DevicePtr, n int) ([]byte, error) {
	for base, b := range d.bufs {
		if p >= base && p+device.DevicePtr(n) <= base+device.DevicePtr(len(b)) {
			return b[p-base : int(p-base)+n], nil
		}
	}
	return nil, fmt.Errorf("fake device: [%v,+%d) is not inside a live buffer", p, n)
}

func (d *devMem) Alloc(it *mapping.Item, size int) (device.DevicePtr, error) {
	if size != len(it.Host) {
		return 0, fmt.Errorf("fake device: alloc of %d bytes for an item of %d", size, len(it.Host))
	}
	if err := d.op("alloc " + d.where(it.Host).String()); err != nil {
		return 0, err
	}
	return d.alloc(size), nil
}

func (d *devMem) Free(p device.DevicePtr, size int, host []byte) error {
	if err := d.op("free " + d.where(host).String()); err != nil {
		return err
	}
	b, ok := d.bufs[p]
	if !ok || len(b) != size || len(host) != size {
		return fmt.Errorf("fake device: free %v of %d bytes: live %v, %d bytes, host %d", p, size, ok, len(b), len(host))
	}
	delete(d.bufs, p)
	return nil
}

func (d *devMem) CopyIn(dst device.DevicePtr, src []byte) error {
	if err := d.op("copyin " + d.where(src).String()); err != nil {
		return err
	}
	m, err := d.mem(dst, len(src))
	if err != nil {
		return err
	}
	copy(m, src)
	return nil
}

func (d *devMem) Fence() device.Event           { return nil }
func (d *devMem) After(ev device.Event, _ bool) { d.log = append(d.log, fmt.Sprintf("after %v", ev)) }

func (d *devMem) CopyOut(dst []byte, src device.DevicePtr) error {
	if err := d.op("copyout " + d.where(dst).String()); err != nil {
		return err
	}
	m, err := d.mem(src, len(dst))
	if err != nil {
		return err
	}
	copy(dst, m)
	return nil
}

// userMem is device memory the program allocated itself, for Associate.
type userMem struct {
	r     rng
	p     device.DevicePtr
	model []byte // the model's copy of it
}

// harness runs one fuzz program against the table and the model.
type harness struct {
	tab   *mapping.Table
	dev   *devMem
	m     *model
	host  [][]byte // the real host buffers
	open  [][]mItem
	users []userMem
	steps int
}

func newHarness() *harness {
	h := &harness{tab: mapping.New("fuzz:0"), m: newModel(fzBufs, fzSize)}
	h.dev = &devMem{next: 0x10000, bufs: map[device.DevicePtr][]byte{}}
	for i := range fzBufs {
		b := make([]byte, fzSize)
		for j := range b {
			b[j] = byte(i*fzSize + j)
		}
		copy(h.m.host[i], b)
		h.host = append(h.host, b)
	}
	h.dev.host = h.host
	return h
}

// reader hands out the program's bytes, then zeros.
type reader struct {
	b []byte
	i int
}

func (r *reader) more() bool { return r.i < len(r.b) }
func (r *reader) next() int {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return int(r.b[r.i-1])
}

func (r *reader) rng() rng {
	b := r.next() % fzBufs
	lo := r.next() % fzSize
	n := r.next() % (fzSize - lo + 1) // 0 now and then: an empty item
	return rng{b, lo, lo + n}
}

// items reads up to 4 list items; types cycle through every map type and
// two invalid ones.
func (r *reader) items() []mItem {
	n := 1 + r.next()%4
	its := make([]mItem, n)
	for i := range its {
		its[i].r = r.rng()
		f := r.next()
		its[i].typ = mapping.Type(f % 9) // 0 and 8 are not map types
		its[i].always = f&0x10 != 0
		its[i].present = f&0x20 != 0
	}
	return its
}

func (h *harness) real(its []mItem) []mapping.Item {
	out := make([]mapping.Item, len(its))
	for i, it := range its {
		out[i] = mapping.Item{Host: h.host[it.r.buf][it.r.lo:it.r.hi], Type: it.typ,
			Always: it.always, Present: it.present, Name: fmt.Sprint("item ", i)}
	}
	return out
}

// run executes prog. Each step starts with one byte: its low nibble picks
// the step, its high nibble (mod 4) the device operation of the step that
// fails (0: none).
func (h *harness) run(t *testing.T, prog []byte) {
	r := &reader{b: prog}
	for r.more() && h.steps < fzMax {
		h.steps++
		b := r.next()
		fail := (b >> 4) % 4
		h.dev.calls, h.dev.failAt, h.dev.log = 0, fail, nil
		h.m.calls, h.m.failAt, h.m.log = 0, fail, nil
		var what string
		var want result
		var got error
		switch b & 0xf % 10 {
		case 0: // target enter data
			its := r.items()
			what = fmt.Sprintf("enter data %v", its)
			want = h.m.Enter(its, mapping.Dynamic)
			ptrs := make([]device.DevicePtr, len(its))
			got = h.tab.Enter(h.dev, h.real(its), mapping.Dynamic, ptrs)
			if got == nil {
				h.checkPtrs(t, what, its, ptrs)
			}
		case 1: // target exit data
			its := r.items()
			what = fmt.Sprintf("exit data %v", its)
			want = h.m.Exit(its, mapping.Dynamic)
			got = h.tab.Exit(h.dev, h.real(its), mapping.Dynamic)
		case 2: // a target region: map on entry, a kernel, map on exit
			its := r.items()
			v := byte(r.next())
			what = fmt.Sprintf("target %v (enter)", its)
			want = h.m.Enter(its, mapping.Structured)
			got = h.tab.Enter(h.dev, h.real(its), mapping.Structured, nil)
			h.compare(t, what, want, got)
			if got != nil {
				continue
			}
			for _, it := range its {
				h.kernel(t, it.r, v)
			}
			h.dev.calls, h.dev.log, h.m.calls, h.m.log = 0, nil, 0, nil
			h.dev.failAt, h.m.failAt = 0, 0
			what = fmt.Sprintf("target %v (exit)", its)
			want = h.m.Exit(its, mapping.Structured)
			got = h.tab.Exit(h.dev, h.real(its), mapping.Structured)
		case 3: // target data begins
			its := r.items()
			what = fmt.Sprintf("target data %v (begin)", its)
			want = h.m.Enter(its, mapping.Structured)
			got = h.tab.Enter(h.dev, h.real(its), mapping.Structured, nil)
			if got == nil {
				h.open = append(h.open, its)
			}
		case 4: // the innermost target data region ends
			if len(h.open) == 0 {
				continue
			}
			its := h.open[len(h.open)-1]
			what = fmt.Sprintf("target data %v (end)", its)
			want = h.m.Exit(its, mapping.Structured)
			got = h.tab.Exit(h.dev, h.real(its), mapping.Structured)
			// A failed exit unmaps what it could; the items whose copy
			// or free failed stay mapped with their counts, and the
			// region is ended again with just those.
			h.open = h.open[:len(h.open)-1]
			if len(h.m.kept) > 0 {
				h.open = append(h.open, h.m.kept)
			}
		case 5: // target update
			its := r.items()
			what = fmt.Sprintf("update %v", its)
			want = h.m.Update(its)
			got = h.tab.Update(h.dev, h.real(its))
		case 6: // associate new user memory, or the last association again
			if r.next()%4 == 0 && len(h.users) > 0 {
				u := h.users[len(h.users)-1]
				what = fmt.Sprintf("associate %v again", u.r)
				want = h.m.Associate(u.r, u.p, u.model)
				got = h.tab.Associate(h.host[u.r.buf][u.r.lo:u.r.hi], u.p)
				break
			}
			rr := r.rng()
			what = fmt.Sprintf("associate %v", rr)
			n := max(rr.hi-rr.lo, 1)
			u := userMem{r: rr, p: h.dev.alloc(n), model: make([]byte, n)}
			want = h.m.Associate(rr, u.p, u.model)
			got = h.tab.Associate(h.host[rr.buf][rr.lo:rr.hi], u.p)
			if got == nil {
				h.users = append(h.users, u)
			} else {
				delete(h.dev.bufs, u.p)
			}
		case 7: // disassociate
			rr := r.rng()
			if r.next()%2 == 0 && len(h.users) > 0 {
				rr = h.users[r.next()%len(h.users)].r
			}
			what = fmt.Sprintf("disassociate %v", rr)
			want = h.m.Disassociate(rr)
			got = h.tab.Disassociate(h.host[rr.buf][rr.lo:rr.hi])
		case 8: // a kernel writes the device copy of a range
			rr := r.rng()
			v := byte(r.next())
			if h.m.present(rr) {
				h.kernel(t, rr, v)
			}
			continue
		case 9: // the host writes its memory
			rr := r.rng()
			v := byte(r.next())
			for i := rr.lo; i < rr.hi; i++ {
				h.host[rr.buf][i] += v
				h.m.host[rr.buf][i] += v
			}
			continue
		}
		h.compare(t, what, want, got)
	}
	h.drain(t)
}

// kernel writes device memory of present range r on both sides.
func (h *harness) kernel(t *testing.T, r rng, v byte) {
	t.Helper()
	in, _ := h.m.find(r)
	p, err := h.tab.Translate(h.host[r.buf][r.lo:r.hi])
	if in == nil {
		require.NotNil(t, in, "step %d: kernel on %v: not present in the model", h.steps, r)
	}
	if err != nil {
		require.NoError(t, err, "step %d: kernel on %v: Translate", h.steps, r)
	}
	dm, err := h.dev.mem(p, r.hi-r.lo)
	if err != nil {
		require.NoError(t, err, "step %d: kernel on %v", h.steps, r)
	}
	mm := in.dev[r.lo-in.r.lo : r.hi-in.r.lo]
	for i := range dm {
		dm[i] = dm[i]*3 + v
		mm[i] = mm[i]*3 + v
	}
}

// The harness checks everything after every step of every input the
// fuzzer tries, so its conditions are tested first and testify is called
// only to report a failure: its calls (two t.Helper stack walks each)
// would otherwise halve the fuzzer's executions.

func (h *harness) checkPtrs(t *testing.T, what string, its []mItem, ptrs []device.DevicePtr) {
	t.Helper()
	for i, it := range its {
		p, err := h.tab.Translate(h.host[it.r.buf][it.r.lo:it.r.hi])
		if err != nil {
			require.NoError(t, err, "step %d: %s: item %d: Translate", h.steps, what, i)
		}
		if p != ptrs[i] {
			require.Equal(t, ptrs[i], p, "step %d: %s: item %d: Translate against the pointer Enter gave", h.steps, what, i)
		}
	}
}

// compare checks one step's outcome and then the whole state.
func (h *harness) compare(t *testing.T, what string, want result, got error) {
	t.Helper()
	switch {
	case want.ok && got != nil:
		require.NoError(t, got, "step %d: %s: the model succeeds", h.steps, what)
	case !want.ok && got == nil:
		require.Error(t, got, "step %d: %s: the model fails with %v (injected %v)", h.steps, what, want.code, want.injected)
	case !want.ok && want.injected && !errors.Is(got, errFake):
		require.ErrorIs(t, got, errFake, "step %d: %s: want the injected failure", h.steps, what)
	case !want.ok && !want.injected && device.CodeOf(got) != want.code:
		require.Equal(t, want.code, device.CodeOf(got), "step %d: %s: error code of %v; the model's", h.steps, what, got)
	}
	if !slices.Equal(h.dev.log, h.m.log) {
		require.Equal(t, h.m.log, h.dev.log, "step %d: %s: device operations, the model's against the table's", h.steps, what)
	}
	h.checkState(t, what)
}

// checkState compares the table with the model: entries and counts,
// presence and translation of sub-ranges, device and host memory, and that
// the device holds exactly the entries' buffers and the user's memory.
func (h *harness) checkState(t *testing.T, what string) {
	t.Helper()
	got := h.tab.Entries()
	if len(got) != len(h.m.entries) {
		require.Equal(t, len(h.m.entries), len(got), "step %d: %s: the table's entries against the model's: %v", h.steps, what, got)
	}
	if h.tab.Len() != len(got) {
		require.Equal(t, len(got), h.tab.Len(), "step %d: %s: Len against Entries", h.steps, what)
	}
	owned := 0
	for _, ge := range got {
		gr := h.dev.whereAddr(ge.Host, ge.Size)
		me, _ := h.m.find(gr)
		if me == nil {
			require.NotNil(t, me, "step %d: %s: table entry %v (%v) is not in the model", h.steps, what, ge, gr)
		}
		if me.r != gr {
			require.Equal(t, gr, me.r, "step %d: %s: table entry %v: the model's range", h.steps, what, ge)
		}
		if ge.Associated != me.assoc {
			require.Equal(t, me.assoc, ge.Associated, "step %d: %s: entry %v: associated, against the model", h.steps, what, ge)
		}
		if ge.Structured != me.structured {
			require.Equal(t, me.structured, ge.Structured, "step %d: %s: entry %v: structured count, against the model", h.steps, what, ge)
		}
		if !me.assoc && ge.Dynamic != me.dynamic {
			require.Equal(t, me.dynamic, ge.Dynamic, "step %d: %s: entry %v: dynamic count, against the model", h.steps, what, ge)
		}
		if !me.assoc {
			owned++
			b, ok := h.dev.bufs[ge.Device]
			if !ok {
				require.True(t, ok, "step %d: %s: entry %v: no live device buffer", h.steps, what, ge)
			}
			if len(b) != ge.Size {
				require.Equal(t, ge.Size, len(b), "step %d: %s: entry %v: bytes of its device buffer", h.steps, what, ge)
			}
		}
		dm, err := h.dev.mem(ge.Device, ge.Size)
		if err != nil {
			require.NoError(t, err, "step %d: %s: entry %v", h.steps, what, ge)
		}
		if !slices.Equal(dm, me.dev[:ge.Size]) {
			require.Equal(t, me.dev[:ge.Size], dm, "step %d: %s: entry %v: device memory, the model's against the table's", h.steps, what, ge)
		}
		// Every sub-range translates to its offset in the entry's buffer.
		for lo := gr.lo; lo < gr.hi; lo += 1 + (gr.hi-gr.lo)/5 {
			for hi := lo + 1; hi <= gr.hi; hi += 1 + (gr.hi-lo)/3 {
				p, err := h.tab.Translate(h.host[gr.buf][lo:hi])
				if err != nil {
					require.NoError(t, err, "step %d: %s: translate %d:%d:%d in %v", h.steps, what, gr.buf, lo, hi, ge)
				}
				if want := ge.Device + device.DevicePtr(lo-gr.lo); p != want {
					require.Equal(t, want, p, "step %d: %s: translate %d:%d:%d in %v", h.steps, what, gr.buf, lo, hi, ge)
				}
			}
		}
	}
	if owned+len(h.users) != len(h.dev.bufs) {
		require.Equal(t, len(h.dev.bufs), owned+len(h.users),
			"step %d: %s: live device buffers against %d mapped and %d user buffers (leak or double free)", h.steps, what, owned, len(h.users))
	}
	// Presence of a sample of ranges, including ones straddling entries.
	for b := range fzBufs {
		for lo := 0; lo < fzSize; lo += 5 {
			for _, n := range []int{1, 4, 11} {
				r := rng{b, lo, min(lo+n, fzSize)}
				if got, want := h.tab.IsPresent(h.host[b][r.lo:r.hi]), h.m.present(r); got != want {
					require.Equal(t, want, got, "step %d: %s: IsPresent(%v), against the model", h.steps, what, r)
				}
			}
		}
		if !slices.Equal(h.host[b], h.m.host[b]) {
			require.Equal(t, h.m.host[b], h.host[b], "step %d: %s: host buffer %d, the model's against the table's", h.steps, what, b)
		}
	}
}

// drain ends every open region and unmaps everything, then checks that no
// device memory but the user's is left.
func (h *harness) drain(t *testing.T) {
	t.Helper()
	h.dev.failAt, h.m.failAt = 0, 0
	for len(h.open) > 0 {
		its := h.open[len(h.open)-1]
		h.open = h.open[:len(h.open)-1]
		h.dev.log, h.m.log = nil, nil
		h.compare(t, "drain: end target data", h.m.Exit(its, mapping.Structured), h.tab.Exit(h.dev, h.real(its), mapping.Structured))
		require.Empty(t, h.m.kept, "drain: end target data %v failed with no failure injected", its)
	}
	for _, e := range slices.Clone(h.m.entries) {
		h.dev.log, h.m.log = nil, nil
		if e.assoc {
			h.compare(t, "drain: disassociate", h.m.Disassociate(e.r), h.tab.Disassociate(h.host[e.r.buf][e.r.lo:e.r.hi]))
			continue
		}
		its := []mItem{{r: e.r, typ: mapping.Delete}}
		h.compare(t, "drain: delete", h.m.Exit(its, mapping.Dynamic), h.tab.Exit(h.dev, h.real(its), mapping.Dynamic))
	}
	require.Equal(t, 0, h.tab.Len(), "entries after draining")
	require.Equal(t, len(h.users), len(h.dev.bufs), "device buffers after draining, against the user's")
}
