//go:build cgo

package cabi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/internal/testkit/ctoolbuild"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestABI compiles, against the real omp-tools.h, static asserts
// generated from what the Go side uses: the layout of every C type cabi
// passes (as cgo sees cabi.h), the sizes of the Go types that travel as C
// types, and the value of every ompt constant that has an omp-tools.h
// enumerator.
func TestABI(t *testing.T) {
	needC(t)
	var b strings.Builder
	b.WriteString("#include <stddef.h>\n#include <stdint.h>\n#include <omp-tools.h>\n")
	// OpenMP 6.0's, which LLVM 19's header lacks: the 6.0 signature
	b.WriteString("typedef int (*ompt_get_buffer_limits_t)(ompt_device_t *device, int *max_concurrent_allocs, size_t *recommended_bytes);\n")
	n := 0
	staticAssert := func(cond, msg string) {
		n++
		fmt.Fprintf(&b, "_Static_assert(%s, %q);\n", cond, msg)
	}

	// The record layout of omp-tools.h on LP64 (ompt_record_ompt_t and
	// its bodies, which package ompt's records copy byte for byte),
	// stated once by hand.
	staticAssert("sizeof(ompt_record_ompt_t) == 104", "ompt_record_ompt_t is 104 bytes")
	staticAssert("offsetof(ompt_record_ompt_t, record) == 32", "record body at offset 32")

	for _, l := range layouts() {
		staticAssert(fmt.Sprintf("sizeof(%s) == %d", l.typ, l.size), "size of "+l.typ)
		for _, f := range l.fields {
			staticAssert(fmt.Sprintf("offsetof(%s, %s) == %d", l.typ, f.name, f.off), l.typ+"."+f.name)
		}
	}
	for typ, size := range scalarSizes() {
		staticAssert(fmt.Sprintf("sizeof(%s) == %d", typ, size), "size of "+typ)
	}

	// Go types that cabi hands to C as C types.
	staticAssert(fmt.Sprintf("sizeof(void *) == %d", unsafe.Sizeof(uintptr(0))), "uintptr is void * (addresses, map arrays)")
	staticAssert(fmt.Sprintf("sizeof(size_t) == %d", unsafe.Sizeof(uint64(0))), "uint64 is size_t (map bytes array)")
	staticAssert(fmt.Sprintf("sizeof(unsigned int) == %d", unsafe.Sizeof(uint32(0))), "uint32 is unsigned int (map flags array)")
	staticAssert(fmt.Sprintf("sizeof(ompt_id_t) == %d", unsafe.Sizeof(uint64(0))), "host_op_id slot is a uint64")
	staticAssert(fmt.Sprintf("sizeof(ompt_data_t) == %d", unsafe.Sizeof(ompt.Data{}.Value)), "ompt.Data.Value is the ompt_data_t word")
	staticAssert("sizeof(ompt_device_t *) == sizeof(void *)", "ompt_device_t * is a plain pointer")

	// Enumerators: every ompt constant whose value C tools see.
	for ev := ompt.Callback(1); ev <= ompt.CallbackError; ev++ {
		staticAssert(fmt.Sprintf("%s == %d", ev, int(ev)), ev.String())
	}
	for r := ompt.SetError; r <= ompt.SetAlways; r++ {
		staticAssert(fmt.Sprintf("%s == %d", r, int(r)), r.String())
	}
	for _, e := range []ompt.Endpoint{ompt.ScopeBegin, ompt.ScopeEnd, ompt.ScopeBeginEnd} {
		staticAssert(fmt.Sprintf("ompt_scope_%s == %d", e, int(e)), "endpoint "+e.String())
	}
	for _, k := range []ompt.TargetKind{ompt.KindTarget, ompt.KindTargetEnterData, ompt.KindTargetExitData, ompt.KindTargetUpdate,
		ompt.KindTargetNowait, ompt.KindTargetEnterDataNowait, ompt.KindTargetExitDataNowait, ompt.KindTargetUpdateNowait} {
		staticAssert(fmt.Sprintf("%s == %d", k, int(k)), k.String())
	}
	// ompt_target_data_memset (8) is OpenMP 6.0's and not in the 5.1
	// header; its value is checked by ctool's op_name only.
	for _, k := range []ompt.DataOpKind{ompt.DataOpAlloc, ompt.DataOpTransferToDevice, ompt.DataOpTransferFromDevice,
		ompt.DataOpDelete, ompt.DataOpAssociate, ompt.DataOpDisassociate, ompt.DataOpAllocAsync,
		ompt.DataOpTransferToDeviceAsync, ompt.DataOpTransferFromDeviceAsync, ompt.DataOpDeleteAsync} {
		staticAssert(fmt.Sprintf("%s == %d", k, int(k)), k.String())
	}
	for name, v := range map[string]uint32{"to": ompt.MapFlagTo, "from": ompt.MapFlagFrom, "alloc": ompt.MapFlagAlloc,
		"release": ompt.MapFlagRelease, "delete": ompt.MapFlagDelete, "implicit": ompt.MapFlagImplicit} {
		staticAssert(fmt.Sprintf("ompt_target_map_flag_%s == %d", name, v), "map flag "+name)
	}
	for name, v := range map[string]int{"work_serial": ompt.StateWorkSerial, "wait_target": ompt.StateWaitTarget,
		"wait_target_map": ompt.StateWaitTargetMap, "wait_target_update": ompt.StateWaitTargetUpdate, "undefined": ompt.StateUndefined} {
		staticAssert(fmt.Sprintf("ompt_state_%s == %d", name, v), "state "+name)
	}
	staticAssert(fmt.Sprintf("ompt_task_initial == %d", ompt.TaskInitial), "ompt_task_initial")
	staticAssert(fmt.Sprintf("ompt_task_target == %d", ompt.TaskTarget), "ompt_task_target")

	dir := t.TempDir()
	src := filepath.Join(dir, "abi.c")
	require.NoError(t, os.WriteFile(src, []byte(b.String()), 0o644))
	hdir, err := ctoolbuild.HeaderDir()
	require.NoError(t, err)
	inc := filepath.Join(dir, "inc")
	os.Mkdir(inc, 0o755)
	require.NoError(t, os.Symlink(filepath.Join(hdir, "omp-tools.h"), filepath.Join(inc, "omp-tools.h")))
	out, err := exec.Command(cc(), "-std=c11", "-fsyntax-only", "-I", inc, src).CombinedOutput()
	require.NoError(t, err, "ABI asserts against %s/omp-tools.h failed:\n%s", hdir, out)
	assert.GreaterOrEqual(t, n, 100, "asserts generated")
	t.Logf("%d asserts hold against %s/omp-tools.h", n, hdir)
}

