package main

import (
	"github.com/gompt/gompt/cmd/gompt-kernels/internal/ir"
	"github.com/stretchr/testify/assert"
	"strings"
	"testing"
)

// len(buf)= is a sum and difference of products of whole numbers and
// signed integer parameters, with Go's precedence: it becomes the buffer's
// Param.Len (the same text), its length in the OpenCL C (computed as Go
// does, 0 when negative) and in the Go image (kernelrt.Len of the sum).
// Anything else is an error at the directive that says what a length is.
func TestLenDirective(t *testing.T) {
	for _, c := range []struct {
		len, want string // want: the Param.Len, or (err) a part of the error
		c, goLen  string // a part of the OpenCL C's and the Go image's lengths
		err       bool
	}{
		{len: "m*k", want: "m*k", c: "gompt_lenpos((long)((ulong)(long)m * (ulong)(long)k))", goLen: "gomptrt.Len(m, k)"},
		{len: "rows", want: "rows", c: "((long)rows > 0 ? (long)rows : 0)", goLen: "gomptrt.Len(rows)"},
		{len: "rows+1", want: "rows+1", c: "gompt_lenpos((long)((ulong)(long)rows + (ulong)1L))", goLen: "gomptrt.Len(rows+1)"},
		{len: "n-1", want: "n-1", c: "gompt_lenpos((long)((ulong)(long)n - (ulong)1L))", goLen: "gomptrt.Len(n-1)"},
		{len: "2*n+1", want: "2*n+1", c: "gompt_lenpos((long)((ulong)2L * (ulong)(long)n + (ulong)1L))", goLen: "gomptrt.Len(2*n+1)"},
		{len: "m*k+n", want: "m*k+n", c: "gompt_lenpos((long)((ulong)(long)m * (ulong)(long)k + (ulong)(long)n))", goLen: "gomptrt.Len(m*k+n)"},
		{len: "1-m*k+s*2", want: "1-m*k+s*2", c: "gompt_lenpos((long)((ulong)1L - (ulong)(long)m * (ulong)(long)k + (ulong)(long)s * (ulong)2L))", goLen: "gomptrt.Len(1-m*k+int(s)*2)"},
		{len: "rows+", want: `"" is not a term`, err: true},
		{len: "+rows", want: `"" is not a term`, err: true},
		{len: "rows+-1", want: `"" is not a term`, err: true},
		{len: "rows+(1)", want: `"(1)" is not a term; a length is a sum or difference (+, -) of products (*) of whole numbers and signed integer parameters, as rows+1 or m*k-1`, err: true},
		{len: "rows+i", want: `"i" is not a signed integer parameter of K (the indices do not count)`, err: true},
		{len: "rows-u", want: `"u" is not a signed integer parameter of K`, err: true},
		{len: "rows-f", want: `"f" is not a signed integer parameter of K`, err: true},
		{len: "rows*b", want: `"b" is not a signed integer parameter of K`, err: true},
		{len: "rows+99999999999999999999", want: `"99999999999999999999" is not a whole number of an int64`, err: true},
	} {
		src := "package k\n\n//gompt:kernel dims=n len(b)=" + c.len + "\nfunc K(i int, n int, rows, m, k int, s int32, u uint64, f float32, b []float32) { b[0] = 1 }\n"
		dir := writePkg(t, map[string]string{"k.go": src})
		out, err := generate(ir.Options{Dir: dir, Clang: "no-such-clang"})
		if c.err {
			if assert.Error(t, err, "len(b)=%s", c.len) {
				assert.Contains(t, err.Error(), "k.go:3:1: //gompt:kernel: len(b)="+c.len+": ", "len(b)=%s: the directive's position", c.len)
				assert.Contains(t, err.Error(), c.want, "len(b)=%s", c.len)
				assert.NotContains(t, err.Error(), "internal error", "len(b)=%s", c.len)
			}
			continue
		}
		if !assert.NoError(t, err, "len(b)=%s", c.len) {
			continue
		}
		gofile := string(out[ir.GoFileName])
		assert.Contains(t, gofile, `{Name: "b", Kind: gomptdevice.ParamBuffer, Elem: gomptdevice.ParamFloat32, Len: "`+c.want+`"}`, "len(b)=%s: Param.Len", c.len)
		assert.Contains(t, string(out["gompt_K.cl"]), "long gompt_len_b = "+c.c+";", "len(b)=%s: the OpenCL C's length", c.len)
		assert.Contains(t, gofile, "b := gomptrt.View[float32](gomptA.Bufs[7], "+c.goLen+")", "len(b)=%s: the Go image's length", c.len)
		assert.Equal(t, 4, strings.Count(gofile, c.goLen), "len(b)=%s: the Go image, the launcher, its nowait form and the Sample each compute it", c.len)
	}
}
