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
