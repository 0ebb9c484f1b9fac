package omptrt

import (
	"strings"
	"sync"
	"sync/atomic"
)

// nativeTypes interns NativeInfo.Type names: the buffer holds an index.
// Lookups read an immutable snapshot (no lock); a new name copies it.
var (
	nativeMu    sync.Mutex
	nativeIdx   atomic.Pointer[map[string]uint32]
	nativeNames atomic.Pointer[[]string]
)

const maxNativeTypes = 255

// internNative returns the index of name; 0 ("native") for "" or when
// maxNativeTypes names exist. name does not escape (the caller's
// NativeInfo may live on its stack).
func internNative(name string) uint32 {
	if m := nativeIdx.Load(); m != nil {
		if i, ok := (*m)[name]; ok {
			return i
		}
	}
	if name == "" {
		return 0
	}
	return internSlow(strings.Clone(name))
}

func internSlow(name string) uint32 {
	nativeMu.Lock()
	defer nativeMu.Unlock()
	old := map[string]uint32{}
	if m := nativeIdx.Load(); m != nil {
		old = *m
	}
	if i, ok := old[name]; ok {
		return i
	}
	var names []string
	if p := nativeNames.Load(); p != nil {
		names = *p
	}
	if len(names) == 0 {
		names = []string{"native"} // index 0: an unnamed or overflowing type
	}
	if len(names) > maxNativeTypes {
		return 0
	}
	i := uint32(len(names))
	nn := append(names[:len(names):len(names)], name)
	m := make(map[string]uint32, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = i
	nativeNames.Store(&nn)
	nativeIdx.Store(&m)
	return i
}

func nativeName(i uint32) string {
	if p := nativeNames.Load(); p != nil && int(i) < len(*p) {
		return (*p)[i]
	}
	return "native"
}

// nativeAll is every ompt_native_mon_flag_t flag.
const nativeAll uint32 = 0xff
