package ir

import (
	"go/ast"
	"go/types"
	"strings"
)

// Launchers that choose and compute (the plan; launchers.go emits it).
//
// arg(PARAM)=FUNC in a //gompt:kernel directive makes the launchers
// compute scalar parameter PARAM as FUNC(...) of the kernel's other
// parameters (FUNC's parameters are named as the kernel's), so that the
// caller does not pass it: a team kernel's number of teams, say.
//
// //gompt:variant of=BASE device=SEL[,SEL...], beside the //gompt:kernel
// directive of kernel V, makes V a variant of kernel BASE, as OpenMP's
//
//	#pragma omp declare variant(V) match(device={arch(SEL,...)})
//
// on BASE does: BASE's launchers run V on a device that matches one of
// the selectors, BASE elsewhere. The launchers of both take the same
// parameters (V's less those its arg(PARAM)= computes), checked here.

// launchPlan is what a kernel's launchers do beyond mapping and launching.
type launchPlan struct {
	ArgText map[*Param]string      // arg(PARAM)=FUNC as written
	Derived map[*Param]*Derivation // resolved by checkLaunchers

	VariantDir *ast.Comment // its //gompt:variant, nil for none
	Of         string       // of=: the base kernel's Go function name
	Selectors  []string     // device=
	Base       *Kernel      // the kernel it is a variant of
	Variants   []*Kernel    // the kernels that are variants of it, in source order
}

// Derivation is a parameter the launchers compute: fn(args...).
type Derivation struct {
	Fn   *types.Func
	Args []*Param
}

// SelectorNames are the values of device=: backends (device.Info.Backend),
// device types (device.Info.Type), and the initial device, as
// target.MatchDevice reads them.
var SelectorNames = []string{"host", "opencl", "cuda", "gpu", "cpu", "accelerator", "initial"}

func (k *Kernel) LaunchPlan() *launchPlan {
	if k.Launch == nil {
		k.Launch = &launchPlan{}
	}
	return k.Launch
}

// DerivedParam returns how the launchers compute p, nil when the caller
// passes it.
func (k *Kernel) DerivedParam(p *Param) *Derivation {
	if k.Launch == nil {
		return nil
	}
	return k.Launch.Derived[p]
}

// LaunchParams are the launchers' parameters: the kernel's args less
// those the launchers compute.
func (k *Kernel) LaunchParams() []*Param {
	var ps []*Param
	for _, p := range k.Args() {
		if k.DerivedParam(p) == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// Variants are the kernels whose //gompt:variant names k, in source order.
func (k *Kernel) Variants() []*Kernel {
	if k.Launch == nil {
		return nil
	}
	return k.Launch.Variants
}

// VariantFunc is the name of the function that says which kernel k's
// launchers run on a device (a kernel with variants): RunMatmul's is
// MatmulVariant.
func VariantFunc(k *Kernel) string {
	rest := k.RunName[3:]
	if k.RunName[0] == 'r' {
		return strings.ToLower(rest[:1]) + rest[1:] + "Variant"
	}
	return rest + "Variant"
}
