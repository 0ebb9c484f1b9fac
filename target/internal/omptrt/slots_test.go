package omptrt

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt/toolslot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slotTool registers target_emi: at each begin it checks that the
// construct's slots start as ompt_data_none and that get_target_info names
// the construct, and writes the target id into target_data; at each end it
// checks the value is still there. hang, if set, is called with the
// target_data slot at each begin.
func slotTool(bad func(string), hang func(td *ompt.Data)) ompt.StartFunc {
	return func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			info := l("ompt_get_target_info").(ompt.GetTargetInfoFunc)
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _, _, td *ompt.Data, _ uintptr) {
				_, id, _, ok := info()
				if !ok {
					bad("get_target_info inside a callback answered no construct")
				}
				if ep == ompt.ScopeBegin {
					if *td != (ompt.Data{}) {
						bad(fmt.Sprintf("construct %d: target_data starts as %+v, want ompt_data_none", id, *td))
					}
					td.Value = id
					if hang != nil {
						hang(td)
					}
				} else if td.Value != id {
					bad(fmt.Sprintf("construct %d: target_data %d at end", id, td.Value))
				}
			}))
			return 1
		}}
	}
}

func currentID() uint64 {
	_, id, _, ok := getTargetInfo()
	if !ok {
		return 0
	}
	return id
}

// More constructs open at once than the table has slots: the extra ones
// get Targets of their own, inquiries still answer the innermost, and
// every Target goes back when its construct ends.
func TestManyOpenConstructs(t *testing.T) {
	reset(t, nil)
	var mu sync.Mutex
	var errs []string
	bad := func(s string) { mu.Lock(); errs = append(errs, s); mu.Unlock() }
	ompt.RegisterTool("deep", slotTool(bad, nil))
	Start(fakeRuntime{1})

	// nested on one goroutine
	const n = activeSlots + 100
	open := make([]*Target, 0, n)
	for range n {
		c := TargetBegin(ompt.KindTargetEnterData, 0, 1)
		require.Equal(t, c.ID(), currentID(), "construct %d open: get_target_info", c.ID())
		open = append(open, c)
	}
	assert.GreaterOrEqual(t, overflowN.Load(), int32(100), "%d constructs open: constructs outside the table", n)
	for i := len(open) - 1; i >= 0; i-- {
		open[i].End()
		var want uint64
		if i > 0 {
			want = open[i-1].ID()
		}
		require.Equal(t, want, currentID(), "after ending construct %d of %d: get_target_info", i, n)
	}
	assert.Zero(t, overflowN.Load(), "all ended: Targets still in the overflow set")

	// the same from 8 goroutines at once, 50 deep each
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var mine []*Target
			for range 50 {
				c := TargetBegin(ompt.KindTarget, 0, 2)
				if got := currentID(); got != c.ID() {
					bad(fmt.Sprintf("construct %d: get_target_info says %d", c.ID(), got))
				}
				mine = append(mine, c)
			}
			for i := len(mine) - 1; i >= 0; i-- {
				mine[i].End()
			}
			if got := currentID(); got != 0 {
				bad(fmt.Sprintf("all of a goroutine's constructs ended: get_target_info says %d", got))
			}
		})
	}
	wg.Wait()
	assert.Zero(t, overflowN.Load(), "all ended: Targets still in the overflow set")
	assert.Empty(t, errs, "what the tool and the goroutines found")
}

// A toolslot word hung beside a target_data slot stays for the next
// construct that reuses the slot, and is freed when the core drops it: an
// overflow Target's at its End, a slot's that a resize removes.
func TestToolSlotWords(t *testing.T) {
	reset(t, nil)
	for i := range activeTab[:activeHi.Load()] {
		for j := range activeTab[i].Load().slots {
			activeTab[i].Load().slots[j].keep = nil // left by earlier tests
		}
	}
	var mu sync.Mutex
	hung := map[unsafe.Pointer]bool{}
	var freed []unsafe.Pointer
	toolslot.Free = func(p unsafe.Pointer) { mu.Lock(); freed = append(freed, p); mu.Unlock() }
	t.Cleanup(func() { toolslot.Free = nil })
	var errs []string
	bad := func(s string) { errs = append(errs, s) }
	hang := func(td *ompt.Data) {
		w := toolslot.Word(unsafe.Pointer(td))
		if *w == nil {
			p := unsafe.Pointer(new(int))
			*w = p
			mu.Lock()
			hung[p] = true
			mu.Unlock()
		}
	}
	ompt.RegisterTool("face", slotTool(bad, hang))
	Start(fakeRuntime{1})

	for range 10 {
		TargetBegin(ompt.KindTarget, 0, 1).End()
	}
	assert.Len(t, hung, 1, "10 constructs one after another: words hung; want 1 kept for all")
	assert.Empty(t, freed, "10 constructs one after another: words freed; want 1 kept for all")

	open := make([]*Target, 0, activeSlots+30)
	for range activeSlots + 30 {
		open = append(open, TargetBegin(ompt.KindTarget, 0, 1))
	}
	over := overflowN.Load()
	for i := len(open) - 1; i >= 0; i-- {
		open[i].End()
	}
	assert.GreaterOrEqual(t, over, int32(30), "overflow constructs")
	assert.Len(t, freed, int(over), "%d overflow constructs ended: words freed, want one each", over)
	for _, p := range freed {
		assert.True(t, hung[p], "freed %p, which no construct hung", p)
	}

	// a Target whose dispatcher has fewer tools keeps what fits
	tg := &Target{slots: make([]toolSlots, 3)}
	a, b, c := unsafe.Pointer(new(int)), unsafe.Pointer(new(int)), unsafe.Pointer(new(int))
	tg.slots[0].keep, tg.slots[1].keep, tg.slots[2].keep = a, b, c
	freed = nil
	tg.resize(1)
	if assert.Len(t, tg.slots, 1, "resize 3 -> 1: slots") {
		assert.Equal(t, a, tg.slots[0].keep, "resize 3 -> 1: kept")
	}
	assert.Equal(t, []unsafe.Pointer{b, c}, freed, "resize 3 -> 1: freed")
	tg.resize(2)
	if assert.Len(t, tg.slots, 2, "resize 1 -> 2: %+v", tg.slots) {
		assert.Equal(t, a, tg.slots[0].keep, "resize 1 -> 2: kept")
		assert.Nil(t, tg.slots[1].keep, "resize 1 -> 2: the new slot's word")
	}
	assert.Empty(t, errs, "what the tool found")
}

