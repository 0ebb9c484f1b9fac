//go:build cgo

package cabi

/*
#include "cabi.h"
*/
import "C"

import "reflect"

// layout is the size and field offsets of one C type as this package's Go
// code sees it (through cabi.h); abi_test.go asserts them against the real
// omp-tools.h.
type layout struct {
	typ    string
	size   uintptr
	fields []fieldOffset
}

type fieldOffset struct {
	name string
	off  uintptr
}

func layoutOf(name string, v any) layout {
	t := reflect.TypeOf(v)
	l := layout{typ: name, size: t.Size()}
	if t.Kind() != reflect.Struct {
		return l // a union: cgo sees bytes
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "_" {
			continue // padding
		}
		n := f.Name
		if n == "_type" { // cgo's name for a C field named after a Go keyword
			n = "type"
		}
		l.fields = append(l.fields, fieldOffset{n, f.Offset})
	}
	return l
}

// layouts lists the omp-tools.h types whose layout cabi relies on.
func layouts() []layout {
	return []layout{
		layoutOf("ompt_data_t", C.ompt_data_t{}),
		layoutOf("ompt_frame_t", C.ompt_frame_t{}),
		layoutOf("ompt_start_tool_result_t", C.ompt_start_tool_result_t{}),
		layoutOf("ompt_record_ompt_t", C.ompt_record_ompt_t{}),
		layoutOf("ompt_record_target_t", C.ompt_record_target_t{}),
		layoutOf("ompt_record_target_data_op_t", C.ompt_record_target_data_op_t{}),
		layoutOf("ompt_record_target_map_t", C.ompt_record_target_map_t{}),
		layoutOf("ompt_record_target_kernel_t", C.ompt_record_target_kernel_t{}),
		layoutOf("ompt_record_abstract_t", C.ompt_record_abstract_t{}),
		layoutOf("ompt_dependence_t", C.ompt_dependence_t{}),
	}
}

// scalarSizes are the sizes of the scalar types cabi passes across.
func scalarSizes() map[string]uintptr {
	return map[string]uintptr{
		"ompt_id_t":              C.sizeof_ompt_id_t,
		"ompt_wait_id_t":         C.sizeof_ompt_wait_id_t,
		"ompt_device_time_t":     C.sizeof_ompt_device_time_t,
		"ompt_buffer_cursor_t":   C.sizeof_ompt_buffer_cursor_t,
		"ompt_hwid_t":            C.sizeof_ompt_hwid_t,
		"ompt_callbacks_t":       C.sizeof_ompt_callbacks_t,
		"ompt_set_result_t":      C.sizeof_ompt_set_result_t,
		"ompt_scope_endpoint_t":  C.sizeof_ompt_scope_endpoint_t,
		"ompt_target_t":          C.sizeof_ompt_target_t,
		"ompt_target_data_op_t":  C.sizeof_ompt_target_data_op_t,
		"ompt_record_t":          C.sizeof_ompt_record_t,
		"ompt_record_native_t":   C.sizeof_ompt_record_native_t,
		"ompt_dependence_type_t": C.sizeof_ompt_dependence_type_t,
	}
}
