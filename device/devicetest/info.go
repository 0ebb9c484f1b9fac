package devicetest

import (
	"reflect"
	"slices"
	"testing"

	"github.com/gompt/gompt/device"
)

func (s *suite) testInfo(t *testing.T) {
	info := s.dev.Info()
	if info.Name == "" || info.Backend == "" {
		t.Errorf("Info: Name %q, Backend %q: both must be set", info.Name, info.Backend)
	}
	switch info.Type {
	case "", "gpu", "cpu", "accelerator":
	default:
		t.Errorf("Info.Type = %q, want gpu, cpu, accelerator or empty", info.Type)
	}
	if info.MaxAlloc == 0 {
		t.Errorf("Info.MaxAlloc = 0, want the largest allocation")
	}
	if info.GlobalMem != 0 && info.MaxAlloc > info.GlobalMem {
		t.Errorf("Info.MaxAlloc %d > GlobalMem %d", info.MaxAlloc, info.GlobalMem)
	}
	if info.ComputeUnits <= 0 || info.MaxThreadsPerTeam <= 0 {
		t.Errorf("Info: ComputeUnits %d, MaxThreadsPerTeam %d: want both > 0", info.ComputeUnits, info.MaxThreadsPerTeam)
	}
	if info.MaxTeams < 0 || info.ClockMHz < 0 || info.TimerResolutionNS < 0 {
		t.Errorf("Info: MaxTeams %d, ClockMHz %d, TimerResolutionNS %v: want none negative", info.MaxTeams, info.ClockMHz, info.TimerResolutionNS)
	}
	for i, a := range info.Extra {
		if a.Key == "" {
			t.Errorf("Info.Extra[%d] has an empty key (value %q)", i, a.Value)
		}
	}
	if im, ok := s.dev.(interface{ Images() []device.ImageKind }); ok {
		if r, ok := device.Registered(info.Backend); ok && !slices.Equal(r.Images, im.Images()) {
			t.Errorf("the device runs %v images (generic.Config.Images), but plugin %s registered %v (device.Registration.Images): list the same kinds, best first",
				im.Images(), info.Backend, r.Images)
		}
	}
	if again := s.dev.Info(); !reflect.DeepEqual(info, again) {
		t.Errorf("Info changed between calls:\n%+v\n%+v", info, again)
	}
	c := info.Caps
	if c.TeamSize.N <= 0 || c.TeamSize.N > int64(info.MaxThreadsPerTeam) || c.LocalMem.N < 0 {
		t.Errorf("Info.Caps: TeamSize %d, LocalMem %d: want 0 < TeamSize <= MaxThreadsPerTeam %d, LocalMem >= 0",
			c.TeamSize.N, c.LocalMem.N, info.MaxThreadsPerTeam)
	}
	for _, f := range []device.Feature{c.FP64, c.Int64Atomics} {
		if f.Name == "" {
			t.Errorf("Info.Caps: a feature has no name (%+v): messages name what a device lacks", c)
		}
	}
	if ds, ok := s.dev.(device.Describer); ok {
		desc, err := ds.Describe()
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		if desc.TimeSource == "" || desc.Name != info.Name || !reflect.DeepEqual(desc.Caps, info.Caps) {
			t.Errorf("Describe: TimeSource %q, Name %q, Caps %+v; want a time source and Info's name and capabilities (%q, %+v)",
				desc.TimeSource, desc.Name, desc.Caps, info.Name, info.Caps)
		}
		s.brackets = desc.BracketTimes
	} else {
		if info.TimeSource == "" {
			t.Errorf("Info.TimeSource is empty and the device does not implement device.Describer")
		}
		s.brackets = info.BracketTimes
	}
	t0, err := s.dev.Now()
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	for range 100 {
		t1, err := s.dev.Now()
		if err != nil || t1 < t0 {
			t.Fatalf("Now went from %d to %d (err %v): want monotonic", t0, t1, err)
		}
		t0 = t1
	}
}