// A Go tool whose target callback panics is detached and the program goes
// on; the other tools keep getting every event. A native tool's target
// callbacks are not guarded: its panic reaches the runtime's caller.
func TestCallbackPanic(t *testing.T) {
	warn := reset(t, nil)
	var badCalls, goodCalls int
	ompt.RegisterTool("bad", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ompt.Endpoint, *ompt.Data, *uint64, uint32) {
				badCalls++
				panic("tool bug")
			}))
			return 1
		}}
	})
	ompt.RegisterTool("good", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ompt.Endpoint, *ompt.Data, *uint64, uint32) {
				goodCalls++
			}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	for range 3 {
		emptyConstruct()
	}
	assert.Equal(t, 1, badCalls, "calls of the panicking tool (then detached)")
	assert.Equal(t, 6, goodCalls, "calls of the other tool")
	assert.Contains(t, warn.String(), `OMPT tool "bad": a callback panicked: tool bug; the tool is detached`, "stderr")

	reset(t, nil)
	RegisterFinder("native", func(int, string, func(string)) []Found {
		return []Found{{Name: "libnative.so", Native: true, Result: &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ompt.Endpoint, *ompt.Data, *uint64, uint32) {
				panic("native bug")
			}))
			return 1
		}}}}
	})
	Start(fakeRuntime{1})
	c := TargetBegin(ompt.KindTarget, 0, 1)
	got := func() (r any) {
		defer func() { r = recover() }()
		c.SubmitBegin(1)
		return nil
	}()
	c.End()
	assert.Equal(t, "native bug", got, "a native tool's panic: what SubmitBegin's caller recovered; want the panic to reach it")
}

// A device memory routine's EMI data-op callbacks get a target_data slot
// of the routine's own: never nil, zeroed at the routine's begin, the same
// slot (with what the tool wrote) for every data op of the routine and at
// each end, and target_task_data nil.
func TestRoutineTargetDataSlot(t *testing.T) {
	reset(t, nil)
	var seen []*ompt.Data
	var errs []string
	ompt.RegisterTool("routine", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, _ int, _ *ompt.Data) int {
			l("ompt_set_callback").(ompt.SetCallbackFunc)(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, ttd, td *ompt.Data, hop *uint64, op ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, _ uint64, _ uintptr) {
				if td == nil {
					errs = append(errs, fmt.Sprintf("%v %v: target_data nil", op, ep))
					return
				}
				if ttd != nil {
					errs = append(errs, fmt.Sprintf("%v %v: target_task_data not nil outside a target task", op, ep))
				}
				seen = append(seen, td)
				if ep == ompt.ScopeBegin && op == ompt.DataOpAlloc { // each routine's first op
					if *td != (ompt.Data{}) {
						errs = append(errs, fmt.Sprintf("routine begins with target_data %+v", *td))
					}
					td.Value = 0x7001
				} else if td.Value != 0x7001 {
					errs = append(errs, fmt.Sprintf("%v %v: target_data %#x, want what the tool wrote", op, ep, td.Value))
				}
			}))
			return 1
		}}
	})
	Start(fakeRuntime{1})
	for range 3 {
		r := RoutineBegin(1)
		r.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, 0, 8)
		r.DataOpEnd(0xd000)
		r.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 8)
		r.DataOpEnd(0xd000)
		r.End()
	}
	assert.Empty(t, errs, "what the tool found")
	require.Len(t, seen, 12, "data-op events")
	for i := 0; i < len(seen); i += 4 {
		for j := i + 1; j < i+4; j++ {
			assert.Same(t, seen[i], seen[j], "routine %d: event %d's slot against its first's", i/4, j-i)
		}
	}
}
