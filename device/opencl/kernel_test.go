//go:build cgo

package opencl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The ranges a staged launch copies back: sorted, disjoint, merged where
// they overlap or touch, empty ones dropped, gaps kept (bytes between two
// arguments belong to nobody in the launch and must not go back).
func TestAddRange(t *testing.T) {
	var rs [][2]uint64
	rs = addRange(rs, 100, 200)
	rs = addRange(rs, 300, 400)
	assert.Equal(t, [][2]uint64{{100, 200}, {300, 400}}, rs, "two disjoint ranges")
	rs = addRange(rs, 50, 60)
	assert.Equal(t, [][2]uint64{{50, 60}, {100, 200}, {300, 400}}, rs, "a range before the others")
	rs = addRange(rs, 60, 100)
	assert.Equal(t, [][2]uint64{{50, 200}, {300, 400}}, rs, "a range touching two merges them")
	rs = addRange(rs, 150, 350)
	assert.Equal(t, [][2]uint64{{50, 400}}, rs, "an overlapping range")
	rs = addRange(rs, 500, 500)
	assert.Equal(t, [][2]uint64{{50, 400}}, rs, "an empty range adds nothing")
	rs = addRange(rs, 401, 402)
	assert.Equal(t, [][2]uint64{{50, 400}, {401, 402}}, rs, "a one-byte gap stays")
}
