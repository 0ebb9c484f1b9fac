// Package plan is the compiler's third phase: it makes each kernel's plan
// once, after the checks pass, for the emitters to read (see Kernel).
//
// Files, by concern: kernel.go (the order of one kernel's planning), the
// index prover in prove.go (the prover, its model of int expressions,
// Prove and the buffers' maps), poly.go (polynomials), env.go (the ranges
// in force, narrowed by conditions), walk.go (walking the statements) and
// inrange.go (proofs that an index is in range); sites.go (the run-time
// checks), needs.go (what a kernel needs of a device), work.go (a point's
// work), team.go and view.go (those constructs), the form of the Go image:
// host.go, lanes.go, reslice.go, rows.go and split.go, and wide.go (the
// points a CPU OpenCL device's work-item runs together).
package plan

import "github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"

// Kernel makes k's plan, once, after the checks pass (a team kernel's
// team plan is made with the checks, by CheckTeams, since it decides
// whether its barriers are allowed): the indexes proven in range, the
// run-time checks of its device code, what it needs of a device, a
// point's work, and its Go image's form. The emitters read the plan;
// none writes it.
func Kernel(g *ir.Program, k *ir.Kernel) {
	NewProver(g, k).Prove()
	Needs(g, k)
	Sites(g, k)
	Work(g, k)
	Host(g, k)
	Wide(k)
}
