package plan

import "github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"

// Host plans k's Go image (a team kernel's is its team plan): its lanes
// where they pay, else the buffers resliced at the point, a split at a
// stencil's boundary, the rows its loops walk, and the loops whose turns
// run together.
func Host(g *ir.Program, k *ir.Kernel) {
	if k.Team > 0 {
		return
	}
	if k.Reduce == "" {
		k.Lanes = Lanes(g, k)
	}
	if k.Lanes != nil {
		return
	}
	k.Resliced = Resliced(g, k)
	if k.Reduce == "" {
		k.Rows = RowsOf(g, k, k.Decl.Body.List)
		k.Split = Split(g, k)
		if k.Split != nil {
			k.Split.InRows = RowsOf(g, k, k.Split.Interior)
			k.Split.EdgeRows = RowsOf(g, k, k.Split.Edge)
		}
	}
	k.PointJams = PointJams(g, k)
	k.SumJams = SumJams(g, k)
	k.LoopRows = LoopRows(g, k)
}
