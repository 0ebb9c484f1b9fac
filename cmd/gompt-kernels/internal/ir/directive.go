package ir

import (
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	KernelDirective  = "//gompt:kernel"
	FuncDirective    = "//gompt:func"
	VariantDirective = "//gompt:variant" // variant.go
)

// TypeHint says what to use instead of an unsupported type.
func TypeHint(t types.Type) string {
	switch u := t.(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return "strings are not device data"
		case u.Info()&types.IsComplex != 0:
			return "use two float slices"
		case u.Kind() == types.Uintptr || u.Kind() == types.UnsafePointer:
			return "pointers are not device data"
		}
	case *types.Named, *types.Alias:
		if _, ok := t.Underlying().(*types.Basic); ok {
			return "use its underlying type " + t.Underlying().String()
		}
		return "kernels take bool, int, int8-int64, uint8-uint64, float32 and float64 scalars and slices of them"
	case *types.Pointer:
		return "pointers are not device data; pass a slice"
	case *types.Map:
		return "maps are not device data"
	case *types.Slice:
		return "slices of bool, integer and float types only"
	case *types.Array:
		return "arrays are not supported; pass a slice"
	case *types.Chan:
		return "channels are not device data"
	case *types.Signature:
		return "function values are not supported; call a //gompt:func helper"
	case *types.Struct:
		return "structs are not supported; pass one slice per field"
	case *types.Interface:
		return "interfaces are not device data"
	}
	return "kernels take bool, int, int8-int64, uint8-uint64, float32 and float64 scalars and slices of them"
}

func IsIndex(k *Kernel, p *Param) bool {
	for _, q := range k.Index {
		if q == p {
			return true
		}
	}
	return p == k.Thread && p != nil
}

func UpperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func IsExported(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// DirectiveFields splits a directive comment's text after prefix into its
// KEY=VALUE fields (a // comment after it dropped), in order. A field that
// is not KEY=VALUE (fail is told of it, with keys: what the keys are) or
// whose key came before is left out.
func DirectiveFields(text, prefix, keys string, fail func(format string, args ...any)) [][2]string {
	text = strings.TrimPrefix(text, prefix)
	if i := strings.Index(text, " //"); i >= 0 { // a comment after the directive
		text = text[:i]
	}
	var out [][2]string
	seen := map[string]bool{}
	for _, field := range strings.Fields(text) {
		key, val, ok := strings.Cut(field, "=")
		if !ok || val == "" {
			fail("%q is not KEY=VALUE; the keys are %s", field, keys)
			continue
		}
		if seen[key] {
			fail("%s given twice", key)
			continue
		}
		seen[key] = true
		out = append(out, [2]string{key, val})
	}
	return out
}
