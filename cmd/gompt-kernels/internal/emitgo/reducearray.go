package emitgo

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
)

// arrayGoIdentity is arrayIdentityC in the Go image.
func arrayGoIdentity(w *goWriter, op string, t ir.Scalar) string {
	if t.IsFloat() && op == "+" {
		w.imports["math"] = "gomptmath"
		return "gomptmath.Copysign(0, -1)"
	}
	return goIdentity(w, op, t)
}

// reduceArraysHost makes the Go image's private copies of its reduction
// arrays, each element at its operator's identity: buffer h's name then
// holds a slice of an array of the team's, and the function returned
// combines the copies into the buffers (atomically: teams run at the same
// time).
func reduceArraysHost(g *ir.Program, w *goWriter, k *ir.Kernel) func() {
	if len(k.ReduceArrays) == 0 {
		return func() {}
	}
	var arrays []*ir.Param
	for _, p := range k.Args() {
		if k.ReduceArrays[p] != "" {
			arrays = append(arrays, p)
			name := ir.UpperFirst(p.Name)
			w.p("gomptRB%s := %s", name, p.Name)
			w.p("var gomptRA%s [%d]%s", name, k.ReduceLen[p], p.T.GoName())
			if id := arrayGoIdentity(w, k.ReduceArrays[p], p.T); id != "0" {
				w.p("for gomptI := range gomptRA%s {", name)
				w.p("gomptRA%s[gomptI] = %s(%s)", name, p.T.GoName(), id)
				w.p("}")
			}
			w.p("%s = gomptRA%s[:len(%s)]", p.Name, name, p.Name)
		}
	}
	return func() {
		for _, p := range arrays {
			op := k.ReduceArrays[p]
			name := ir.UpperFirst(p.Name)
			merge := map[string]string{"+": "MergeSum", "*": "MergeProd", "min": "MergeMin", "max": "MergeMax"}[op]
			w.p("gomptrt.%s(gomptRB%s, gomptRA%s[:], %s(%s))", merge, name, name, p.T.GoName(), arrayGoIdentity(w, op, p.T))
		}
	}
}
