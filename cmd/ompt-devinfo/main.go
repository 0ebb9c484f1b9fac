// Command ompt-devinfo lists gompt's plugins and offload devices, in the
// manner of llvm-omp-device-info and clinfo: each plugin with its load
// status (and, when it has no device, the reason) and what it registered
// (the kernel images it runs, its native trace record's layout, its
// environment variables), then every device with all it can tell.
//
//	go run ./cmd/ompt-devinfo          # text
//	go run ./cmd/ompt-devinfo -json    # one JSON document
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
)

type pluginJSON struct {
	Name    string   `json:"name"`
	Loaded  bool     `json:"loaded"`
	Devices int      `json:"devices"`
	Reason  string   `json:"reason,omitempty"`
	Images  []string `json:"images,omitempty"`
	Native  string   `json:"native_record,omitempty"` // its layout: "host {Start int64 @0, ...}"
	Env     []string `json:"env,omitempty"`
}

type deviceJSON struct {
	Num               int               `json:"num"`
	ID                string            `json:"id"`
	Name              string            `json:"name"`
	Vendor            string            `json:"vendor"`
	Backend           string            `json:"backend"`
	Type              string            `json:"type"`
	Version           string            `json:"version"`
	DriverVersion     string            `json:"driver_version"`
	GlobalMem         uint64            `json:"global_mem_bytes"`
	LocalMem          uint64            `json:"local_mem_bytes"`
	MaxAlloc          uint64            `json:"max_alloc_bytes"`
	ComputeUnits      int               `json:"compute_units"`
	MaxThreadsPerTeam int               `json:"max_threads_per_team"`
	MaxTeams          int               `json:"max_teams"`
	ClockMHz          int               `json:"clock_mhz"`
	TimerResolutionNS float64           `json:"timer_resolution_ns"`
	UnifiedMemory     bool              `json:"unified_memory"`
	ZeroCopy          bool              `json:"zero_copy"` // maps use the program's memory (GOMPT_ZERO_COPY=on)
	Caps              capsJSON          `json:"capabilities"`
	TimeSource        string            `json:"time_source,omitempty"`
	BracketTimes      bool              `json:"bracket_times"`
	OpenError         string            `json:"open_error,omitempty"` // the device failed to open
	Extra             map[string]string `json:"extra,omitempty"`

	extra []device.Attr // Extra in the device's order, for the text
}

// capsJSON is device.Caps: what kernels may use on the device.
type capsJSON struct {
	FP64         featureJSON `json:"fp64"`
	Int64Atomics featureJSON `json:"int64_atomics"`
	LocalMem     limitJSON   `json:"local_mem_bytes"`
	TeamSize     limitJSON   `json:"team_size"`
}

type featureJSON struct {
	Has  bool   `json:"has"`
	Name string `json:"name"`
}

type limitJSON struct {
	N    int64  `json:"n"`
	From string `json:"from"`
}

func capsOf(c device.Caps) capsJSON {
	f := func(x device.Feature) featureJSON { return featureJSON{x.Has, x.Name} }
	l := func(x device.Limit) limitJSON { return limitJSON{x.N, x.From} }
	return capsJSON{FP64: f(c.FP64), Int64Atomics: f(c.Int64Atomics), LocalMem: l(c.LocalMem), TeamSize: l(c.TeamSize)}
}

type report struct {
	OpenMP        int          `json:"openmp"`
	Offload       string       `json:"offload"`
	InitialDevice int          `json:"initial_device"`
	DefaultDevice int          `json:"default_device"`
	Plugins       []pluginJSON `json:"plugins"`
	Devices       []deviceJSON `json:"devices"`
}

func collect() report {
	r := report{
		OpenMP:        target.OpenMPVersion,
		Offload:       target.Offloading().String(),
		InitialDevice: target.InitialDeviceNum(),
		DefaultDevice: target.GetDefaultDevice(),
		Plugins:       []pluginJSON{},
		Devices:       []deviceJSON{},
	}
	for _, p := range target.Plugins() {
		pj := pluginJSON{Name: p.Name, Loaded: p.Loaded, Devices: p.Devices}
		if p.Err != nil {
			pj.Reason = p.Err.Error()
		}
		if reg, ok := device.Registered(p.Name); ok {
			for _, k := range reg.Images {
				pj.Images = append(pj.Images, k.String())
			}
			if nt, ok := device.NativeTypeOf(reg.Native); ok {
				pj.Native = nt.String()
			}
			for _, e := range reg.Env {
				pj.Env = append(pj.Env, e.Name)
			}
		}
		r.Plugins = append(r.Plugins, pj)
	}
	for _, d := range target.Devices() {
		// Opening the device tells what it learns only then: where its
		// times come from, limits it finds by probing.
		var openErr string
		if od, err := target.OpenDevice(d.Num); err != nil {
			openErr = err.Error()
		} else {
			d = od
		}
		dj := deviceJSON{OpenError: openErr, Caps: capsOf(d.Caps), TimeSource: d.TimeSource, BracketTimes: d.BracketTimes, extra: d.Extra, Num: d.Num, ID: d.ID, Name: d.Name, Vendor: d.Vendor, Backend: d.Backend, Type: d.Type,
			Version: d.Version, DriverVersion: d.DriverVersion, GlobalMem: d.GlobalMem, LocalMem: d.LocalMem,
			MaxAlloc: d.MaxAlloc, ComputeUnits: d.ComputeUnits, MaxThreadsPerTeam: d.MaxThreadsPerTeam,
			MaxTeams: d.MaxTeams, ClockMHz: d.ClockMHz, TimerResolutionNS: d.TimerResolutionNS,
			UnifiedMemory: d.UnifiedMemory, ZeroCopy: d.ZeroCopy}
		if len(d.Extra) > 0 {
			dj.Extra = map[string]string{}
			for _, a := range d.Extra {
				dj.Extra[a.Key] = a.Value
			}
		}
		r.Devices = append(r.Devices, dj)
	}
	return r
}