// TestABICatchesMismatch proves the asserts can fail: a wrong size is
// rejected by the compiler.
func TestABICatchesMismatch(t *testing.T) {
	needC(t)
	dir := t.TempDir()
	hdir, _ := ctoolbuild.HeaderDir()
	require.NoError(t, os.Symlink(filepath.Join(hdir, "omp-tools.h"), filepath.Join(dir, "omp-tools.h")))
	src := filepath.Join(dir, "bad.c")
	require.NoError(t, os.WriteFile(src, []byte("#include <omp-tools.h>\n_Static_assert(sizeof(ompt_record_ompt_t) == 96, \"x\");\n"), 0o644))
	out, err := exec.Command(cc(), "-std=c11", "-fsyntax-only", "-I", dir, src).CombinedOutput()
	require.Error(t, err, "a false assert compiled:\n%s", out)
	assert.Contains(t, string(out), "static assert", "the compiler's complaint")
}

// TestEntryTable checks that the C table and entryNames agree and cover
// ompt's names.
func TestEntryTable(t *testing.T) {
	if !Available {
		t.Skip("built without cgo")
	}
	require.Equal(t, len(entryNames), numCEntries(), "entries of the C table against entryNames")
	require.Equal(t, len(ompt.HostEntryNames), numHostEntries, "numHostEntries against ompt's host names")
	for i, n := range ompt.HostEntryNames {
		assert.Equal(t, n, entryNames[i], "entry %d against ompt.HostEntryNames", i)
	}
	devNames := append(append([]string(nil), ompt.DeviceEntryNames...), ompt.BufferLimitsEntryName)
	require.Len(t, entryNames[numHostEntries:], len(devNames), "device entries against ompt.DeviceEntryNames and BufferLimitsEntryName")
	for i, n := range entryNames[numHostEntries:] {
		assert.Equal(t, devNames[i], n, "device entry %d against ompt.DeviceEntryNames", i)
	}
}

// TestEntrySignatures compiles, against the real omp-tools.h, the
// prototype of every C entry point in cabi.c (as written there) assigned
// to a variable of its omp-tools.h function pointer type, with
// incompatible pointer types an error: each entry point the C lookups
// hand out has exactly the header's signature.
func TestEntrySignatures(t *testing.T) {
	needC(t)
	src, err := os.ReadFile("cabi.c")
	require.NoError(t, err)
	protos := map[string]string{}
	re := regexp.MustCompile(`(?m)^static (.+?\be_(\w+)\(.*\)) \{`)
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		protos[m[2]] = m[1]
	}
	var b strings.Builder
	b.WriteString("#include <stddef.h>\n#include <stdint.h>\n#include <omp-tools.h>\n")
	// OpenMP 6.0's, which LLVM 19's header lacks: the 6.0 signature
	b.WriteString("typedef int (*ompt_get_buffer_limits_t)(ompt_device_t *device, int *max_concurrent_allocs, size_t *recommended_bytes);\n")
	for _, name := range entryNames {
		short := strings.TrimPrefix(name, "ompt_")
		p, ok := protos[short]
		if !assert.True(t, ok, "cabi.c has no entry point e_%s for %s", short, name) {
			continue
		}
		fmt.Fprintf(&b, "extern %s;\n%s_t check_%s = e_%s;\n", p, name, short, short)
	}
	dir := t.TempDir()
	hdir, err := ctoolbuild.HeaderDir()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Join(hdir, "omp-tools.h"), filepath.Join(dir, "omp-tools.h")))
	file := filepath.Join(dir, "sig.c")
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	out, err := exec.Command(cc(), "-std=gnu11", "-fsyntax-only", "-Werror=incompatible-pointer-types", "-I", dir, file).CombinedOutput()
	require.NoError(t, err, "entry point signatures differ from omp-tools.h:\n%s\n%s", out, b.String())
	// the check can fail: a wrong signature is rejected
	bad := strings.Replace(b.String(), "extern int e_flush_trace(ompt_device_t *device)", "extern int e_flush_trace(ompt_device_t *device, int x)", 1)
	require.NotEqual(t, b.String(), bad, "e_flush_trace's prototype not found to alter")
	require.NoError(t, os.WriteFile(file, []byte(bad), 0o644))
	out, err = exec.Command(cc(), "-std=gnu11", "-fsyntax-only", "-Werror=incompatible-pointer-types", "-I", dir, file).CombinedOutput()
	require.Error(t, err, "a wrong signature compiled:\n%s", out)
}
