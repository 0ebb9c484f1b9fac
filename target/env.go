package target

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gompt/gompt/device"
)

// Offload is the target-offload-var ICV (OMP_TARGET_OFFLOAD).
type Offload int

// Offload policies, with their OpenMP meanings.
const (
	OffloadDefault   Offload = iota // use a device if there is one, else the initial device
	OffloadMandatory                // a construct whose device is unavailable is an error
	OffloadDisabled                 // every construct runs on the initial device; no devices
)

func (o Offload) String() string {
	switch o {
	case OffloadMandatory:
		return "MANDATORY"
	case OffloadDisabled:
		return "DISABLED"
	}
	return "DEFAULT"
}

// DefaultPlugins returns the plugin order used when GOMPT_PLUGINS is not
// set, comma-separated: the registered plugins in their default order
// (device.DefaultOrder).
func DefaultPlugins() string { return strings.Join(device.DefaultOrder(), ",") }

// config holds the environment as read once at start-up.
type config struct {
	offload       Offload
	defaultDevice int // OMP_DEFAULT_DEVICE; 0 when unset
	displayEnv    string
	plugins       []string
	info          int  // GOMPT_INFO bit set
	zeroCopy      bool // GOMPT_ZERO_COPY=on: maps use the program's memory where a device can
}

// GOMPT_INFO bits, in the manner of LIBOMPTARGET_INFO.
const (
	infoMapping = 1 << iota // every map entry made or released, with addresses
	infoLaunch              // every kernel launch with its shape and device
	infoTable               // the present table after each construct exit
	infoAll     = infoMapping | infoLaunch | infoTable
)

// warnOut is where bad environment values are reported; tests replace it.
var warnOut io.Writer = os.Stderr

func warnEnv(name, val, accepts, using string) {
	fmt.Fprintf(warnOut, "gompt: %s=%q: want %s; using %s\n", name, val, accepts, using)
}

// readConfig reads the environment through getenv. Bad values get a one-line
// warning and the default; nothing here fails.
func readConfig(getenv func(string) string) config {
	c := config{}
	switch v := strings.TrimSpace(getenv("OMP_TARGET_OFFLOAD")); strings.ToLower(v) {
	case "", "default":
	case "mandatory":
		c.offload = OffloadMandatory
	case "disabled":
		c.offload = OffloadDisabled
	default:
		warnEnv("OMP_TARGET_OFFLOAD", v, "mandatory, disabled or default", "default")
	}
	if v := strings.TrimSpace(getenv("OMP_DEFAULT_DEVICE")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			warnEnv("OMP_DEFAULT_DEVICE", v, "a device number 0 or more", "0")
		} else {
			c.defaultDevice = n
		}
	}
	switch v := strings.TrimSpace(getenv("OMP_DISPLAY_ENV")); strings.ToLower(v) {
	case "", "false":
	case "true", "verbose":
		c.displayEnv = strings.ToLower(v)
	default:
		warnEnv("OMP_DISPLAY_ENV", v, "true, false or verbose", "false")
	}
	c.plugins = device.DefaultOrder()
	if v := strings.TrimSpace(getenv("GOMPT_PLUGINS")); v != "" {
		c.plugins = readPlugins(v)
	}
	// Every plugin's variables, whether or not GOMPT_PLUGINS uses it: a
	// bad value is reported once, here or by the plugin reading it.
	for _, e := range device.EnvVars() {
		if v := getenv(e.Name); e.Refuses(v) && device.WarnOnce(e.Name, v) {
			fmt.Fprintln(warnOut, e.Warning(v))
		}
	}
	switch v := strings.TrimSpace(getenv("GOMPT_ZERO_COPY")); strings.ToLower(v) {
	case "", "off":
	case "on":
		c.zeroCopy = true
	default:
		warnEnv("GOMPT_ZERO_COPY", v, "off or on", "off")
	}
	if v := strings.TrimSpace(getenv("GOMPT_INFO")); v != "" {
		switch strings.ToLower(v) {
		case "true", "all":
			c.info = infoAll
		case "false":
		default:
			n, err := strconv.ParseUint(v, 0, 8)
			if err != nil || n > infoAll {
				warnEnv("GOMPT_INFO", v, fmt.Sprintf("a bit set 0..%d (1 mapping, 2 launches, 4 present table) or all", infoAll), "0")
			} else {
				c.info = int(n)
			}
		}
	}
	return c
}

