package target

import (
	"unsafe"

	"github.com/gompt/gompt/device"
)

// IsPresent reports whether s has a device copy on dev (omp_target_is_present).
// Everything is present on the initial device.
func IsPresent[T any](s []T, dev int) bool {
	d, err := offloadDev(dev, "is present")
	if err != nil {
		return false
	}
	return d == nil || d.table.IsPresent(device.Bytes(s))
}

// IsAccessible reports whether dev can use the host memory s directly
// (omp_target_is_accessible): true on the initial device and on devices
// that share memory with the host.
func IsAccessible[T any](s []T, dev int) bool {
	d, err := offloadDev(dev, "is accessible")
	if err != nil {
		return false
	}
	return d == nil || d.info.UnifiedMemory
}

// MappedPtr returns the device address of present host memory s on dev
// (omp_get_mapped_ptr). On the initial device it is s's own address, which
// On(initial device, p) accepts for as long as s's memory is reachable:
// the runtime does not keep s alive (keep it reachable, with
// runtime.KeepAlive if need be, while p is in use), and a p whose slice
// was collected is an error, not a copy into freed memory. Memory that Go
// does not manage (mmap, C) gets its address, which On cannot bound.
func MappedPtr[T any](s []T, dev int) (DevicePtr, error) {
	d, err := offloadDev(dev, "mapped ptr")
	if err != nil {
		return 0, err
	}
	if d == nil {
		b := device.Bytes(s)
		state().initial.view(b)
		return DevicePtr(uintptr(unsafe.Pointer(unsafe.SliceData(s)))), nil
	}
	return d.table.Translate(device.Bytes(s))
}
