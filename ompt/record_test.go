package ompt

import (
	"strings"
	"testing"
	"unsafe"
)

// traceBuffer builds what a Go tool holds after buffer_complete: a
// target record, a native entry, a data-op record and a kernel record,
// one after the other from the buffer's first aligned offset, then
// zeroes (no entry). It returns the buffer, the first cursor and the
// bytes written.
func traceBuffer(t *testing.T) ([]byte, uint64, uint64) {
	t.Helper()
	mem := make([]uint64, 64) // 8-byte aligned
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), len(mem)*8)
	cur := uint64(0)
	put := func(ev Callback, targetID uint64) {
		r := (*RecordOMPT)(unsafe.Pointer(&buf[cur]))
		r.Type, r.Time, r.TargetID = int32(ev), 1000+cur, targetID
		cur += uint64(RecordOMPTSize)
	}
	put(CallbackTarget, 7)
	h := (*struct {
		Marker int32
		Size   uint32
	})(unsafe.Pointer(&buf[cur]))
	h.Marker, h.Size = NativeMarker, uint32(NativeHeaderSize+16)
	cur += uint64(NativeHeaderSize + 16)
	put(CallbackTargetDataOp, 7)
	put(CallbackTargetSubmit, 7)
	return buf, 0, cur
}

// TestRecordsWalksACompletedPart: a Go tool ranges over the part of a
// buffer buffer_complete hands it: every entry, in order, with its kind,
// and nothing past the bytes written; RecordAt gives the OMPT records
// (nil for the native one) and each record's body accessor answers only
// for its own event.
func TestRecordsWalksACompletedPart(t *testing.T) {
	buf, begin, bytes := traceBuffer(t)
	type seen struct {
		cur  uint64
		kind RecordKind
	}
	var got []seen
	for cur, kind := range Records(buf, bytes, begin) {
		got = append(got, seen{cur, kind})
	}
	ompt := uint64(RecordOMPTSize)
	native := uint64(NativeHeaderSize + 16)
	want := []seen{{0, RecordKindOMPT}, {ompt, RecordKindNative}, {ompt + native, RecordKindOMPT}, {2*ompt + native, RecordKindOMPT}}
	if len(got) != len(want) {
		t.Fatalf("Records yielded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: cursor %d kind %v, want cursor %d kind %v", i, got[i].cur, got[i].kind, want[i].cur, want[i].kind)
		}
	}
	events := []Callback{CallbackTarget, 0, CallbackTargetDataOp, CallbackTargetSubmit}
	for i, s := range got {
		r := RecordAt(buf, s.cur)
		if events[i] == 0 {
			if r != nil {
				t.Errorf("RecordAt(native entry at %d) = %+v, want nil", s.cur, r)
			}
			continue
		}
		if r == nil {
			t.Fatalf("RecordAt(%d) = nil, want the %v record", s.cur, events[i])
		}
		if r.Event() != events[i] || r.TargetID != 7 || r.Time != 1000+s.cur {
			t.Errorf("RecordAt(%d): event %v target %d time %d, want %v 7 %d", s.cur, r.Event(), r.TargetID, r.Time, events[i], 1000+s.cur)
		}
		if (r.Target() != nil) != (events[i] == CallbackTarget) ||
			(r.DataOp() != nil) != (events[i] == CallbackTargetDataOp) ||
			(r.Kernel() != nil) != (events[i] == CallbackTargetSubmit) {
			t.Errorf("record %v: Target %v, DataOp %v, Kernel %v: want only its own body", events[i], r.Target() != nil, r.DataOp() != nil, r.Kernel() != nil)
		}
	}
	if r := RecordAt(buf, bytes); r != nil {
		t.Errorf("RecordAt past the last entry (zeroes) = %+v, want nil", r)
	}

	// A tool that stops early gets no more entries.
	n := 0
	for range Records(buf, bytes, begin) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("break after 2 entries: the loop ran %d times", n)
	}
	// A part that starts later yields only what follows.
	n = 0
	for cur := range Records(buf, bytes, ompt+native) {
		if cur < ompt+native {
			t.Errorf("Records from %d yielded cursor %d", ompt+native, cur)
		}
		n++
	}
	if n != 2 {
		t.Errorf("Records from the third entry yielded %d entries, want 2", n)
	}
}

// TestRegisterToolNilStart: RegisterTool with a nil start function
// panics, naming the tool.
func TestRegisterToolNilStart(t *testing.T) {
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "nil-start-tool") || !strings.Contains(s, "nil start") {
			t.Errorf("RegisterTool(nil start) panicked with %v; want a message naming the tool and the nil start", r)
		}
	}()
	RegisterTool("nil-start-tool", nil)
}

// TestCallbackString: every event number omp-tools.h defines has its
// name; numbers outside the table are printed as numbers.
func TestCallbackString(t *testing.T) {
	for c, want := range map[Callback]string{
		CallbackThreadBegin:  "ompt_callback_thread_begin",
		CallbackTarget:       "ompt_callback_target",
		37:                   "ompt_callback_error",
		0:                    "ompt_callback(0)",
		-1:                   "ompt_callback(-1)",
		38:                   "ompt_callback(38)",
		CallbackTargetSubmit: "ompt_callback_target_submit",
	} {
		if got := c.String(); got != want {
			t.Errorf("Callback(%d).String() = %q, want %q", int(c), got, want)
		}
	}
}

// TestTargetKindNowait: exactly the four nowait kinds say Nowait.
func TestTargetKindNowait(t *testing.T) {
	for k := TargetKind(0); k <= 14; k++ {
		want := k == KindTargetNowait || k == KindTargetEnterDataNowait || k == KindTargetExitDataNowait || k == KindTargetUpdateNowait
		if got := k.Nowait(); got != want {
			t.Errorf("%v.Nowait() = %v, want %v", k, got, want)
		}
	}
}
