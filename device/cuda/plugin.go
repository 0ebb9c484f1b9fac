//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/generic"
)

// minDriver is the oldest driver the plugin accepts: CUDA 10.0, what the
// kernels' PTX ISA 6.3 for sm_75 needs (cuDeviceGetUuid needs CUDA 9.2).
const minDriver = 10000

// newPlugin returns the plugin that loads lib ("" means
// $GOMPT_CUDA_LIBRARY, then libcuda.so.1) on the first call of Devices,
// and has one device per usable GPU, in CUDA ordinal order.
func newPlugin(lib string) *generic.Plugin {
	return generic.NewPlugin(Name, func() ([]device.Device, error) { return open(lib) })
}

func open(name string) ([]device.Device, error) {
	if strconv.IntSize != 64 {
		// CUdeviceptr has 64 bits; device.DevicePtr has a pointer's
		return nil, fmt.Errorf("the CUDA plugin runs on 64-bit hosts only, not where an int has %d bits", strconv.IntSize)
	}
	if name == "" {
		name = device.Getenv(EnvLibrary)
	}
	if name == "" {
		name = cu.DefaultLibrary
	}
	if err := cu.Load(name); err != nil {
		return nil, fmt.Errorf("no CUDA driver: %w", err)
	}
	if err := cu.Init(0); err != nil {
		var ce *cu.Error
		if errors.As(err, &ce) && ce.Result == cu.ERROR_NO_DEVICE {
			return nil, fmt.Errorf("no CUDA device: the driver (%s) found none: %w", name, err)
		}
		return nil, fmt.Errorf("CUDA driver %s failed to initialise: %w", name, err)
	}
	ver, err := cu.DriverGetVersion()
	if err != nil {
		return nil, fmt.Errorf("CUDA driver %s: %w", name, err)
	}
	if ver < minDriver {
		return nil, fmt.Errorf("CUDA driver %s supports CUDA %s, too old: gompt needs CUDA %s or newer",
			name, versionString(ver), versionString(minDriver))
	}
	n, err := cu.DeviceGetCount()
	if err != nil {
		return nil, fmt.Errorf("CUDA driver %s: %w", name, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("no CUDA device: the driver (%s, CUDA %s) found none", name, versionString(ver))
	}
	sched := device.Getenv(EnvSched) // a bad value is "", blocking, and one warning
	var devs []device.Device
	var skipped []string
	for i := 0; i < n; i++ {
		d, err := openGPU(len(devs), i, ver, name, sched)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("CUDA device %d: %v", i, err))
			continue
		}
		devs = append(devs, d)
	}
	if len(devs) == 0 {
		return nil, errors.New(strings.Join(skipped, "; "))
	}
	return devs, nil
}

// schedFlags are the values of EnvSched.
var schedFlags = map[string]uint{
	"auto": cu.CTX_SCHED_AUTO, "spin": cu.CTX_SCHED_SPIN, "yield": cu.CTX_SCHED_YIELD, "blocking": cu.CTX_SCHED_BLOCKING_SYNC,
}

func schedName(flags uint) string {
	for k, v := range schedFlags {
		if v == flags&cu.CTX_SCHED_MASK {
			return k
		}
	}
	return fmt.Sprintf("flags %#x", flags)
}

// schedule sets how threads wait for dev (see EnvSched; sched is its
// value, "" for the default) unless its primary context is already active,
// and says what it did, for Info. A driver that fails to say or set leaves
// the device as it is: only the description says so.
func schedule(dev cu.Device, sched string) string {
	flags, active, err := cu.DevicePrimaryCtxGetState(dev)
	if err != nil {
		return "unknown: " + err.Error()
	}
	if active {
		return schedName(flags) + " (the primary context was already active: left as it was)"
	}
	want := uint(cu.CTX_SCHED_BLOCKING_SYNC)
	if sched != "" {
		want = schedFlags[sched]
	}
	if err := cu.DevicePrimaryCtxSetFlags(dev, flags&^cu.CTX_SCHED_MASK|want); err != nil {
		return schedName(flags) + " (not changed: " + err.Error() + ")"
	}
	if sched == "" {
		return schedName(want) + " (default; " + EnvSched + " chooses)"
	}
	return schedName(want) + " (" + EnvSched + ")"
}

func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// gpuOf returns d as a device of this plugin.
func gpuOf(d device.Device) (*gpu, error) {
	g, ok := d.(*gpu)
	if !ok {
		return nil, fmt.Errorf("cuda: %T is not a device of the cuda plugin", d)
	}
	return g, nil
}
