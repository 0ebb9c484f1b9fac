package opencl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpace(t *testing.T) {
	s := newSpace(0)
	a, err := s.add(100, 1)
	require.NoError(t, err)
	b, err := s.add(spaceAlign, 2)
	require.NoError(t, err)
	require.NotZero(t, a, "bases 0x%x, 0x%x", a, b)
	require.Greater(t, b, a+100, "bases 0x%x, 0x%x", a, b)
	require.Zero(t, a%spaceAlign, "bases 0x%x, 0x%x", a, b)
	require.Zero(t, b%spaceAlign, "bases 0x%x, 0x%x", a, b)
	for _, tc := range []struct {
		p    uint64
		mem  uintptr
		find bool
	}{
		{a, 1, true}, {a + 99, 1, true}, {a + 100, 0, false}, {a - 1, 0, false},
		{b, 2, true}, {b + spaceAlign - 1, 2, true}, {b + spaceAlign, 0, false},
	} {
		i, ok := s.find(tc.p)
		assert.Equal(t, tc.find, ok, "find(0x%x) = %d, %v", tc.p, i, ok)
		assert.False(t, ok && s.spans[i].mem != tc.mem, "find(0x%x) = %d, %v", tc.p, i, ok)
	}
	_, ok := s.remove(a + 1)
	assert.False(t, ok, "remove of an interior pointer succeeded")
	if sp, ok := s.remove(a); assert.True(t, ok, "remove of a base failed") {
		assert.EqualValues(t, 1, sp.mem, "remove of a base failed")
	}
	_, ok = s.remove(a)
	assert.False(t, ok, "second remove succeeded")
	assert.GreaterOrEqual(t, newSpace(1).lo, s.hi, "device regions overlap")
}

func TestSpaceWraps(t *testing.T) {
	s := newSpace(0)
	s.hi = s.lo + 8*spaceAlign // a tiny region: four one-unit buffers with guards
	var bases []uint64
	for i := 0; i < 4; i++ {
		p, err := s.add(1, uintptr(i+1))
		require.NoError(t, err, "add %d", i)
		bases = append(bases, p)
	}
	_, err := s.add(1, 9)
	require.Error(t, err, "add into a full region succeeded")
	s.remove(bases[1])
	p, err := s.add(spaceAlign, 5)
	require.NoError(t, err, "after a free, add = 0x%x, %v; want the freed range 0x%x", p, err, bases[1])
	require.Equal(t, bases[1], p, "after a free, add = 0x%x, %v; want the freed range 0x%x", p, err, bases[1])
	for i := 1; i < len(s.spans); i++ {
		require.Less(t, s.spans[i-1].base, s.spans[i].base, "spans not sorted")
	}
	_, err = s.add(2*spaceAlign, 6)
	require.Error(t, err, "add larger than any gap succeeded")
}
