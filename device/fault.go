package device

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// FaultKind is what one of a kernel's run-time checks guards against.
type FaultKind uint8

// FaultIndex is an element index out of its buffer's range (Go's "index
// out of range [i] with length n").
const FaultIndex FaultKind = 1

// FaultDivide is an integer division or remainder by zero (Go's "integer
// divide by zero").
const FaultDivide FaultKind = 2

// FaultLoopLimit is a device that ended a kernel's loops before their end:
// Mesa's llvmpipe (rusticl on the CPU) runs at most 65535 loop iterations
// per work-item, all of its loops together, and then leaves every loop at
// its next turn without a word. Kernels that gompt-kernels generates check
// for it where the plugin asks them to (the OpenCL plugin on such a
// device), with a loop that must turn twice, and report it in their fault
// record as check LoopLimitCheck: the results are incomplete.
const FaultLoopLimit FaultKind = 3

// The bounds of a slice expression out of range (Go's "slice bounds out
// of range"), one kind per check Go's run time makes, in its order, with
// its words: for s[lo:hi], FaultSliceCap (hi against s's capacity: "[:hi]
// with capacity c") then FaultSliceOrder (lo against hi: "[lo:hi]"); for
// s[lo:hi:max], FaultSlice3Cap ("[::max] with capacity c"), FaultSlice3Max
// ("[:hi:max]") and FaultSlice3Order ("[lo:hi:]"). A KernelFault's Index
// is the first value the message names, its Len the second. A negative
// first value is named alone, as Go does ("[:-1]", "[-1:]").
const (
	FaultSliceCap FaultKind = 4 + iota
	FaultSliceOrder
	FaultSlice3Cap
	FaultSlice3Max
	FaultSlice3Order
)

// LoopLimitCheck is the check number that device code writes into word 0
// of its fault record for a FaultLoopLimit (a kernel has fewer checks).
const LoopLimitCheck = 0x7fffffff

// FaultSite is one run-time check in a kernel's code: what it guards and
// the source position it reports ("heat.go:14"). Unsigned says that the
// value it checks (the index; a slice expression's first value named) is
// of an unsigned type, which Go names as such: index 1<<63 is
// "[9223372036854775808]", not the int64 the fault record holds.
type FaultSite struct {
	Kind     FaultKind
	Pos      string
	Unsigned bool
}

// FaultRecordSize is the size in bytes of a kernel's fault record, four
// int64 words: the number of the check that failed (1 for Faults[0]; 0
// while none has), the index and the length it found (for FaultIndex),
// and the kernel's FaultTag. The first work-item that fails a check writes
// it (an atomic compare-and-swap of word 0 from 0), so it holds the first
// failure only.
const FaultRecordSize = 32

// FaultTag returns the value a kernel's device code writes into word 3
// of its fault record: a 31-bit FNV-1a hash of its name, which tells a
// queue that ran several checked kernels since its last Sync whose record
// it reads.
func FaultTag(name string) int64 {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h ^= uint32(name[i])
		h *= 16777619
	}
	return int64(h & 0x7fffffff)
}

// KernelFault is the error of a launch whose kernel failed one of its
// run-time checks (Kernel.Faults): Go's own words for it, with the kernel
// and the source position: "kernel Heat (heat.go:14): index out of range
// [1048576] with length 1048576". A Go image reports one by panicking
// with it; the device plugins read it from the kernel's fault record.
type KernelFault struct {
	Kernel string
	Site   FaultSite
	Index  int64  // FaultIndex: the index
	Len    int64  // FaultIndex: the buffer's length
	What   string // Go's own message, from a Go image (GoFault); empty from a device
}

func (f *KernelFault) Error() string {
	if f.Site.Kind == FaultLoopLimit {
		return "kernel " + f.Kernel + ": the device ended its loops early (its driver stops a work-item's loops after a fixed number of iterations in all: 65535 on Mesa's llvmpipe), so the results are incomplete; launch it with more teams or threads, so that each work-item loops less, or on another device"
	}
	s := "kernel " + f.Kernel + " (" + f.Site.Pos + "): "
	if f.What != "" {
		return s + f.What
	}
	index, negative := strconv.FormatInt(f.Index, 10), f.Index < 0
	if f.Site.Unsigned {
		index, negative = strconv.FormatUint(uint64(f.Index), 10), false
	}
	switch f.Site.Kind {
	case FaultIndex:
		s += "index out of range [" + index + "]"
		if !negative {
			s += " with length " + strconv.FormatInt(f.Len, 10)
		}
		return s
	case FaultDivide:
		return s + "integer divide by zero"
	}
	if form, ok := sliceForms[f.Site.Kind]; ok {
		words := strings.Replace(form.pos, "%y", strconv.FormatInt(f.Len, 10), 1)
		if negative {
			words = form.neg
		}
		return s + "slice bounds out of range " + strings.Replace(words, "%x", index, 1)
	}
	return s + fmt.Sprintf("failed check of kind %d", f.Site.Kind)
}

