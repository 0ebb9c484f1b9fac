package devicetest

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
)

func (s *suite) testProfile(t *testing.T) {
	q := newQueue(t, s.dev)
	p, ok := q.(device.Profiler)
	if !ok {
		t.Skipf("queue %T does not implement device.Profiler", q)
	}
	const n = 1 << 20 // above a host queue's inline limit: the large copies are queued
	a, b := alloc(t, s.dev, n), alloc(t, s.dev, n)
	src, got := pattern(n, 30), make([]byte, n)
	p.Profile(true)
	t0, err := s.dev.Now()
	must(t, "Now", err)
	type timed struct {
		what   string
		launch bool
		tm     device.Timing
	}
	var ops []timed
	step := func(what string, launch bool, err error) {
		t.Helper()
		must(t, what, err)
		tm := p.Last()
		if tm == nil {
			t.Fatalf("Last after %s with profiling on = nil", what)
		}
		if r, ok := tm.(device.ReadyTiming); ok && r.Ready() {
			// Ready: the operation is over, so it ended before now.
			now, err := s.dev.Now()
			must(t, "Now", err)
			begin, end, _, err := tm.Times()
			must(t, what+" Times when Ready", err)
			if begin <= 0 || end < begin || end > now {
				t.Errorf("%s: Ready, but Times = [%d, %d]; want 0 < begin <= end <= Now %d read after Ready", what, begin, end, now)
			}
		}
		ops = append(ops, timed{what, launch, tm})
	}
	step("small CopyIn", false, q.CopyIn(a, src[:64])) // a host queue runs it inline: Ready
	step("CopyIn", false, q.CopyIn(a, src))
	step("Copy", false, q.Copy(b, a, n))
	if len(s.runnable) > 0 {
		rk := s.runnable[0]
		_, args := s.upload(t, q, rk.k, rk.smp)
		step("Launch "+rk.k.Name, true, q.Launch(rk.f, rk.smp.Shape, args))
	}
	step("CopyOut", false, q.CopyOut(got, b))
	must(t, "Sync", q.Sync())
	t1, err := s.dev.Now()
	must(t, "Now", err)
	sameBytes(t, "copied out", got, src)
	prev, prevBegin := t0, t0
	for _, o := range ops {
		begin, end, nat, err := o.tm.Times()
		must(t, o.what+" Times", err)
		switch {
		case s.brackets:
			// Host readings that bracket each operation: begins and ends
			// each in queue order, within the readings around the work.
			if begin <= 0 || end < begin || begin < prevBegin || end < prev || end > t1 {
				t.Errorf("%s: [%d, %d] (bracketing times), want 0 < begin <= end, begin not before %d (Now before the work, or the previous operation's begin), end not before %d (the previous operation's end) nor after Now %d after the Sync",
					o.what, begin, end, prevBegin, prev, t1)
			}
		case begin <= 0 || end < begin || begin < prev || end > t1:
			t.Errorf("%s: [%d, %d], want 0 < begin <= end, begin not before %d (Now before the work, or the previous operation's end), end not after Now %d after the Sync",
				o.what, begin, end, prev, t1)
		}
		prev, prevBegin = max(prev, end), max(prevBegin, begin)
		if why := nativeAgrees(nat, begin, end); why != "" || nat.Type == "" {
			t.Errorf("%s: native record %+v does not agree with the times [%d, %d] for its kind (%s), or has no type", o.what, nat, begin, end, why)
		}
		if (nat.Teams > 0) != o.launch {
			t.Errorf("%s: native record reports %d teams; want > 0 for a launch, 0 for a copy", o.what, nat.Teams)
		}
		b2, e2, nat2, err := o.tm.Times()
		if err != nil || b2 != begin || e2 != end || nat2 != nat {
			t.Errorf("%s: second Times = %d, %d, %+v, %v; want the first's", o.what, b2, e2, nat2, err)
		}
		if sp, ok := o.tm.(device.SpanTiming); ok {
			// the runtime takes Span for Times where no tool wants the
			// native record: the same times and teams
			b3, e3, teams, err := sp.Span()
			if err != nil || b3 != begin || e3 != end || teams != nat.Teams {
				t.Errorf("%s: Span = %d, %d, %d teams, %v; want Times' %d, %d, %d teams", o.what, b3, e3, teams, err, begin, end, nat.Teams)
			}
		}
	}
	last := p.Last()
	p.Profile(false)
	must(t, "CopyIn", q.CopyIn(a, src))
	must(t, "Sync", q.Sync())
	if p.Last() != last {
		t.Errorf("Last changed after an operation with profiling off")
	}
}

// nativeAgrees says why native record n of an operation timed [begin,
// end] is wrong, or "": its kind must be registered (device.NativeTypeOf),
// its Start and End fields the times, and its plugin's own check
// (NativeType.Check) must pass.
func nativeAgrees(n device.Native, begin, end int64) string {
	nt, ok := device.NativeTypeOf(n.Kind)
	if !ok {
		return fmt.Sprintf("kind %d is not registered", n.Kind)
	}
	b := n.Bytes()
	if len(b) != nt.Size {
		return fmt.Sprintf("%d bytes, want %d (%v)", len(b), nt.Size, nt)
	}
	if s, _ := nt.Field(b, "Start"); int64(s) != begin {
		return fmt.Sprintf("Start %d", int64(s))
	}
	if e, _ := nt.Field(b, "End"); int64(e) != end {
		return fmt.Sprintf("End %d", int64(e))
	}
	if err := nt.Check(n); err != nil {
		return err.Error()
	}
	return ""
}
