package target

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

// DefaultPlugins is the plugin order used when GOMPT_PLUGINS is not set.
const DefaultPlugins = "cuda,opencl,host"

// config holds the environment as read once at start-up.
type config struct {
	offload       Offload
	defaultDevice int // OMP_DEFAULT_DEVICE; 0 when unset
	displayEnv    string
	plugins       []string
	info          int // GOMPT_INFO bit set
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
	c.plugins = strings.Split(DefaultPlugins, ",")
	if v := strings.TrimSpace(getenv("GOMPT_PLUGINS")); v != "" {
		var ps []string
		seen := map[string]bool{}
		ok := true
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" || seen[p] {
				ok = false
				break
			}
			seen[p] = true
			ps = append(ps, p)
		}
		if ok {
			c.plugins = ps
		} else {
			warnEnv("GOMPT_PLUGINS", v, "a comma-separated list of distinct plugin names such as "+DefaultPlugins, DefaultPlugins)
		}
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
		for _, d := range r.devs {
			fmt.Fprintf(w, "  [gompt] device %d = '%s' (%s)\n", d.num, d.id, d.info.Name)
		}
	}
	fmt.Fprintf(w, "OPENMP DISPLAY ENVIRONMENT END\n")
}
