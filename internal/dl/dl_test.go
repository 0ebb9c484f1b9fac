package dl

import (
	"strings"
	"testing"
)

func TestOpenLibc(t *testing.T) {
	if !Available {
		if _, err := Open("libc.so.6"); err == nil || !strings.Contains(err.Error(), "without cgo") {
			t.Fatalf("Open without cgo: got %v, want built-without-cgo error", err)
		}
		return
	}
	l, err := Open("libdoes-not-exist.so.9", "libc.so.6")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Name != "libc.so.6" {
		t.Errorf("opened %q, want libc.so.6", l.Name)
	}
	if p, err := l.Sym("malloc"); err != nil || p == nil {
		t.Errorf("Sym(malloc) = %v, %v", p, err)
	}
	if _, err := l.Sym("no_such_symbol_gompt"); err == nil || !strings.Contains(err.Error(), "no_such_symbol_gompt") {
		t.Errorf("Sym of a missing symbol: %v", err)
	} else if n := strings.Count(err.Error(), "libc.so.6"); n != 1 {
		// not "libc.so.6: /lib/x86_64-linux-gnu/libc.so.6: undefined symbol: ..."
		t.Errorf("Sym of a missing symbol names the library %d times, want once: %v", n, err)
	}
	if _, name, err := l.SymFirst("malloc_v9", "malloc"); err != nil || name != "malloc" {
		t.Errorf("SymFirst = %q, %v", name, err)
	}
}

func TestOpenMissing(t *testing.T) {
	if !Available {
		t.Skip("built without cgo")
	}
	_, err := Open("libgompt-missing.so.1")
	if err == nil || !strings.Contains(err.Error(), "libgompt-missing.so.1") {
		t.Fatalf("got %v, want an error naming the library", err)
	}
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
