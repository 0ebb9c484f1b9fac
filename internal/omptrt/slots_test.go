package omptrt

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/internal/omptrt/toolslot"
	"github.com/gompt/gompt/ompt"
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
		if got := currentID(); got != c.ID() {
			t.Fatalf("construct %d open: get_target_info says %d", c.ID(), got)
		}
		open = append(open, c)
	}
	if got := overflowN.Load(); got < 100 {
		t.Errorf("%d constructs open: %d outside the table, want at least 100", n, got)
	}
	for i := len(open) - 1; i >= 0; i-- {
		open[i].End()
		var want uint64
		if i > 0 {
			want = open[i-1].ID()
		}
		if got := currentID(); got != want {
			t.Fatalf("after ending construct %d of %d: get_target_info says %d, want %d", i, n, got, want)
		}
	}
	if got := overflowN.Load(); got != 0 {
		t.Errorf("all ended: %d Targets still in the overflow set", got)
	}

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
	if got := overflowN.Load(); got != 0 {
		t.Errorf("all ended: %d Targets still in the overflow set", got)
	}
	for _, e := range errs {
		t.Error(e)
	}
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
	if len(hung) != 1 || len(freed) != 0 {
		t.Errorf("10 constructs one after another: %d words hung, %d freed; want 1 kept for all", len(hung), len(freed))
	}

	open := make([]*Target, 0, activeSlots+30)
	for range activeSlots + 30 {
		open = append(open, TargetBegin(ompt.KindTarget, 0, 1))
	}
	over := overflowN.Load()
	for i := len(open) - 1; i >= 0; i-- {
		open[i].End()
	}
	if over < 30 || len(freed) != int(over) {
		t.Errorf("%d overflow constructs ended: %d words freed, want one each", over, len(freed))
	}
	for _, p := range freed {
		if !hung[p] {
			t.Errorf("freed %p, which no construct hung", p)
		}
	}

	// a Target whose dispatcher has fewer tools keeps what fits
	tg := &Target{slots: make([]toolSlots, 3)}
	a, b, c := unsafe.Pointer(new(int)), unsafe.Pointer(new(int)), unsafe.Pointer(new(int))
	tg.slots[0].keep, tg.slots[1].keep, tg.slots[2].keep = a, b, c
	freed = nil
	tg.resize(1)
	if len(tg.slots) != 1 || tg.slots[0].keep != a || len(freed) != 2 || freed[0] != b || freed[1] != c {
		t.Errorf("resize 3 -> 1: slots %d, kept %v (want %v), freed %v (want %v %v)", len(tg.slots), tg.slots[0].keep, a, freed, b, c)
	}
	tg.resize(2)
	if len(tg.slots) != 2 || tg.slots[0].keep != a || tg.slots[1].keep != nil {
		t.Errorf("resize 1 -> 2: %+v", tg.slots)
	}
	for _, e := range errs {
		t.Error(e)
	}
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
	if badCalls != 1 || goodCalls != 6 {
		t.Errorf("panicking tool called %d times (want 1, then detached), the other %d (want 6)", badCalls, goodCalls)
	}
	if !strings.Contains(warn.String(), `OMPT tool "bad": a callback panicked: tool bug; the tool is detached`) {
		t.Errorf("stderr: %q", warn.String())
	}

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
	if got != "native bug" {
		t.Errorf("a native tool's panic: SubmitBegin recovered %v, want the panic to reach its caller", got)
	}
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
	for _, e := range errs {
		t.Error(e)
	}
	if len(seen) != 12 {
		t.Fatalf("%d data-op events, want 12", len(seen))
	}
	for i := 0; i < len(seen); i += 4 {
		for j := i + 1; j < i+4; j++ {
			if seen[j] != seen[i] {
				t.Errorf("routine %d: event %d got slot %p, its first got %p", i/4, j-i, seen[j], seen[i])
			}
		}
	}
}
