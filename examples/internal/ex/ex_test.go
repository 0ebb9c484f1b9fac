package ex

import (
	"bytes"
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		got, err := ParseDevice(c.in)
		if assert.NoError(t, err, "ParseDevice(%q)", c.in) {
			assert.Equal(t, c.want, got, "ParseDevice(%q)", c.in)
		}
	}
	for _, c := range []struct{ in, want string }{
		{strconv.Itoa(nd + 1), "device " + strconv.Itoa(nd+1) + " is out of range"},
		{"gpu:0", `no device "gpu:0"; want a number or one of: `},
		{"host:9", `no device "host:9"; want a number or one of: `},
		{"", `no device ""`},
	} {
		_, err := ParseDevice(c.in)
		if assert.ErrorContains(t, err, c.want, "ParseDevice(%q)", c.in) {
			assert.Contains(t, err.Error(), "host:0", "ParseDevice(%q) names the devices", c.in)
		}
	}
	// A plugin that has no device says why, once.
	for _, p := range target.Plugins() {
		if p.Devices > 0 {
			continue
		}
		_, err := ParseDevice(p.Name + ":0")
		want := `no device "` + p.Name + `:0": plugin ` + p.Name + " has none ("
		if assert.ErrorContains(t, err, want, "ParseDevice(%s:0)", p.Name) {
			assert.NotContains(t, err.Error(), "no device: ", "ParseDevice(%s:0) gives the reason once", p.Name)
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
	assert.Equal(t, target.DefaultDevice, *dev, "unset -device")
	if assert.NoError(t, fs.Parse([]string{"-device", "host:0"}), "-device host:0") {
		assert.Equal(t, h, *dev, "-device host:0")
	}
	nd := target.NumDevices()
	bad := strconv.Itoa(nd + 5)
	require.Error(t, fs.Parse([]string{"-device", bad}), "-device %s accepted", bad)
	assert.Equal(t, 1, strings.Count(out.String(), "is out of range"), "-device %s: times the error appears:\n%s", bad, out.String())
	out.Reset()
	fs.PrintDefaults()
	help := out.String()
	def, _ := target.DeviceNum(target.DefaultDevice)
	assert.NotContains(t, help, "(default", "-device help without flag's (default ...)")
	assert.Contains(t, help, "now "+strconv.Itoa(def)+" = ", "-device help names the default device now")
	assert.Contains(t, help, "host:0", "-device help names the devices")
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
	assert.Equal(t, 1, code, "exit status")
	assert.Empty(t, o.String(), "stdout")
	assert.Equal(t, 1, strings.Count(e.String(), "\n"), "lines on stderr: %q", e.String())
	assert.True(t, strings.HasPrefix(e.String(), "veccopy: target: no such device"), "stderr: %q", e.String())
	o.Reset()
	e.Reset()
	Describe("veccopy", hostNum(t))
	assert.True(t, strings.HasPrefix(o.String(), "veccopy: running on device "), "Describe(host:0): stdout %q", o.String())
	assert.Empty(t, e.String(), "Describe(host:0): stderr")
}
