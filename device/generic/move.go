package generic

import "github.com/gompt/gompt/device"

// moveSteps is the most copies Move splits an overlapping copy into
// before it goes through a temporary buffer instead.
const moveSteps = 16

// Move copies n > 0 bytes from src to dst on one device as memmove would,
// for plugins whose device-to-device copy refuses or garbles overlapping
// ranges (OpenCL's clEnqueueCopyBuffer refuses them, CUDA's
// cuMemcpyDtoD leaves them undefined). cp must be given only ranges that
// do not overlap. When dst == src, nothing is copied. Ranges that do not
// overlap are one cp. Overlapping ranges a distance d apart are copied in
// pieces of at most d bytes, front first when dst is below src and back
// first otherwise, so each byte is read before it is overwritten; when
// that takes more than 16 pieces, through a temporary allocation (alloc,
// then free, which the plugin's Free must allow while the copies are
// still queued) with two copies.
func Move(dst, src device.DevicePtr, n int, cp func(dst, src device.DevicePtr, n int) error, alloc func(n int) (device.DevicePtr, error), free func(device.DevicePtr) error) error {
	if dst == src || n <= 0 {
		return nil
	}
	var d uint64
	if dst < src {
		d = uint64(src - dst)
	} else {
		d = uint64(dst - src)
	}
	if d >= uint64(n) {
		return cp(dst, src, n)
	}
	if steps := (uint64(n) + d - 1) / d; steps > moveSteps {
		tmp, err := alloc(n)
		if err != nil {
			return err
		}
		err = cp(tmp, src, n)
		if err == nil {
			err = cp(dst, tmp, n)
		}
		if ferr := free(tmp); err == nil {
			err = ferr
		}
		return err
	}
	step := int(d)
	if dst < src {
		for off := 0; off < n; off += step {
			if err := cp(dst+device.DevicePtr(off), src+device.DevicePtr(off), min(step, n-off)); err != nil {
				return err
			}
		}
		return nil
	}
	for end := n; end > 0; end -= step {
		off := max(end-step, 0)
		if err := cp(dst+device.DevicePtr(off), src+device.DevicePtr(off), end-off); err != nil {
			return err
		}
	}
	return nil
}
