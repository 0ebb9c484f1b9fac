package corpus

import (
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A view's own length bounds its indexes: an index past it fails with
// Go's message and the view's length, on every device, though the buffer
// holds the element; the next launch is clean.
func TestViewIndexOutOfRange(t *testing.T) {
	const rows, w = 300, 5
	a := make([]float32, rows*w)
	for i := range a {
		a[i] = float32(i)
	}
	at := func() []int {
		at := make([]int, rows)
		for r := range at {
			at[r] = r % w
		}
		return at
	}
	pos := posOf(t, "ViewIndex", "out[r] = row[at[r]]")
	for _, dev := range devices() {
		what := target.Describe(dev)
		for _, bad := range []struct {
			idx  int
			want string
		}{
			{w, `index out of range \[5\] with length 5`},
			{w * 3, `index out of range \[15\] with length 5`},
			{-1, `index out of range \[-1\]`},
		} {
			idx := at()
			idx[rows/2] = bad.idx
			out := filled(rows, -1)
			checkFault(t, RunViewIndex(target.Dev(dev), rows, w, a, idx, out), "ViewIndex", pos, bad.want, what)
			if dev != target.InitialDevice {
				assert.Equal(t, filled(rows, -1), out, "%s: out after the failed construct", what)
			}
		}
		out := filled(rows, -1)
		require.NoError(t, RunViewIndex(target.Dev(dev), rows, w, a, at(), out), what)
		for r := range out {
			require.Equal(t, a[r*w+r%w], out[r], "%s: out[%d]", what, r)
		}
	}
}

// A slice expression's bounds out of range fail with Go's words for each
// of Go's checks (the high bound against the capacity, the low against
// the high; a three-index slice's max, high and low), at the line of the
// expression, on every device.
func TestViewBoundsOutOfRange(t *testing.T) {
	const rows, m = 200, 40
	a := make([]float32, m)
	for i := range a {
		a[i] = float32(i) / 4
	}
	good := func() (lo, hi, c []int) {
		lo, hi, c = make([]int, rows), make([]int, rows), make([]int, rows)
		for r := range lo {
			lo[r] = r % 7
			hi[r] = lo[r] + 2 + r%3
			c[r] = 3
		}
		return lo, hi, c
	}
	rangePos := posOf(t, "ViewBounds", "range a[lo[r]:hi[r]]")
	resPos := posOf(t, "ViewBounds", "w := v[1:2:c[r]]")
	const bad = rows - 3
	for _, dev := range devices() {
		what := target.Describe(dev)
		for _, c := range []struct {
			lo, hi, c int
			pos, want string
		}{
			{0, m + 1, 3, rangePos, `slice bounds out of range \[:41\] with capacity 40`},
			{0, -2, 3, rangePos, `slice bounds out of range \[:-2\]`},
			{5, 3, 3, rangePos, `slice bounds out of range \[5:3\]`},
			{-1, 2, 3, rangePos, `slice bounds out of range \[-1:\]`},
			{4, 8, m, resPos, `slice bounds out of range \[::40\] with capacity 36`},
			{4, 8, 1, resPos, `slice bounds out of range \[:2:1\]`},
		} {
			lo, hi, cc := good()
			lo[bad], hi[bad], cc[bad] = c.lo, c.hi, c.c
			out := filled(rows, -1)
			checkFault(t, RunViewBounds(target.Dev(dev), rows, m, lo, hi, cc, a, out), "ViewBounds", c.pos, c.want, what)
		}
		lo, hi, cc := good()
		out := filled(rows, -1)
		require.NoError(t, RunViewBounds(target.Dev(dev), rows, m, lo, hi, cc, a, out), what)
		want := make([]float32, rows)
		for r := range want {
			ViewBounds(r, rows, m, lo, hi, cc, a, want)
		}
		require.Equal(t, want, out, what)
	}
}

// A bad bound in a team kernel's view fails the launch; the team's
// threads still meet at the barrier, and a good launch gives the Go
// function's bits.
func TestTeamViewBounds(t *testing.T) {
	const teams = 5
	n := teams * 64
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i%17) / 8
	}
	good := func() (lo, hi []int) {
		lo, hi = make([]int, n), make([]int, n)
		for i := range lo {
			lo[i] = i % 61
			hi[i] = (64 - lo[i]) / 2
		}
		return lo, hi
	}
	// Each thread's sum, in the kernel's order: its view, then the team
	// array's elements before its own.
	want := make([]float32, n)
	lo, hi := good()
	for i := range want {
		part := in[i/64*64 : i/64*64+64]
		var s float32
		for _, v := range part[lo[i]:][:hi[i]] {
			s += v
		}
		for _, v := range part[:i%64] {
			s += v
		}
		want[i] = s
	}
	pos := posOf(t, "TeamView", "range from[:hi[t*64+th]]")
	for _, dev := range devices() {
		what := target.Describe(dev)
		// from's capacity runs to the end of in, as Go's: past its
		// length, within its capacity, is still good.
		lo, hi := good()
		hi[2*64+9] = n - 2*64 - lo[2*64+9]
		out := filled(n, -1)
		require.NoError(t, RunTeamView(target.Dev(dev), teams, in, lo, hi, out), what+": up to from's capacity")
		hi[2*64+9]++
		checkFault(t, RunTeamView(target.Dev(dev), teams, in, lo, hi, out), "TeamView", pos, `slice bounds out of range \[:178\] with capacity 177`, what)
		// A view declared in a leaf of the team's image fails at its
		// own line too.
		lo, hi = good()
		lo[3*64+5] = 70
		checkFault(t, RunTeamView(target.Dev(dev), teams, in, lo, hi, out), "TeamView", posOf(t, "TeamView", "from := part[lo[t*64+th]:]"), `slice bounds out of range \[70:64\]`, what)
		lo, hi = good()
		out = filled(n, -1)
		require.NoError(t, RunTeamView(target.Dev(dev), teams, in, lo, hi, out), what)
		require.Equal(t, want, out, what)
	}
}
