// Command ompt-bench measures gompt's overheads and throughput on every
// device present, side by side with the same work done without gompt (a
// plain Go loop, or the vendor API through the plugin's binding alone).
//
//	go run ./cmd/ompt-bench -json                 # every case on every device
//	go run ./cmd/ompt-bench -case empty_target    # one case (comma list or regexp)
//	go run ./cmd/ompt-bench -device host:0        # one device (ID or number, or initial)
//
// With -json each result is one JSON object per line:
//
//	{"name":"empty_target","device":"host:0","ns_per_op":101.2,"allocs_per_op":0,"iterations":10000000}
//
// bytes_per_sec is present where a case moves a known number of bytes.
//
// On a machine whose speed wanders, -rounds N runs the chosen cases N
// times, interleaved (every case once, then every case again), and prints
// one line per case at the end: ns_per_op is the lowest of the N rounds,
// ns_per_op_median their median, and rounds N.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gompt/gompt/target"
)

// result is one line of output.
type result struct {
	Name        string  `json:"name"`
	Device      string  `json:"device"`
	NsPerOp     float64 `json:"ns_per_op"`
	BytesPerSec float64 `json:"bytes_per_sec,omitempty"`
	AllocsPerOp int64   `json:"allocs_per_op"`
	Iterations  int     `json:"iterations"`
	Error       string  `json:"error,omitempty"`

	// Metrics a case reports besides time (b.ReportMetric), by unit:
	// "cpu-ns/op" for the wait cases
	Metrics map[string]float64 `json:"metrics,omitempty"`

	// with -rounds N > 1: NsPerOp is the lowest of the N rounds (and
	// BytesPerSec the highest), NsPerOpMedian their median
	Rounds        int     `json:"rounds,omitempty"`
	NsPerOpMedian float64 `json:"ns_per_op_median,omitempty"`
}

// bcase is one benchmark case. run is called by testing.Benchmark; bytes
// is the number of bytes one op moves (0 if not meaningful). setup, when
// not nil, runs once before and returns a teardown.
type bcase struct {
	name    string
	backend string // "" for every device, else the plugin name
	bytes   int64
	env     []string // run in a child process with this environment (a tool attached)
	// plainEnv: env configures the runtime, not a tool (no tool is expected)
	plainEnv bool
	bench    func(dev int) (func(b *testing.B), func(), error)
}

var cases []bcase

func register(c bcase) { cases = append(cases, c) }

