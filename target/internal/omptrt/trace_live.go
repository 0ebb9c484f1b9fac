package omptrt

import (
	"sync"
	"unsafe"
)

// Buffers the runtime holds or is completing, so the entry points can
// refuse cursors beyond what was delivered or a buffer of another device.
type liveBuf struct {
	b   []byte
	dev int
	end uint64
}

var (
	liveMu sync.Mutex
	live   = map[uintptr]*liveBuf{}
)

func bufKey(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

func registerLive(b []byte, dev int) *liveBuf {
	l := &liveBuf{b: b, dev: dev}
	liveMu.Lock()
	live[bufKey(b)] = l
	liveMu.Unlock()
	return l
}

func setLiveEnd(b []byte, end uint64) {
	liveMu.Lock()
	if l := live[bufKey(b)]; l != nil {
		l.end = end
	}
	liveMu.Unlock()
}

// unregisterLive forgets b, if it is still the registration l: by the time
// its owned completion returns, the tool may have freed the memory and
// another device may have been handed the same address.
func unregisterLive(b []byte, l *liveBuf) {
	liveMu.Lock()
	if k := bufKey(b); live[k] == l {
		delete(live, k)
	}
	liveMu.Unlock()
}

// lookupLive returns the device and delivered extent of a buffer the
// runtime holds; ok is false for a buffer it does not know (already
// handed back, or not a trace buffer).
func lookupLive(b []byte) (dev int, end uint64, ok bool) {
	k := bufKey(b)
	if k == 0 {
		return 0, 0, false
	}
	liveMu.Lock()
	defer liveMu.Unlock()
	if l := live[k]; l != nil {
		return l.dev, l.end, true
	}
	return 0, 0, false
}

// liveOffset returns p's offset in the live buffer that holds it.
func liveOffset(p unsafe.Pointer) (uint64, bool) {
	liveMu.Lock()
	defer liveMu.Unlock()
	for k, l := range live {
		if uintptr(p) >= k && uintptr(p) < k+uintptr(len(l.b)) {
			return uint64(uintptr(p) - k), true
		}
	}
	return 0, false
}

// limitFor is how far entry points may read in b: the delivered extent
// for a buffer the runtime holds, the whole slice otherwise.
func limitFor(b []byte) uint64 {
	if _, end, ok := lookupLive(b); ok {
		return end
	}
	return uint64(len(b))
}
