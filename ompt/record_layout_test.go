package ompt

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// findOmpToolsH returns the omp-tools.h to check against: $OMP_TOOLS_H,
// else Debian's libomp-19-dev header, else any other LLVM's.
func findOmpToolsH() (string, error) {
	if p := os.Getenv("OMP_TOOLS_H"); p != "" {
		_, err := os.Stat(p)
		return p, err
	}
	const want = "/usr/lib/llvm-19/lib/clang/19/include/omp-tools.h"
	if _, err := os.Stat(want); err == nil {
		return want, nil
	}
	if m, _ := filepath.Glob("/usr/lib/llvm-*/lib/clang/*/include/omp-tools.h"); len(m) > 0 {
		return m[len(m)-1], nil
	}
	return "", fmt.Errorf("%s not found (install libomp-19-dev, or set OMP_TOOLS_H)", want)
}

// TestRecordLayoutMatchesHeader compiles a C program against omp-tools.h
// that prints the size and offset of every record field gompt writes, and
// compares them with the Go structs. It needs gcc and the header (Debian
// libomp-19-dev); without them it skips, except under CI (env CI set),
// where it fails.
func TestRecordLayoutMatchesHeader(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	var ompToolsH string
	if err == nil {
		ompToolsH, err = findOmpToolsH()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			require.NoError(t, err, "CI needs gcc and omp-tools.h")
		}
		t.Skipf("gcc or omp-tools.h not available: %v", err)
	}
	t.Logf("checking against %s", ompToolsH)
	type field struct {
		c   string // C expression: sizeof(...) or offsetof(...)
		goV uintptr
	}
	var r RecordOMPT
	var tg RecordTarget
	var op RecordTargetDataOp
	var k RecordTargetKernel
	fields := []field{
		{"sizeof(ompt_record_ompt_t)", unsafe.Sizeof(r)},
		{"offsetof(ompt_record_ompt_t, type)", unsafe.Offsetof(r.Type)},
		{"sizeof(((ompt_record_ompt_t*)0)->type)", unsafe.Sizeof(r.Type)},
		{"offsetof(ompt_record_ompt_t, time)", unsafe.Offsetof(r.Time)},
		{"offsetof(ompt_record_ompt_t, thread_id)", unsafe.Offsetof(r.ThreadID)},
		{"offsetof(ompt_record_ompt_t, target_id)", unsafe.Offsetof(r.TargetID)},
		{"offsetof(ompt_record_ompt_t, record)", unsafe.Offsetof(r.body)},
		{"sizeof(((ompt_record_ompt_t*)0)->record)", unsafe.Sizeof(r.body)},

		{"sizeof(ompt_record_target_t)", unsafe.Sizeof(tg)},
		{"offsetof(ompt_record_target_t, kind)", unsafe.Offsetof(tg.Kind)},
		{"offsetof(ompt_record_target_t, endpoint)", unsafe.Offsetof(tg.Endpoint)},
		{"offsetof(ompt_record_target_t, device_num)", unsafe.Offsetof(tg.DeviceNum)},
		{"offsetof(ompt_record_target_t, task_id)", unsafe.Offsetof(tg.TaskID)},
		{"offsetof(ompt_record_target_t, target_id)", unsafe.Offsetof(tg.TargetID)},
		{"offsetof(ompt_record_target_t, codeptr_ra)", unsafe.Offsetof(tg.CodePtr)},

		{"sizeof(ompt_record_target_data_op_t)", unsafe.Sizeof(op)},
		{"offsetof(ompt_record_target_data_op_t, host_op_id)", unsafe.Offsetof(op.HostOpID)},
		{"offsetof(ompt_record_target_data_op_t, optype)", unsafe.Offsetof(op.OpType)},
		{"offsetof(ompt_record_target_data_op_t, src_addr)", unsafe.Offsetof(op.SrcAddr)},
		{"offsetof(ompt_record_target_data_op_t, src_device_num)", unsafe.Offsetof(op.SrcDeviceNum)},
		{"offsetof(ompt_record_target_data_op_t, dest_addr)", unsafe.Offsetof(op.DestAddr)},
		{"offsetof(ompt_record_target_data_op_t, dest_device_num)", unsafe.Offsetof(op.DestDeviceNum)},
		{"offsetof(ompt_record_target_data_op_t, bytes)", unsafe.Offsetof(op.Bytes)},
		{"offsetof(ompt_record_target_data_op_t, end_time)", unsafe.Offsetof(op.EndTime)},
		{"offsetof(ompt_record_target_data_op_t, codeptr_ra)", unsafe.Offsetof(op.CodePtr)},

		{"sizeof(ompt_record_target_kernel_t)", unsafe.Sizeof(k)},
		{"offsetof(ompt_record_target_kernel_t, host_op_id)", unsafe.Offsetof(k.HostOpID)},
		{"offsetof(ompt_record_target_kernel_t, requested_num_teams)", unsafe.Offsetof(k.RequestedNumTeams)},
		{"offsetof(ompt_record_target_kernel_t, granted_num_teams)", unsafe.Offsetof(k.GrantedNumTeams)},
		{"offsetof(ompt_record_target_kernel_t, end_time)", unsafe.Offsetof(k.EndTime)},

		// enumerator values the records and entry points use
		{"ompt_callback_target", uintptr(CallbackTarget)},
		{"ompt_callback_target_data_op", uintptr(CallbackTargetDataOp)},
		{"ompt_callback_target_submit", uintptr(CallbackTargetSubmit)},
		{"ompt_callback_target_emi", uintptr(CallbackTargetEMI)},
		{"ompt_callback_target_data_op_emi", uintptr(CallbackTargetDataOpEMI)},
		{"ompt_callback_target_submit_emi", uintptr(CallbackTargetSubmitEMI)},
		{"ompt_record_ompt", uintptr(RecordKindOMPT)},
		{"ompt_record_native", uintptr(RecordKindNative)},
		{"ompt_record_invalid", uintptr(RecordKindInvalid)},
		{"ompt_record_native_info", uintptr(NativeRecordInfo)},
		{"ompt_record_native_event", uintptr(NativeRecordEvent)},
		{"ompt_native_data_motion_explicit", uintptr(NativeDataMotionExplicit)},
		{"ompt_native_data_motion_implicit", uintptr(NativeDataMotionImplicit)},
		{"ompt_native_kernel_invocation", uintptr(NativeKernelInvocation)},
		{"ompt_native_kernel_execution", uintptr(NativeKernelExecution)},
		{"ompt_native_driver", uintptr(NativeDriver)},
		{"ompt_native_runtime", uintptr(NativeRuntime)},
		{"ompt_native_overhead", uintptr(NativeOverhead)},
		{"ompt_native_idleness", uintptr(NativeIdleness)},
		{"ompt_set_never", uintptr(SetNever)},
		{"ompt_set_sometimes", uintptr(SetSometimes)},
		{"ompt_set_always", uintptr(SetAlways)},
		{"ompt_set_error", uintptr(SetError)},
		{"ompt_scope_begin", uintptr(ScopeBegin)},
		{"ompt_scope_end", uintptr(ScopeEnd)},
		{"sizeof(ompt_buffer_cursor_t)", 8},
		{"sizeof(ompt_device_time_t)", 8},
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <omp-tools.h>\nint main(void) {\n")
	for _, f := range fields {
		fmt.Fprintf(&src, "\tprintf(\"%%lu\\n\", (unsigned long)(%s));\n", f.c)
	}
	src.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	cfile, bin := filepath.Join(dir, "layout.c"), filepath.Join(dir, "layout")
	require.NoError(t, os.WriteFile(cfile, []byte(src.String()), 0o644))
	// copy the header alone: clang's include folder has its own stddef.h
	hdr, err := os.ReadFile(ompToolsH)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "omp-tools.h"), hdr, 0o644))
	gccOut, err := exec.Command(gcc, "-I", dir, "-o", bin, cfile).CombinedOutput()
	require.NoError(t, err, "gcc:\n%s", gccOut)
	out, err := exec.Command(bin).Output()
	require.NoError(t, err)
	lines := strings.Fields(string(out))
	require.Len(t, lines, len(fields), "values the C program printed, one per field")
	for i, f := range fields {
		assert.Equal(t, fmt.Sprint(f.goV), lines[i], "%s: Go's value against C's", f.c)
	}
	assert.Equal(t, [2]int{104, 32}, [2]int{RecordOMPTSize, RecordBodyOffset}, "RecordOMPTSize, RecordBodyOffset")
	// the union bodies must fit the 72-byte union
	for _, s := range []uintptr{unsafe.Sizeof(tg), unsafe.Sizeof(op), unsafe.Sizeof(k)} {
		assert.LessOrEqual(t, s, unsafe.Sizeof(r.body), "a body of %d bytes must fit the union", s)
	}
}
