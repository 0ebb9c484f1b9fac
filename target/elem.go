package target

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/gompt/gompt/device"
)

// elemType is what the runtime knows of the element type T of a slice
// handed to it (Slice, To and the other map constructors, Host): its name
// for messages, the kernel buffer element kind it is, and whether it holds
// Go pointers. One elemType per type, shared and never changed.
type elemType struct {
	name     string
	kind     device.ParamKind // the Param.Elem it fits; 0 for none
	pointers bool             // values hold Go pointers: they cannot go to a device
}

var (
	elemFloat32 = elemType{name: "float32", kind: device.ParamFloat32}
	elemFloat64 = elemType{name: "float64", kind: device.ParamFloat64}
	elemInt32   = elemType{name: "int32", kind: device.ParamInt32}
	elemUint32  = elemType{name: "uint32", kind: device.ParamUint32}
	elemInt64   = elemType{name: "int64", kind: device.ParamInt64}
	elemUint8   = elemType{name: "uint8", kind: device.ParamUint8}
	elemInt     = elemType{name: "int", kind: intKind}
	elemUint64  = elemType{name: "uint64", kind: device.ParamUint64}
)

// intKind is the buffer element kind of int (and uintKind of uint): 64
// bits wide on the platforms gompt runs on, none where int is narrower.
var intKind, uintKind = func() (device.ParamKind, device.ParamKind) {
	if strconv.IntSize == 64 {
		return device.ParamInt64, device.ParamUint64
	}
	return 0, 0
}()

// elemOf describes T. The common element types are one type switch on a
// nil *T (no allocation); others are described once by reflection and
// cached.
func elemOf[T any]() *elemType {
	switch any((*T)(nil)).(type) {
	case *float32:
		return &elemFloat32
	case *float64:
		return &elemFloat64
	case *int32:
		return &elemInt32
	case *uint32:
		return &elemUint32
	case *int64:
		return &elemInt64
	case *uint8:
		return &elemUint8
	case *int:
		return &elemInt
	case *uint64:
		return &elemUint64
	}
	return describe(reflect.TypeFor[T]())
}

// badElem returns T's description if T holds Go pointers, else nil: what
// the map and memory-routine constructors record for the construct to
// report.
func badElem[T any]() *elemType {
	if et := elemOf[T](); et.pointers {
		return et
	}
	return nil
}

var elemTypes sync.Map // reflect.Type -> *elemType

func describe(t reflect.Type) *elemType {
	if et, ok := elemTypes.Load(t); ok {
		return et.(*elemType)
	}
	et := &elemType{name: t.String(), pointers: hasPointers(t)}
	switch t.Kind() {
	case reflect.Float32:
		et.kind = device.ParamFloat32
	case reflect.Float64:
		et.kind = device.ParamFloat64
	case reflect.Int32:
		et.kind = device.ParamInt32
	case reflect.Uint32:
		et.kind = device.ParamUint32
	case reflect.Int64:
		et.kind = device.ParamInt64
	case reflect.Int8:
		et.kind = device.ParamInt8
	case reflect.Uint8:
		et.kind = device.ParamUint8
	case reflect.Int16:
		et.kind = device.ParamInt16
	case reflect.Uint16:
		et.kind = device.ParamUint16
	case reflect.Uint64:
		et.kind = device.ParamUint64
	case reflect.Int:
		et.kind = intKind
	case reflect.Uint:
		et.kind = uintKind
	}
	v, _ := elemTypes.LoadOrStore(t, et)
	return v.(*elemType)
}

// hasPointers reports whether values of t hold Go pointers: pointers,
// slices, maps, channels, functions, interfaces and strings do, and arrays
// and structs that contain one.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Chan,
		reflect.Func, reflect.Interface, reflect.String:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// pointersErr is the error for a slice of element type et, which holds Go
// pointers, named by what ("map item 0 (a)", "memcpy source").
func pointersErr(what string, et *elemType) error {
	return fmt.Errorf("target: %s: element type %s holds Go pointers, which device memory would hide from the garbage collector; "+
		"only slices of pointer-free types (numbers, and arrays and structs of them) can be mapped, passed to kernels or copied", what, et.name)
}

// checkMaps reports the first map item whose element type holds pointers.
func checkMaps(maps []Map) error {
	for i := range maps {
		if et := maps[i].bad; et != nil {
			what := fmt.Sprintf("map item %d", i)
			if n := maps[i].item.Name; n != "" {
				what += " (" + n + ")"
			}
			return pointersErr(what, et)
		}
	}
	return nil
}
