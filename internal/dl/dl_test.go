package dl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenLibc(t *testing.T) {
	if !Available {
		_, err := Open("libc.so.6")
		require.ErrorContains(t, err, "without cgo", "Open without cgo")
		return
	}
	l, err := Open("libdoes-not-exist.so.9", "libc.so.6")
	require.NoError(t, err)
	defer l.Close()
	assert.Equal(t, "libc.so.6", l.Name, "the library opened")
	p, err := l.Sym("malloc")
	if assert.NoError(t, err, "Sym(malloc)") {
		assert.NotNil(t, p, "Sym(malloc)")
	}
	_, err = l.Sym("no_such_symbol_gompt")
	if assert.ErrorContains(t, err, "no_such_symbol_gompt", "Sym of a missing symbol") {
		// not "libc.so.6: /lib/x86_64-linux-gnu/libc.so.6: undefined symbol: ..."
		assert.Equal(t, 1, strings.Count(err.Error(), "libc.so.6"), "times Sym's error names the library: %v", err)
	}
	_, name, err := l.SymFirst("malloc_v9", "malloc")
	assert.NoError(t, err, "SymFirst")
	assert.Equal(t, "malloc", name, "SymFirst")
}

func TestOpenMissing(t *testing.T) {
	if !Available {
		t.Skip("built without cgo")
	}
	_, err := Open("libgompt-missing.so.1")
	require.ErrorContains(t, err, "libgompt-missing.so.1", "the error names the library")
}

// TestOpenLazyAndFileOf: OpenLazy opens what Open opens; FileOf names the
// library that holds a symbol taken from it, and nothing for an address in
// no loaded object.
func TestOpenLazyAndFileOf(t *testing.T) {
	if !Available {
		if _, err := OpenLazy("libc.so.6"); err == nil {
			t.Error("OpenLazy without cgo succeeded")
		}
		return
	}
	l, err := OpenLazy("libdoes-not-exist.so.9", "libm.so.6")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p, err := l.Sym("cos")
	if err != nil {
		t.Fatal(err)
	}
	if f := FileOf(p); !strings.Contains(f, "libm.so.6") {
		t.Errorf("FileOf(cos) = %q, want the path of libm.so.6", f)
	}
	if f := FileOf(nil); f != "" {
		t.Errorf("FileOf(nil) = %q, want \"\"", f)
	}
	if p := Default("malloc"); p == nil {
		t.Error("Default(malloc) = nil; libc is in every cgo program")
	}
	if p := Default("no_such_symbol_gompt"); p != nil {
		t.Errorf("Default of a missing symbol = %p", p)
	}
	if _, err := OpenLazy("libgompt-missing.so.1"); err == nil || !strings.Contains(err.Error(), "libgompt-missing.so.1") {
		t.Errorf("OpenLazy of a missing library: %v", err)
	}
}