// readPlugins reads GOMPT_PLUGINS's value v (not empty): a list of
// distinct registered plugin names. A name in the wrong case is taken
// with a warning; an unknown name is dropped with a warning naming the
// registered plugins; a list with a repeated or empty name, or with no
// known name left, gives the default with a warning.
func readPlugins(v string) []string {
	registered := device.Plugins()
	accepts := "a comma-separated list of distinct plugin names from " + strings.Join(registered, ", ")
	def := DefaultPlugins()
	var ps, unknown []string
	seen := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			warnEnv("GOMPT_PLUGINS", v, accepts, def)
			return device.DefaultOrder()
		}
		seen[p] = true
		if _, ok := device.Lookup(p); ok {
			ps = append(ps, p)
			continue
		}
		if l := strings.ToLower(p); l != p {
			if _, ok := device.Lookup(l); ok && !seen[l] {
				seen[l] = true
				ps = append(ps, l)
				unknown = append(unknown, fmt.Sprintf("%q (plugin names are lower case)", p))
				continue
			}
		}
		unknown = append(unknown, fmt.Sprintf("%q", p))
	}
	if len(ps) == 0 {
		warnEnv("GOMPT_PLUGINS", v, accepts, def)
		return device.DefaultOrder()
	}
	if len(unknown) > 0 {
		fmt.Fprintf(warnOut, "gompt: GOMPT_PLUGINS=%q: no plugin %s; want %s; using %s\n",
			v, strings.Join(unknown, ", "), accepts, strings.Join(ps, ","))
	}
	return ps
}

// libraryEnv returns the variable that names plugin's driver library
// (device.EnvVar.Library), if it has one.
func libraryEnv(plugin string) (string, bool) {
	r, _ := device.Registered(plugin)
	for _, e := range r.Env {
		if e.Library {
			return e.Name, true
		}
	}
	return "", false
}

// checkDevices reports the settings that the devices found make wrong: a
// driver library named in the environment with which its plugin found no
// device, and a default device that names none. Each gets a one-line
// warning; under OMP_TARGET_OFFLOAD=mandatory they are errors: a
// construct on the default device fails (resolve), and with a library
// that gave no device every construct on an offload device fails
// (r.envErr), naming the variable.
func (r *runtimeState) checkDevices(getenv func(string) string) {
	if r.cfg.offload == OffloadDisabled {
		return
	}
	mandatory := r.cfg.offload == OffloadMandatory
	var libErrs []string
	for _, p := range r.plugins {
		env, ok := libraryEnv(p.Name)
		if !ok || p.Devices > 0 || !p.Loaded {
			continue
		}
		if v := getenv(env); v != "" {
			e := fmt.Sprintf("%s=%q: the %s plugin found no device with it (%s)", env, v, p.Name,
				strings.TrimPrefix(fmt.Sprint(p.Err), p.Name+": no device: "))
			libErrs = append(libErrs, e)
			if mandatory {
				fmt.Fprintf(warnOut, "gompt: error: %s; with OMP_TARGET_OFFLOAD=mandatory, constructs on offload devices fail\n", e)
			} else {
				fmt.Fprintf(warnOut, "gompt: %s\n", e)
			}
		}
	}
	if n := r.cfg.defaultDevice; n > len(r.devs) {
		e := fmt.Sprintf("OMP_DEFAULT_DEVICE=%q: device %d is out of range: %d offload device(s), %d the initial device (%s)",
			strings.TrimSpace(getenv("OMP_DEFAULT_DEVICE")), n, len(r.devs), len(r.devs), r.why())
		if mandatory {
			fmt.Fprintf(warnOut, "gompt: error: %s; with OMP_TARGET_OFFLOAD=mandatory, constructs on the default device fail\n", e)
		} else {
			fmt.Fprintf(warnOut, "gompt: %s; using the initial device\n", e)
		}
	}
	if len(libErrs) > 0 && mandatory {
		r.envErr = fmt.Errorf("%w: OMP_TARGET_OFFLOAD=mandatory and %s", ErrDevice, strings.Join(libErrs, "; "))
	}
}

// displayEnv prints the ICVs in the format of OMP_DISPLAY_ENV.
func (r *runtimeState) displayEnv(w io.Writer) {
	fmt.Fprintf(w, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n")
	fmt.Fprintf(w, "  _OPENMP = '%d'\n", OpenMPVersion)
	fmt.Fprintf(w, "  OMP_DEFAULT_DEVICE = '%d'\n", r.defaultDevice.Load())
	fmt.Fprintf(w, "  OMP_TARGET_OFFLOAD = '%s'\n", r.cfg.offload)
	fmt.Fprintf(w, "  OMP_NUM_DEVICES = '%d'\n", len(r.devs))
	if r.cfg.displayEnv == "verbose" {
		fmt.Fprintf(w, "  [gompt] GOMPT_PLUGINS = '%s'\n", strings.Join(r.cfg.plugins, ","))
		fmt.Fprintf(w, "  [gompt] GOMPT_INFO = '%d'\n", r.cfg.info)
		fmt.Fprintf(w, "  [gompt] GOMPT_ZERO_COPY = '%s'\n", map[bool]string{false: "off", true: "on"}[r.cfg.zeroCopy])
		for _, e := range device.EnvVars() { // the plugins' variables that are set
			if v := r.getenv(e.Name); v != "" {
				fmt.Fprintf(w, "  [gompt] %s = '%s' (%s)\n", e.Name, v, e.Plugin)
			}
		}
		for _, d := range r.devs {
			fmt.Fprintf(w, "  [gompt] device %d = '%s' (%s)\n", d.num, d.id, d.info.Name)
		}
	}
	fmt.Fprintf(w, "OPENMP DISPLAY ENVIRONMENT END\n")
}
