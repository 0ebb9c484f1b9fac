package emitgo

import (
	"fmt"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// What the jams share (lanes.go's jam of a uniform loop, pointjam.go,
// sumjam.go).

// jamLoop writes the head of the loop that runs ir.Jam turns of counter
// ctr at a time while at least that many are left before bound.
// bound-ctr, where ctr < bound, wraps only past the largest int: the turns
// then run one at a time.
func (b *gobody) jamLoop(ctr, bound string) {
	b.line("for ; %s < %s && %s-%s >= %d; %s += %d {", ctr, bound, bound, ctr, ir.Jam, ctr, ir.Jam)
}

// apartCond is the run-time test that every buffer of written is apart
// from every buffer of reads but itself (kernelrt.Apart), "true" for
// none; it marks them used.
func (b *gobody) apartCond(written, reads []*ir.Param) string {
	var apart []string
	for _, w := range written {
		b.used[w.Obj] = true
		for _, r := range reads {
			b.used[r.Obj] = true
			if r != w {
				apart = append(apart, fmt.Sprintf("gomptrt.Apart(%s, %s)", w.Name, r.Name))
			}
		}
	}
	if len(apart) == 0 {
		return "true"
	}
	return strings.Join(apart, " && ")
}

// jamTurns is each jammed turn's substitutions: turn t > 0 has counter
// ctr + t and locals named gompt<t><Name>; turn 0 keeps the names (nil).
func jamTurns(ctr *types.Var, locals []*types.Var) []map[*types.Var]string {
	turns := make([]map[*types.Var]string, ir.Jam)
	for t := 1; t < ir.Jam; t++ {
		turns[t] = map[*types.Var]string{ctr: fmt.Sprintf("(%s + %d)", ctr.Name(), t)}
		for _, v := range locals {
			turns[t][v] = fmt.Sprintf("gompt%d%s", t, ir.UpperFirst(v.Name()))
		}
	}
	return turns
}