func main() {
	asJSON := flag.Bool("json", false, "print one JSON object per line")
	devSel := flag.String("device", "", "only this device: an ID as ompt-devinfo shows it (host:0), a device number, or initial (the initial device)")
	caseSel := flag.String("case", "", "only these cases: a comma-separated list of names, or a regular expression")
	benchtime := flag.String("benchtime", "1s", "target run time per case, or `N`x for exactly N iterations (as go test -benchtime)")
	list := flag.Bool("list", false, "list the case names and exit")
	cpuprof := flag.String("cpuprofile", "", "write a CPU profile of the cases run in this process to `file`")
	rounds := flag.Int("rounds", 1, "run the chosen cases this many times, interleaved, and report each case's lowest and median ns/op")
	flag.Parse()
	if *rounds < 1 {
		fmt.Fprintf(os.Stderr, "ompt-bench: -rounds %d: want 1 or more\n", *rounds)
		os.Exit(2)
	}
	testing.Init()
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		fmt.Fprintf(os.Stderr, "ompt-bench: -benchtime %q: want a duration (1s) or an iteration count (1000x)\n", *benchtime)
		os.Exit(2)
	}
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ompt-bench:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	if *list {
		for _, c := range cases {
			b := c.backend
			if b == "" {
				b = "all"
			}
			fmt.Printf("%-28s %s\n", c.name, b)
		}
		return
	}
	match, err := caseMatcher(*caseSel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ompt-bench:", err)
		os.Exit(2)
	}
	devs := target.Devices()
	var chosen []target.DeviceInfo
	for _, d := range devs {
		if *devSel == "" || *devSel == d.ID || *devSel == strconv.Itoa(d.Num) {
			chosen = append(chosen, d)
		}
	}
	if *devSel == "initial" {
		// the initial device runs a kernel's Go image on the host, as host:0
		// does, so it runs the host cases
		chosen = append(chosen, target.DeviceInfo{Num: target.InitialDevice, ID: "initial", Plugin: "host"})
	}
	if len(chosen) == 0 {
		fmt.Fprintf(os.Stderr, "ompt-bench: no device matches -device %q; devices: %s\n", *devSel, ids(devs))
		os.Exit(2)
	}
	type run struct {
		c bcase
		d target.DeviceInfo
	}
	var runs []run
	for _, d := range chosen {
		for _, c := range cases {
			if (c.backend == "" || c.backend == d.Plugin) && match(c.name) {
				runs = append(runs, run{c, d})
			}
		}
	}
	if len(runs) == 0 {
		fmt.Fprintf(os.Stderr, "ompt-bench: no case matches -case %q on the chosen devices (see -list)\n", *caseSel)
		os.Exit(2)
	}
	all := make([][]result, len(runs)) // with -rounds: each run's result of every round
	for range *rounds {
		for i, r := range runs {
			var res result
			if len(r.c.env) > 0 && os.Getenv(childEnv) == "" {
				res = runChild(r.c, r.d, *benchtime)
			} else {
				res = runCase(r.c, r.d)
			}
			if *rounds == 1 {
				emit(*asJSON, res)
			}
			all[i] = append(all[i], res)
		}
	}
	if *rounds > 1 {
		for _, rs := range all {
			emit(*asJSON, summarize(rs))
		}
	}
	removeCTool()
	if err := target.Shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "ompt-bench: shutdown:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func ids(devs []target.DeviceInfo) string {
	var s []string
	for _, d := range devs {
		s = append(s, d.ID)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func caseMatcher(sel string) (func(string) bool, error) {
	if sel == "" {
		return func(string) bool { return true }, nil
	}
	names := map[string]bool{}
	plain := true
	for _, n := range strings.Split(sel, ",") {
		if !regexp.MustCompile(`^[A-Za-z0-9_]+$`).MatchString(n) {
			plain = false
		}
		names[n] = true
	}
	if plain {
		return func(s string) bool { return names[s] }, nil
	}
	re, err := regexp.Compile(sel)
	if err != nil {
		return nil, fmt.Errorf("-case %q: not a list of names nor a regular expression: %v", sel, err)
	}
	return re.MatchString, nil
}

func runCase(c bcase, d target.DeviceInfo) result {
	r := result{Name: c.name, Device: d.ID}
	fn, teardown, err := c.bench(d.Num)
	if err == nil && len(c.env) > 0 && !c.plainEnv && !toolAttached() {
		// the setup ran a construct, so the interface has started
		err = fmt.Errorf("no tool attached: the case needs the tool its environment names (%s; OMP_TOOL_VERBOSE_INIT=stderr tells why none started)", strings.Join(c.env, " "))
		if teardown != nil {
			teardown()
		}
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	var failed error
	br := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		defer func() {
			if p := recover(); p != nil {
				failed = fmt.Errorf("%v", p)
			}
		}()
		fn(b)
	})
	if teardown != nil {
		teardown()
	}
	if failed != nil {
		r.Error = failed.Error()
		return r
	}
	if br.N > 0 {
		r.NsPerOp = float64(br.T.Nanoseconds()) / float64(br.N)
		r.AllocsPerOp = br.AllocsPerOp()
		r.Iterations = br.N
		if len(br.Extra) > 0 {
			r.Metrics = br.Extra
		}
		if c.bytes > 0 && r.NsPerOp > 0 {
			r.BytesPerSec = float64(c.bytes) / (r.NsPerOp / 1e9)
		}
	}
	return r
}

// summarize folds one case's rounds into one result: the lowest ns/op
// (with that round's allocations and iterations), the highest bandwidth,
// the median ns/op; the first error if any round failed.
func summarize(rs []result) result {
	var ns []float64
	best := result{Name: rs[0].Name, Device: rs[0].Device}
	for _, r := range rs {
		if r.Error != "" {
			if best.Error == "" {
				best.Error = r.Error
			}
			continue
		}
		if len(ns) == 0 || r.NsPerOp < best.NsPerOp {
			best.NsPerOp, best.AllocsPerOp, best.Iterations, best.Metrics = r.NsPerOp, r.AllocsPerOp, r.Iterations, r.Metrics
		}
		best.BytesPerSec = max(best.BytesPerSec, r.BytesPerSec)
		ns = append(ns, r.NsPerOp)
	}
	best.Rounds = len(rs)
	if n := len(ns); n > 0 {
		slices.Sort(ns)
		best.NsPerOpMedian = ns[n/2]
		if n%2 == 0 {
			best.NsPerOpMedian = (ns[n/2-1] + ns[n/2]) / 2
		}
	}
	return best
}

func emit(asJSON bool, r result) {
	if asJSON {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		return
	}
	if r.Error != "" {
		fmt.Printf("%-28s %-10s ERROR %s\n", r.Name, r.Device, r.Error)
		return
	}
	bw := ""
	if r.BytesPerSec > 0 {
		bw = fmt.Sprintf("%10.2f GB/s", r.BytesPerSec/1e9)
	}
	med := ""
	if r.Rounds > 1 {
		med = fmt.Sprintf(" (lowest of %d rounds; median %.1f)", r.Rounds, r.NsPerOpMedian)
	}
	var extra strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r.Metrics)) {
		fmt.Fprintf(&extra, " %.1f %s", r.Metrics[k], k)
	}
	fmt.Printf("%-28s %-10s %14.1f ns/op%s %4d allocs/op %s%s\n", r.Name, r.Device, r.NsPerOp, med, r.AllocsPerOp, bw, extra.String())
}

// must stops a benchmark on an error; runCase reports it.
func must(b *testing.B, err error) {
	if err != nil {
		panic(err)
	}
}
