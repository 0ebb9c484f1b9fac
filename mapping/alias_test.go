package mapping

import (
	"fmt"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aliasOps is a fakeOps whose maps use the program's memory in place
// (Aliaser), for items of at least min bytes; smaller ones are allocated
// and copied, as a device does with a slice it cannot use in place.
type aliasOps struct {
	*fakeOps
	min     int
	aliases map[device.DevicePtr][]byte
}

func newAliasOps(min int) *aliasOps {
	return &aliasOps{fakeOps: newFake(), min: min, aliases: map[device.DevicePtr][]byte{}}
}

func (a *aliasOps) Alias(it *Item) (device.DevicePtr, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(it.Host) < a.min {
		return 0, false, nil
	}
	if a.fail() {
		a.log = append(a.log, fmt.Sprintf("alias %d failed", len(it.Host)))
		return 0, false, device.Errorf("fake:0", "alias", device.CodeOutOfResources, "%w", errInjected)
	}
	p := a.next
	a.next += device.DevicePtr((len(it.Host) + 0x1000) &^ 0xfff)
	a.aliases[p] = it.Host
	a.log = append(a.log, fmt.Sprintf("alias %d -> %v", len(it.Host), p))
	return p, true, nil
}

func (a *aliasOps) Unalias(p device.DevicePtr, size int, host []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h, ok := a.aliases[p]; !ok || len(h) != size || addr(h) != addr(host) {
		a.log = append(a.log, fmt.Sprintf("unalias %v %d NOT AN ALIAS OF IT", p, size))
		return fmt.Errorf("fake: %v is not an alias of %d bytes of host", p, size)
	}
	delete(a.aliases, p)
	a.log = append(a.log, fmt.Sprintf("unalias %v %d", p, size))
	return nil
}

// An aliased entry is counted, translated and released as any other, but
// nothing is copied for it: not at a to map, an always map, an update or
// a from exit; its release is Unalias. An item the Ops does not alias in
// the same construct is allocated and copied as ever.
func TestAliasedEntriesMoveNoData(t *testing.T) {
	f := newAliasOps(64)
	tab := New("fake:0")
	big, small := make([]byte, 256), make([]byte, 16)
	require.NoError(t, tab.Enter(f, []Item{{Host: big, Type: ToFrom}, {Host: small, Type: ToFrom}}, Structured, nil))
	f.expect(t, "alias 256 -> 0x100000", "alloc 16 -> 0x101000", "copyin 0x101000 16")
	p, err := tab.Translate(big[10:20])
	require.NoError(t, err)
	assert.Equal(t, device.DevicePtr(0x100000+10), p, "a sub-range translates into the alias")
	es := tab.Entries()
	require.Len(t, es, 2)
	if es[0].Size != len(big) { // the entries are in the order of their host addresses
		es[0], es[1] = es[1], es[0]
	}
	assert.True(t, es[0].Aliased)
	assert.Contains(t, es[0].String(), "(the program's memory)")
	assert.False(t, es[1].Aliased)

	// Present: an always map, an update and an inner exit move nothing.
	require.NoError(t, tab.Enter(f, []Item{{Host: big[8:], Type: To, Always: true}}, Dynamic, nil))
	require.NoError(t, tab.Update(f, []Item{{Host: big[:32], Type: To}, {Host: big[32:64], Type: From}, {Host: small, Type: From}}))
	require.NoError(t, tab.Exit(f, []Item{{Host: big[8:], Type: From, Always: true}}, Dynamic))
	f.expect(t, "copyout 0x101000 16")

	require.NoError(t, tab.Exit(f, []Item{{Host: big, Type: ToFrom}, {Host: small, Type: ToFrom}}, Structured))
	f.expect(t, "copyout 0x101000 16", "free 0x101000 16", "unalias 0x100000 256")
	assert.Zero(t, tab.Len())
	assert.Empty(t, f.aliases)

	// A failed alias fails the map, which undoes what it made.
	f.failAt = f.calls + 3
	err = tab.Enter(f, []Item{{Host: small, Type: To}, {Host: big, Type: To}}, Dynamic, nil)
	require.ErrorIs(t, err, errInjected)
	f.expect(t, "alloc 16 -> 0x102000", "copyin 0x102000 16", "alias 256 failed", "free 0x102000 16")
	assert.Zero(t, tab.Len())

	// Undoing a map frees an alias it made with Unalias.
	f.failAt = f.calls + 3
	err = tab.Enter(f, []Item{{Host: big, Type: To}, {Host: small, Type: To}}, Dynamic, nil)
	require.ErrorIs(t, err, errInjected)
	f.expect(t, "alias 256 -> 0x103000", "alloc 16 -> 0x104000", "copyin 0x104000 16 failed", "free 0x104000 16", "unalias 0x103000 256")
	assert.Zero(t, tab.Len())
	assert.Empty(t, f.aliases)
}
