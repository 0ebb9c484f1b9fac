package ex

import (
	"bytes"
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/target"
)

func hostNum(t *testing.T) int {
	for _, d := range target.Devices() {
		if d.ID == "host:0" {
			return d.Num
		}
	}
	t.Skip("no host:0 device (GOMPT_PLUGINS?)")
	return 0
}

func TestParseDevice(t *testing.T) {
	h := hostNum(t)
	nd := target.NumDevices()
	for _, c := range []struct {
		in   string
		want int
	}{
		{"host:0", h}, {"HOST:0", h}, {" host:0 ", h}, {strconv.Itoa(h), h},
		{"initial", target.InitialDevice}, {"-1", target.InitialDevice}, {strconv.Itoa(nd), nd},
		{"default", target.DefaultDevice},
	} {
		if got, err := ParseDevice(c.in); err != nil || got != c.want {
			t.Errorf("ParseDevice(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{strconv.Itoa(nd + 1), "device " + strconv.Itoa(nd+1) + " is out of range"},
		{"gpu:0", `no device "gpu:0"; want a number or one of: `},
		{"host:9", `no device "host:9"; want a number or one of: `},
		{"", `no device ""`},
	} {
		_, err := ParseDevice(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "host:0") {
			t.Errorf("ParseDevice(%q) = %v; want an error saying %q and naming the devices", c.in, err, c.want)
		}
	}
	// A plugin that has no device says why, once.
	for _, p := range target.Plugins() {
		if p.Devices > 0 {
			continue
		}
		_, err := ParseDevice(p.Name + ":0")
		want := `no device "` + p.Name + `:0": plugin ` + p.Name + " has none ("
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "no device: ") {
			t.Errorf("ParseDevice(%s:0) = %v; want %q and the reason once", p.Name, err, want)
		}
	}
}

// A bad -device is reported once, by flag, on the flag set's output; the
// help shows the real default device, not "(default -3)".
func TestDeviceFlag(t *testing.T) {
	h := hostNum(t)
	var out bytes.Buffer
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(&out)
	dev := deviceFlag(fs)
	if *dev != target.DefaultDevice {
		t.Errorf("unset -device = %d, want target.DefaultDevice", *dev)
	}
	if err := fs.Parse([]string{"-device", "host:0"}); err != nil || *dev != h {
		t.Errorf("-device host:0: %d, %v; want %d", *dev, err, h)
	}
	nd := target.NumDevices()
	bad := strconv.Itoa(nd + 5)
	if err := fs.Parse([]string{"-device", bad}); err == nil {
		t.Fatalf("-device %s accepted", bad)
	}
	if n := strings.Count(out.String(), "is out of range"); n != 1 {
		t.Errorf("-device %s: the error appears %d times, want once:\n%s", bad, n, out.String())
	}
	out.Reset()
	fs.PrintDefaults()
	help := out.String()
	def, _ := target.DeviceNum(target.DefaultDevice)
	if strings.Contains(help, "(default") || !strings.Contains(help, "now "+strconv.Itoa(def)+" = ") || !strings.Contains(help, "host:0") {
		t.Errorf("-device help should name the devices and the default device now (%d), without flag's (default ...):\n%s", def, help)
	}
}

type exited int

// Describe of a device that is not there prints the error once, on
// standard error, nothing on standard output, and exits 1.
func TestDescribeBadDeviceOnce(t *testing.T) {
	var o, e bytes.Buffer
	oldOut, oldErr, oldExit := Stdout, Stderr, exit
	Stdout, Stderr, exit = &o, &e, func(c int) { panic(exited(c)) }
	defer func() { Stdout, Stderr, exit = oldOut, oldErr, oldExit }()
	code := func() (code int) {
		defer func() {
			if r := recover(); r != nil {
				code = int(r.(exited))
			}
		}()
		Describe("veccopy", target.NumDevices()+3)
		return 0
	}()
	if code != 1 || o.Len() != 0 || strings.Count(e.String(), "\n") != 1 || !strings.HasPrefix(e.String(), "veccopy: target: no such device") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, one line on stderr", code, o.String(), e.String())
	}
	o.Reset()
	e.Reset()
	Describe("veccopy", hostNum(t))
	if !strings.HasPrefix(o.String(), "veccopy: running on device ") || e.Len() != 0 {
		t.Errorf("Describe(host:0): stdout %q, stderr %q", o.String(), e.String())
	}
}