// sliceForms are Go's words for each slice check (runtime's
// boundsErrorFmt and boundsNegErrorFmt): pos, and neg where the first
// value is negative.
var sliceForms = map[FaultKind]struct{ pos, neg string }{
	FaultSliceCap:    {"[:%x] with capacity %y", "[:%x]"},
	FaultSliceOrder:  {"[%x:%y]", "[%x:]"},
	FaultSlice3Cap:   {"[::%x] with capacity %y", "[::%x]"},
	FaultSlice3Max:   {"[:%x:%y]", "[:%x:]"},
	FaultSlice3Order: {"[%x:%y:]", "[%x::]"},
}

// sliceKind is the kind of Go's run-time error msg, "slice bounds out of
// range [...]...", by the form of its bounds.
func sliceKind(msg string) FaultKind {
	b := strings.TrimPrefix(msg, "slice bounds out of range [")
	b, _, _ = strings.Cut(b, "]")
	parts := strings.Split(b, ":")
	switch {
	case len(parts) == 2 && parts[0] == "":
		return FaultSliceCap
	case len(parts) == 2:
		return FaultSliceOrder
	case parts[0] == "" && parts[1] == "":
		return FaultSlice3Cap
	case parts[0] == "":
		return FaultSlice3Max
	}
	return FaultSlice3Order
}

// Fault decodes a fault record read back from a device after k ran: nil
// when no check failed (word 0 is 0) or when the record is not k's (its
// tag is another kernel's), else the *KernelFault. Check LoopLimitCheck
// is a FaultLoopLimit, which any kernel may report; a record whose site
// number k does not have is reported as such, never dropped.
func (k *Kernel) Fault(rec [4]int64) *KernelFault {
	if rec[0] == 0 || rec[3] != FaultTag(k.Name) {
		return nil
	}
	f := &KernelFault{Kernel: k.Name, Index: rec[1], Len: rec[2]}
	if rec[0] == LoopLimitCheck {
		f.Site = FaultSite{Kind: FaultLoopLimit}
		return f
	}
	if rec[0] < 1 || rec[0] > int64(len(k.Faults)) {
		f.Site = FaultSite{Pos: "check " + strconv.FormatInt(rec[0], 10) + " of " + strconv.Itoa(len(k.Faults))}
		return f
	}
	f.Site = k.Faults[rec[0]-1]
	return f
}

// Checked reports whether k's device code makes run-time checks, and so
// takes a fault record as its last argument (see Kernel.Faults).
func (k *Kernel) Checked() bool { return len(k.Faults) > 0 }

// GoFault returns the *KernelFault of a Go image of kernel that panicked
// with v: v itself when it is one, or for a run-time error of Go's own
// checks (an index out of range, an integer division by zero) the fault at
// the position of the frame that failed (pcs, the panicking goroutine's
// stack as runtime.Callers gave it while the panic ran); nil for any other
// panic. Generated images carry //line directives, so the position is the
// kernel's Go source line.
func GoFault(kernel string, v any, pcs []uintptr) *KernelFault {
	if f, ok := v.(*KernelFault); ok {
		return f
	}
	re, ok := v.(runtime.Error)
	if !ok {
		return nil
	}
	msg := strings.TrimPrefix(re.Error(), "runtime error: ")
	var kind FaultKind
	switch {
	case strings.HasPrefix(msg, "index out of range"):
		kind = FaultIndex
	case strings.HasPrefix(msg, "slice bounds out of range"):
		kind = sliceKind(msg)
	case msg == "integer divide by zero":
		kind = FaultDivide
	default:
		return nil
	}
	f := &KernelFault{Kernel: kernel, Site: FaultSite{Kind: kind, Pos: "?"}, What: msg}
	frames := runtime.CallersFrames(pcs)
	panicking := false
	for {
		fr, more := frames.Next()
		switch {
		case fr.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(fr.Function, "runtime."):
			f.Site.Pos = filepath.Base(fr.File) + ":" + strconv.Itoa(fr.Line)
			return f
		}
		if !more {
			return f
		}
	}
}
