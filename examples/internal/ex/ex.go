// Package ex holds what the examples share: the -device flag, a line
// naming the device used, and failing with a message.
package ex

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gompt/gompt/target"
)

// Stdout and Stderr are where the examples write; tests replace them.
var (
	Stdout io.Writer = os.Stdout
	Stderr io.Writer = os.Stderr
	exit             = os.Exit
)

// DeviceFlag registers -device on the command line, defaulting to the
// default device; see ParseDevice for what it accepts. Its help names the
// devices and what the default device is now.
func DeviceFlag() *int { return deviceFlag(flag.CommandLine) }

func deviceFlag(fs *flag.FlagSet) *int {
	v := &deviceValue{n: target.DefaultDevice}
	fs.Var(v, "device", DeviceUsage())
	return &v.n
}

// DeviceUsage is the -device flag's help: the forms accepted, the devices
// there are, and the default device now.
func DeviceUsage() string {
	def := "the initial device"
	if n, err := target.DeviceNum(target.DefaultDevice); err != nil {
		def = "none (" + err.Error() + ")"
	} else if n < target.NumDevices() {
		def = fmt.Sprintf("%d = %s", n, target.Devices()[n].ID)
	} else {
		def = fmt.Sprintf("%d = the initial device", n)
	}
	return fmt.Sprintf("device: a number (0..N-1 offload devices, N or -1 the initial device) or a name as ompt-devinfo shows it (host:0, opencl:0, cuda:0; initial; default); devices here: %s; "+
		"default: the default device (OMP_DEFAULT_DEVICE), now %s", deviceList(), def)
}

// deviceList names every device: "0 = opencl:0, 1 = host:0, 2 = initial".
func deviceList() string {
	var s []string
	for _, d := range target.Devices() {
		s = append(s, fmt.Sprintf("%d = %s", d.Num, d.ID))
	}
	return strings.Join(append(s, fmt.Sprintf("%d = initial", target.NumDevices())), ", ")
}

// deviceValue is the -device flag. Unset, it prints as "" like its zero
// value, so that flag's help adds no "(default ...)": the usage text says
// what the default is.
type deviceValue struct {
	n   int
	set string
}

func (d *deviceValue) String() string {
	if d == nil {
		return ""
	}
	return d.set
}

func (d *deviceValue) Set(s string) error {
	n, err := ParseDevice(s)
	if err != nil {
		return err
	}
	d.n, d.set = n, s
	return nil
}

// ParseDevice turns a -device value into a device argument for package
// target: a device number (0..N-1, N or -1 for the initial device), a
// device's name as ompt-devinfo shows it ("host:0", "opencl:0",
// "cuda:0"), "initial" or "default". A number or name that names no
// device is an error that lists the devices there are (and, for a plugin
// with none, why).
func ParseDevice(s string) (int, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "default":
		return target.DefaultDevice, nil
	case "initial", "-1":
		return target.InitialDevice, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if _, err := target.DeviceNum(n); err != nil {
			return 0, fmt.Errorf("%w; devices: %s", err, deviceList())
		}
		return n, nil
	}
	for _, d := range target.Devices() {
		if strings.EqualFold(d.ID, s) {
			return d.Num, nil
		}
	}
	why := ""
	if plugin, _, ok := strings.Cut(s, ":"); ok {
		for _, p := range target.Plugins() {
			if strings.EqualFold(p.Name, plugin) && p.Err != nil {
				why = fmt.Sprintf(": plugin %s has none (%s)", p.Name, strings.TrimPrefix(p.Err.Error(), p.Name+": no device: "))
			}
		}
	}
	return 0, fmt.Errorf("no device %q%s; want a number or one of: %s", s, why, deviceList())
}

// Describe prints which device the example runs on, or, when dev names
// none (OMP_TARGET_OFFLOAD=mandatory with no device, say), the reason, once,
// on standard error, and exits with status 1.
func Describe(name string, dev int) {
	if _, err := target.DeviceNum(dev); err != nil {
		Check(name, err)
		return
	}
	fmt.Fprintf(Stdout, "%s: running on %s\n", name, target.Describe(dev))
}

// Timing prints how long a phase took.
func Timing(what string, d time.Duration, extra string) {
	fmt.Fprintf(Stdout, "  %-28s %12.3f ms %s\n", what, float64(d.Nanoseconds())/1e6, extra)
}

// Check exits with status 1 and the error, on standard error, if err is
// not nil.
func Check(name string, err error) {
	if err != nil {
		fmt.Fprintf(Stderr, "%s: %v\n", name, err)
		exit(1)
	}
}

// Fail reports a wrong result and exits with status 1.
func Fail(name, format string, args ...any) {
	fmt.Fprintf(Stderr, "%s: WRONG RESULT: "+format+"\n", append([]any{name}, args...)...)
	exit(1)
}
