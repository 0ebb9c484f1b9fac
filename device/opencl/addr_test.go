package opencl

import "testing"

func TestSpace(t *testing.T) {
	s := newSpace(0)
	a, err := s.add(100, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.add(spaceAlign, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a == 0 || b <= a+100 || a%spaceAlign != 0 || b%spaceAlign != 0 {
		t.Fatalf("bases 0x%x, 0x%x", a, b)
	}
	for _, tc := range []struct {
		p    uint64
		mem  uintptr
		find bool
	}{
		{a, 1, true}, {a + 99, 1, true}, {a + 100, 0, false}, {a - 1, 0, false},
		{b, 2, true}, {b + spaceAlign - 1, 2, true}, {b + spaceAlign, 0, false},
	} {
		i, ok := s.find(tc.p)
		if ok != tc.find || ok && s.spans[i].mem != tc.mem {
			t.Errorf("find(0x%x) = %d, %v", tc.p, i, ok)
		}
	}
	if _, ok := s.remove(a + 1); ok {
		t.Error("remove of an interior pointer succeeded")
	}
	if sp, ok := s.remove(a); !ok || sp.mem != 1 {
		t.Error("remove of a base failed")
	}
	if _, ok := s.remove(a); ok {
		t.Error("second remove succeeded")
	}
	if s2 := newSpace(1); s2.lo < s.hi {
		t.Error("device regions overlap")
	}
}

func TestSpaceWraps(t *testing.T) {
	s := newSpace(0)
	s.hi = s.lo + 8*spaceAlign // a tiny region: four one-unit buffers with guards
	var bases []uint64
	for i := 0; i < 4; i++ {
		p, err := s.add(1, uintptr(i+1))
		if err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
		bases = append(bases, p)
	}
	if _, err := s.add(1, 9); err == nil {
		t.Fatal("add into a full region succeeded")
	}
	s.remove(bases[1])
	p, err := s.add(spaceAlign, 5)
	if err != nil || p != bases[1] {
		t.Fatalf("after a free, add = 0x%x, %v; want the freed range 0x%x", p, err, bases[1])
	}
	for i := 1; i < len(s.spans); i++ {
		if s.spans[i-1].base >= s.spans[i].base {
			t.Fatal("spans not sorted")
		}
	}
	if _, err := s.add(2*spaceAlign, 6); err == nil {
		t.Fatal("add larger than any gap succeeded")
	}
}
