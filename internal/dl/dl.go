//go:build cgo

// Package dl opens shared libraries at run time (dlopen, dlsym, dlerror),
// so that plugins can find vendor drivers without linking against them and
// target/internal/cabi can find C tools.
// It is one of the few packages that import "C".
package dl

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

static void *gompt_dlopen(const char *name, int lazy, char **err) {
	void *h = dlopen(name, (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		*err = (char *)e;
	}
	return h;
}

static void *gompt_dlsym(void *h, const char *name, char **err) {
	dlerror();
	void *p = dlsym(h, name);
	if (p == NULL) {
		const char *e = dlerror();
		*err = (char *)e;
	}
	return p;
}

static void *gompt_dlsym_default(const char *name) {
	return dlsym(RTLD_DEFAULT, name);
}

static const char *gompt_dladdr_file(void *addr) {
	Dl_info info;
	if (dladdr(addr, &info) == 0) {
		return NULL;
	}
	return info.dli_fname;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Available reports whether this build can open libraries (cgo is on).
const Available = true

// Lib is an open shared library.
type Lib struct {
	Name string // the name it was opened under
	h    unsafe.Pointer
}

// dlerror's buffer is per thread but dlopen and dlsym are called with the
// goroutine locked to one C call, so a mutex keeps the message with its call.
var mu sync.Mutex

// Open opens the first of names that the dynamic loader can load (names are
// searched as dlopen does: absolute and relative paths as given, bare names
// through the loader's path), resolving every symbol the library uses now
// (RTLD_NOW). The error lists every name tried and why.
func Open(names ...string) (*Lib, error) { return open(false, names) }

// OpenLazy is Open with RTLD_LAZY: functions the library calls are
// resolved when first called, as LLVM's libomp opens OMPT tools (a tool may
// reference functions of a runtime it never calls).
func OpenLazy(names ...string) (*Lib, error) { return open(true, names) }

func open(lazy bool, names []string) (*Lib, error) {
	if len(names) == 0 {
		return nil, errors.New("dl: no library name given")
	}
	mode := C.int(0)
	if lazy {
		mode = 1
	}
	var msgs []string
	for _, n := range names {
		cs := C.CString(n)
		var cerr *C.char
		mu.Lock()
		h := C.gompt_dlopen(cs, mode, &cerr)
		msg := ""
		if h == nil {
			msg = "unknown dlopen error"
			if cerr != nil {
				msg = C.GoString(cerr)
			}
		}
		mu.Unlock()
		C.free(unsafe.Pointer(cs))
		if h != nil {
			return &Lib{Name: n, h: h}, nil
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 1 {
		return nil, errors.New(msgs[0])
	}
	return nil, fmt.Errorf("%q", msgs)
}

// Sym returns the address of symbol name in l.
func (l *Lib) Sym(name string) (unsafe.Pointer, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var cerr *C.char
	mu.Lock()
	p := C.gompt_dlsym(l.h, cs, &cerr)
	msg := ""
	if p == nil && cerr != nil {
		msg = C.GoString(cerr)
	}
	mu.Unlock()
	if p == nil {
		if msg == "" {
			msg = "symbol is NULL"
		}
		if !strings.Contains(msg, l.Name) {
			// dlerror names the library's path ("/usr/lib/libx.so:
			// undefined symbol: f"): add the name only when it does not.
			msg = l.Name + ": " + msg
		}
		return nil, errors.New(msg)
	}
	return p, nil
}

// SymFirst returns the first of names that l defines (for "_v2" names and
// their older forms), and which one it was.
func (l *Lib) SymFirst(names ...string) (unsafe.Pointer, string, error) {
	var first error
	for _, n := range names {
		p, err := l.Sym(n)
		if err == nil {
			return p, n, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, "", first
}

// Default returns the address of name in the global scope of the process
// (RTLD_DEFAULT), or nil: used to find a tool's ompt_start_tool that is
// already linked in or preloaded.
func Default(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.gompt_dlsym_default(cs)
}

// FileOf returns the file name of the loaded object (the program or a
// shared library) that holds addr, as dladdr reports it, or "" if none.
func FileOf(addr unsafe.Pointer) string {
	f := C.gompt_dladdr_file(addr)
	if f == nil {
		return ""
	}
	return C.GoString(f)
}

// Close closes l. Symbols taken from it must not be used afterwards.
func (l *Lib) Close() error {
	if l.h == nil {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	if C.dlclose(l.h) != 0 {
		return fmt.Errorf("%s: dlclose: %s", l.Name, C.GoString(C.dlerror()))
	}
	l.h = nil
	return nil
}
