package target

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A kernel argument that starts where a mapped item starts but is longer
// than the item is refused before the launch, naming the argument: the
// device copy holds only the item, and the kernel would read and write
// past it. An argument that is exactly the item, or a prefix of it, gets
// the item's device copy.
func TestArgumentLongerThanItsItem(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(64)
	err := Target(saxpyRegion(0, 64, 2, x, y, To(x[:32])))
	wantErr(t, 0, "argument x of 64 elements, map(to: x[:32])", err, "kernel saxpy argument 2 (x)", "extends past present mapping")
	checkSaxpy(t, 0, x, y, func(i int) float32 { return float32(2 * i) }) // y unchanged
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the refused region")

	// A prefix of the item: the kernel reads the item's first 16 elements.
	err = Target(saxpyRegion(0, 16, 2, x[:16], y[:16], To(x[:32]), ToFrom(y)))
	require.NoError(t, err, "argument x[:16] of map(to: x[:32])")
	for i := range y {
		want := float32(2 * i)
		if i < 16 {
			want += 2 * x[i]
		}
		require.Equal(t, want, y[i], "y[%d]", i)
	}
}
