package emitc

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// cfunc emits one Go function (a kernel's body or a helper) as an OpenCL C
// function with Go's semantics.
type cfunc struct {
	g     *ir.Program
	f     *ir.Fn
	pre   *prelude
	b     strings.Builder
	depth int
	names map[*types.Var]string
	used  map[string]bool
	lens  map[*ir.Param]string // a buffer's length variable
	views map[*types.Var]*cview
	tmp   int
	stack []*branchTarget
	file  *cfile // the kernel file f is emitted into: its checks
	marks int    // the checks and calls of checking helpers emitted so far

	// callsFirst is set while an assignment's, a declaration's or an
	// expression statement's values are written, where each is
	// evaluated once, unconditionally: a call of a helper that writes a
	// slice is then made into a temporary on a line of its own, before
	// the statement reads any element, as gc orders it (C leaves the
	// operands of an expression unsequenced: clang read h[i] before
	// h[i] += take(h, i) changed it).
	callsFirst bool

	// wide, in a wide body (wide.go), writes each leaf once per point.
	wide *wideLanes

	// flat is set for a function that would test its stop flag in more
	// than flatAbove places (flat.go): the statements after a check run
	// each under a test of the flag, where others return.
	flat        bool
	predeclared map[*types.Var]bool // the locals flat declared before their statement
}

// cfile is what the functions of one kernel's OpenCL C file share: the
// kernel, its run-time checks (device.Kernel.Faults) and which of its
// helpers make checks. Every function of a file whose kernel checks takes
// the fault record and the work-item's stop flag as its last parameters;
// a failed check records itself (the first in the kernel) and sets the
// flag, and each function returns once the statement that failed is done.
type cfile struct {
	k      *ir.Kernel
	faulty map[*ir.Fn]bool
	used   map[int]bool // the plan's sites the C checks
}

// branchTarget is a loop or switch that break or continue may leave.
type branchTarget struct {
	node              ast.Stmt
	label             string
	isSwitch          bool
	hasPost           bool
	id                int
	breakUsed, contUs bool
}

func (c *cfunc) info() *types.Info { return c.g.P.Info }

func (c *cfunc) line(format string, args ...any) {
	c.b.WriteString(strings.Repeat("  ", c.depth))
	fmt.Fprintf(&c.b, format, args...)
	c.b.WriteByte('\n')
}

func (c *cfunc) newTmp() string {
	c.tmp++
	return "gompt_t" + ir.Itoa(c.tmp)
}

func (c *cfunc) typeOf(e ast.Expr) ir.Scalar {
	s, _ := ir.ScalarOf(c.info().TypeOf(e))
	return s
}

// helperName is the C name of a //gompt:func helper, and bodyName that of
// a kernel's body function.
func helperName(f *ir.Fn) string { return "gompt_f_" + f.Name }

func bodyName(k *ir.Kernel) string { return "gompt_body_" + k.Name }

// emit writes f as a C function. The parameters of a kernel body are the
// Go function's, each slice followed by its length.
func (c *cfunc) emit() string {
	c.names = map[*types.Var]string{}
	c.used = map[string]bool{}
	c.lens = map[*ir.Param]string{}
	var params []string
	for _, p := range c.f.Params {
		if c.wide != nil && p.Obj == c.f.Kernel.Index[0].Obj {
			params = append(params, "long "+wideFirst) // the first point's index
			continue
		}
		name := ir.CName(p.Name, c.used)
		c.names[p.Obj] = name
		if p.Slice {
			cst := ""
			if !p.Written {
				cst = "const "
			}
			space := "__global"
			if c.isReduceArray(p) {
				space = "__local" // the team's private copy (reducearray.go)
			}
			params = append(params, fmt.Sprintf("%s %s%s *%s", space, cst, p.T.CMem(), name))
			ln := ir.CName("gompt_len_"+p.Name, c.used)
			c.lens[p] = ln
			params = append(params, "long "+ln)
		} else {
			params = append(params, p.T.C()+" "+name)
		}
	}
	params = append(params, c.teamParams()...)
	ret := "void"
	if c.f.Result != nil {
		ret = c.f.Result.C()
	}
	name := helperName(c.f)
	attrs := "static"
	if c.f.Kernel != nil {
		name = bodyName(c.f.Kernel)
		attrs = inl
	}
	if c.wide != nil {
		name = wideName(c.f.Kernel)
	}
	if len(params) == 0 {
		params = append(params, faultParams)
	} else {
		params[len(params)-1] += faultParamsNext
	}
	c.line("%s %s %s(%s) {", attrs, ret, name, strings.Join(params, ", "))
	c.depth++
	if c.wide != nil {
		c.wideIndexes()
	}
	c.stmts(c.f.Decl.Body.List)
	if c.flat && c.f.Result != nil {
		c.line("return %s;", c.zero(*c.f.Result)) // the return may have been passed over
	}
	c.depth--
	c.line("}")
	text := c.b.String()
	if !c.flat && c.marks > 0 && c.file.k.Team == 0 && strings.Count(text, stopMark) > flatAbove {
		flat := &cfunc{g: c.g, f: c.f, pre: c.pre, file: c.file, wide: c.wide, flat: true}
		return flat.emit()
	}
	// A function that makes checks, or calls a helper that does, returns
	// once its work-item's stop flag is set: after each statement that
	// checks, and at the top of each loop (whose condition may check).
	// Not in a team kernel, whose threads must all reach its barriers:
	// there a failed check records itself and the thread goes on, its
	// failed loads reading 0 and its failed stores dropped.
	stop := ""
	if c.marks > 0 {
		c.file.faulty[c.f] = true
		switch {
		case c.file.k.Team > 0:
		case c.f.Result != nil:
			stop = "if (*gompt_stop) return " + c.zero(*c.f.Result) + ";"
		default:
			stop = "if (*gompt_stop) return;"
		}
	}
	var out strings.Builder
	for _, ln := range strings.SplitAfter(text, "\n") {
		if t := strings.TrimSpace(ln); t == stopMark {
			if stop != "" {
				out.WriteString(strings.Replace(ln, stopMark, stop, 1))
			}
			continue
		}
		out.WriteString(ln)
	}
	return out.String()
}

// sub returns what emit writes, without writing it.
func (c *cfunc) sub(emit func()) string {
	save := c.b
	c.b = strings.Builder{}
	emit()
	out := c.b.String()
	c.b = save
	return out
}
