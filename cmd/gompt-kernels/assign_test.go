package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"regexp"
	"strings"
	"testing"
)

// assignTarget is one kind of place an assignment stores into, in a
// kernel that has it: what is written for it (T, and U a second one of
// the same kind), the kernel around it, and what the checker says of a
// form it refuses there ("" where it takes every form).
type assignTarget struct {
	name, t, u string
	src        string // the kernel; STMT is the statement under test
	refused    func(form string) string
}

// The kernels the targets live in: a team kernel (buffer elements, team
// arrays, locals), a map kernel with an array reduction (buffer
// elements, a reduction array's elements, locals) and a helper (its
// slice parameter's elements, locals). Every element type is int32, so
// that every operator applies.
const (
	assignTeamKernel = `package k

import "github.com/gompt/gompt/kernelrt"

//gompt:kernel team=64 dims=teams len(in)=teams*64 len(out)=teams*64
func K(t, th int, teams int, in []int32, out []int32) {
	var a, b [64]int32
	var x, y int32
	STMT
	kernelrt.Barrier()
	out[t*64+th] += a[63-th] + b[th] + x + y
}
`
	assignReduceKernel = `package k

//gompt:kernel dims=n reduce(h)=+ reduce(g)=+ len(h)=16 len(g)=16
func K(i int, n int, in []int32, out []int32, h []int32, g []int32) {
	var x, y int32
	STMT
	out[i] += x + y + in[i]
}
`
	assignHelperKernel = `package k

//gompt:func
func f(out []int32, i int) int32 {
	var x, y int32
	STMT
	return x + y
}

//gompt:kernel dims=n
func K(i int, n int, out []int32) { out[i] += f(out, i) }
`
)

// assignForms are the statement forms that store: T and U are the
// target's place, x and y locals, v a value.
var assignForms = []string{
	"T = 3",
	"T += 3",
	"T <<= 3",
	"T++",
	"T--",
	"T, x = 3, T",
	"x, T = T, 3",
	"T, U = U, T",
	"T, _ = 3, 4",
	"_, T = 3, 4",
	"T, x, y = x, y, T",
}

var assignTargets = []assignTarget{
	{name: "team buffer", t: "out[t*64+th]", u: "out[(t*64+th+1)%(teams*64)]", src: assignTeamKernel},
	{name: "team array", t: "a[th]", u: "b[th]", src: assignTeamKernel},
	{name: "team array, index from a local", t: "a[x&63]", u: "b[y&63]", src: assignTeamKernel},
	{name: "team local", t: "x", u: "y", src: assignTeamKernel},
	{name: "buffer", t: "out[i]", u: "out[n-1-i]", src: assignReduceKernel},
	{name: "reduction array", t: "h[i%16]", u: "g[i%16]", src: assignReduceKernel, refused: func(form string) string {
		switch form {
		case "T += 3", "T++", "T--":
			return ""
		}
		return "is reduce(" // h is reduce(h)=+: the kernel may only add to its elements ...
	}},
	{name: "local", t: "x", u: "y", src: assignReduceKernel},
	{name: "helper buffer", t: "out[i]", u: "out[i+1]", src: assignHelperKernel},
	{name: "helper local", t: "x", u: "y", src: assignHelperKernel},
}

// positioned is an error line of the generator: file:line:col, then the
// message.
var positioned = regexp.MustCompile(`^(\S*/)?k\.go:\d+:\d+: \S`)

// Every statement form that stores (=, op=, ++, --, tuples with locals,
// _, and another place of the same kind) into every kind of place a
// kernel stores into (buffer elements, team arrays, reduction arrays,
// locals; in a team kernel, a map kernel and a helper) either generates
// (with clang-19, the OpenCL C compiles to PTX) or is a clear error at its
// position; never an internal error. Tuples into team arrays crashed the
// generator (issue 38).
func TestAssignFormsIntoEveryTarget(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod") // kernelrt's own requirements, into the test module's go.mod
	for _, tg := range assignTargets {
		for _, form := range assignForms {
			stmt := strings.NewReplacer("T", tg.t, "U", tg.u).Replace(form)
			t.Run(tg.name+"/"+form, func(t *testing.T) {
				t.Parallel()
				src := strings.Replace(tg.src, "STMT", stmt, 1)
				dir := writePkg(t, map[string]string{"k.go": src})
				_, err := generate(ir.Options{Dir: dir})
				want := ""
				if tg.refused != nil {
					want = tg.refused(form)
				}
				if want == "" {
					assert.NoError(t, err, "%s", stmt)
					return
				}
				if !assert.Error(t, err, "%s: want an error saying %q", stmt, want) {
					return
				}
				assert.NotContains(t, err.Error(), "internal error", "%s", stmt)
				assert.Contains(t, err.Error(), want, "%s", stmt)
				for _, line := range strings.Split(err.Error(), "\n") {
					assert.Regexp(t, positioned, line, "%s: an error names file:line:col", stmt)
				}
			})
		}
	}
}