func printText(w io.Writer, r report) {
	fmt.Fprintf(w, "gompt: OpenMP %d, OMP_TARGET_OFFLOAD=%s, %d offload device(s), initial device %d, default device %d\n\n",
		r.OpenMP, r.Offload, len(r.Devices), r.InitialDevice, r.DefaultDevice)
	fmt.Fprintln(w, "Plugins:")
	for _, p := range r.Plugins {
		switch {
		case p.Devices > 0:
			fmt.Fprintf(w, "  %-8s loaded, %d device(s)\n", p.Name, p.Devices)
		case p.Loaded:
			fmt.Fprintf(w, "  %-8s loaded, no devices: %s\n", p.Name, p.Reason)
		default:
			fmt.Fprintf(w, "  %-8s not loaded: %s\n", p.Name, p.Reason)
		}
		if len(p.Images) > 0 {
			fmt.Fprintf(w, "  %-8s   images: %s\n", "", strings.Join(p.Images, ", "))
		}
		if p.Native != "" {
			fmt.Fprintf(w, "  %-8s   native record: %s\n", "", p.Native)
		}
		if len(p.Env) > 0 {
			fmt.Fprintf(w, "  %-8s   environment: %s\n", "", strings.Join(p.Env, ", "))
		}
	}
	for _, d := range r.Devices {
		fmt.Fprintf(w, "\nDevice %d (%s):\n", d.Num, d.ID)
		row := func(k string, v any) { fmt.Fprintf(w, "  %-24s %v\n", k+":", v) }
		row("Name", d.Name)
		row("Vendor", d.Vendor)
		row("Backend", d.Backend)
		row("Type", d.Type)
		row("Version", d.Version)
		row("Driver version", d.DriverVersion)
		row("Global memory", mib(d.GlobalMem))
		row("Local memory", kib(d.LocalMem))
		row("Max allocation", mib(d.MaxAlloc))
		row("Compute units", d.ComputeUnits)
		row("Max threads per team", d.MaxThreadsPerTeam)
		if d.MaxTeams > 0 {
			row("Max teams", d.MaxTeams)
		}
		if d.ClockMHz > 0 {
			row("Clock", fmt.Sprintf("%d MHz", d.ClockMHz))
		}
		row("Timer resolution", fmt.Sprintf("%g ns", d.TimerResolutionNS))
		row("Unified memory", d.UnifiedMemory)
		if d.UnifiedMemory {
			zc := "off: maps copy (GOMPT_ZERO_COPY=on uses the program's memory)"
			if d.ZeroCopy {
				zc = "on: maps use the program's memory (GOMPT_ZERO_COPY=on)"
			}
			row("Zero-copy maps", zc)
		}
		if d.OpenError != "" {
			row("Open", "FAILED: "+d.OpenError)
		}
		if d.TimeSource != "" {
			row("Times", d.TimeSource)
		}
		yes := func(f featureJSON) string {
			return map[bool]string{true: "yes", false: "no"}[f.Has] + " (" + f.Name + ")"
		}
		c := d.Caps
		row("Capabilities", "")
		row("  float64", yes(c.FP64))
		row("  64-bit atomics", yes(c.Int64Atomics))
		if c.LocalMem.N >= 1<<62 {
			row("  team-local memory", "no limit ("+c.LocalMem.From+")")
		} else {
			row("  team-local memory", fmt.Sprintf("%d bytes (%s)", c.LocalMem.N, c.LocalMem.From))
		}
		row("  team size", fmt.Sprintf("at most %d threads (%s)", c.TeamSize.N, c.TeamSize.From))
		for _, a := range d.extra {
			row(a.Key, a.Value)
		}
	}
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB (%d bytes)", b>>20, b) }
func kib(b uint64) string { return fmt.Sprintf("%d KiB", b>>10) }

func main() {
	asJSON := flag.Bool("json", false, "print one JSON document instead of text")
	flag.Parse()
	r := collect()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, "ompt-devinfo:", err)
			os.Exit(1)
		}
		return
	}
	printText(os.Stdout, r)
}
