package target

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// disjointChunks are the sub-slices of a []float32 of disjointLen elements
// that the disjoint-write tests give to concurrent constructs: chunk k
// starts at element 65k, byte offset 260k, which is 4k modulo 128 (POCL's
// base address alignment), so the 32 chunks cover every alignment class a
// float32 sub-slice can have, the aligned one included; the 25 elements
// after each chunk are a gap no construct writes.
var disjointChunks = func() (cs [][2]int) {
	for k := range 32 {
		cs = append(cs, [2]int{65 * k, 65*k + 40})
	}
	return cs
}()

const disjointLen = 32 * 65

// checkDisjoint checks a after rounds rounds of +1 on each chunk: rounds
// inside the chunks, 0 in the gaps.
func checkDisjoint(t *testing.T, a []float32, rounds int, what string) {
	t.Helper()
	bad := 0
	for i, v := range a {
		want := float32(0)
		for _, c := range disjointChunks {
			if i >= c[0] && i < c[1] {
				want = float32(rounds)
			}
		}
		if v != want && bad < 5 {
			bad++
			assert.Equal(t, want, v, "%s: A[%d]", what, i)
		}
	}
}

// One array mapped once; constructs on several goroutines (or nowait
// constructs from one goroutine) each add 1, 100 times, to their own
// disjoint chunk of it through a sub-slice, at byte offsets in every
// alignment class. No write may be lost: on OpenCL an argument at an
// unaligned offset runs through a temporary copy of its buffer, and before
// the fix that copy went back whole after the kernel, over the chunks other
// queues wrote meanwhile (chunks came back with 53..93 instead of 100).
func TestDisjointSubslicesWrittenConcurrently(t *testing.T) {
	r, cl := clRuntime(t)
	const n, rounds = disjointLen, 100
	for _, dev := range withCL(cl, 0) {
		for _, mode := range []string{"goroutines", "nowait"} {
			t.Run(fmt.Sprintf("%s/%s", r.devs[dev].id, mode), func(t *testing.T) {
				a := make([]float32, n)
				ones := make([]float32, n)
				for i := range ones {
					ones[i] = 1
				}
				require.NoError(t, EnterData(dev, To(a), To(ones)))
				step := func(c [2]int) Region {
					lo, hi := c[0], c[1]
					// x at the same offset as y: one alignment class per
					// construct in ones too.
					return saxpyRegion(dev, hi-lo, 1, ones[lo:hi], a[lo:hi])
				}
				switch mode {
				case "goroutines":
					var wg sync.WaitGroup
					errs := make([]error, len(disjointChunks))
					for k, c := range disjointChunks {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range rounds {
								if err := Target(step(c)); err != nil {
									errs[k] = err
									return
								}
							}
						}()
					}
					wg.Wait()
					for k, err := range errs {
						require.NoError(t, err, "chunk %v", disjointChunks[k])
					}
				case "nowait":
					for range rounds {
						var tasks []*Task
						for _, c := range disjointChunks {
							tasks = append(tasks, TargetNowait(step(c)))
						}
						for k, tk := range tasks {
							require.NoError(t, tk.Wait(), "chunk %v", disjointChunks[k])
						}
					}
				}
				require.NoError(t, ExitData(dev, From(a), Release(ones)))
				checkDisjoint(t, a, rounds, r.devs[dev].id+" "+mode)
			})
		}
	}
}
