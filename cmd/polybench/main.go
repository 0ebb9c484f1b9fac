// Command polybench runs the 15 PolyBench/C 4.2 kernels of package
// bench/polybench (gemm, 2mm, 3mm, atax, bicg, mvt, gesummv, syrk, syr2k,
// gemver, jacobi-2d, fdtd-2d, heat-3d, covariance, correlation) in C with
// OpenMP and in gompt on every device present, interleaved, and prints a
// table of their times:
//
//	go run ./cmd/polybench [-size LARGE] [-rounds 5] [-kernel REGEXP] [-device LIST] [-json]
//
// It builds bench/polybench/c/polybench.c with clang-19 -O3 -march=native
// -ffp-contract=off -fopenmp (LLVM's libomp) into a temporary folder.
// Each round runs, kernel by kernel, the C program, then the gompt kernels
// on each device (host:0, the initial device, each OpenCL device: POCL,
// and Mesa's rusticl where RUSTICL_ENABLE=swrast is set, which has no
// float64 and refuses them). A time is the low end (minimum) of the
// rounds. C's is its parallel regions (omp_get_wtime around the loop
// nests; for a stencil, around its host loop of time steps), without the
// initialisation; gompt's is the whole launcher calls (the maps, the
// kernels and the copies back; for a benchmark of several launches, the
// target data region around them), without the initialisation either.
// Before the first round every kernel runs once at MINI on every device,
// untimed, so that no time includes an OpenCL build.
//
// Every run's outputs are hashed and compared with the C program's: the
// two keep the same order of operations, so they must be equal bit for
// bit; a difference is marked "!" and makes the command fail.
//
// The ratio is gompt's time over C's (below 1: gompt is faster); "best" is
// the fastest device per kernel, and the geometric means are taken over
// the kernels (for one device, over those it ran).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gompt/gompt/bench/polybench"
	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/target"
)

type dev struct {
	Num  int    `json:"num"`  // OpenMP device number, target.InitialDevice for the initial device
	Name string `json:"name"` // "host:0", "opencl:0", "initial"
	Desc string `json:"desc"`
}

type cell struct {
	Seconds float64 `json:"seconds,omitempty"` // low end
	Ratio   float64 `json:"ratio,omitempty"`   // over C's
	Refused string  `json:"refused,omitempty"` // why the device refused the kernels
	Differs bool    `json:"differs,omitempty"` // outputs differ from C's
}

type row struct {
	Kernel    string           `json:"kernel"`
	Params    map[string]int   `json:"params"`
	CSeconds  float64          `json:"c_seconds"`
	Gompt     map[string]*cell `json:"gompt"`
	Best      string           `json:"best"`
	BestRatio float64          `json:"best_ratio"`
	cHash     uint64
}

type report struct {
	Size       string             `json:"size"`
	Rounds     int                `json:"rounds"`
	CPUs       int                `json:"cpus"`
	C          string             `json:"c"`
	Timing     string             `json:"timing"`
	Devices    []dev              `json:"devices"`
	Kernels    []*row             `json:"kernels"`
	GeoBest    float64            `json:"geomean_best"`
	GeoDevices map[string]float64 `json:"geomean"`
	Differ     bool               `json:"differ"`
}

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err2 := target.Shutdown(); err == nil {
		err = err2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage): // the flag package has said why
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "polybench:", err)
		os.Exit(1)
	}
}

// errUsage is run's error for flags it cannot parse, once it has printed why.
var errUsage = errors.New("usage")

// errDiffer is run's error when some gompt results differ from C's.
var errDiffer = errors.New("some gompt results differ from C's (marked !)")

// run is the command, with its arguments, writing the table or JSON to
// stdout and its progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("polybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizeFlag := fs.String("size", "LARGE", "PolyBench dataset: MINI, SMALL, MEDIUM or LARGE")
	rounds := fs.Int("rounds", 5, "rounds; each runs every kernel in C, then on each device")
	kernel := fs.String("kernel", "", "run the kernels whose names match this regexp (default all)")
	devFlag := fs.String("device", "", "comma-separated devices, by name (host:0, opencl:0, initial) or number (default every device)")
	asJSON := fs.Bool("json", false, "print the results as one JSON object")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	size, err := polybench.ParseSize(*sizeFlag)
	if err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds must be at least 1")
	}
	re, err := regexp.Compile(*kernel)
	if err != nil {
		return err
	}
	var benches []*polybench.Bench
	for _, b := range polybench.All {
		if re.MatchString(b.Name) {
			benches = append(benches, b)
		}
	}
	if len(benches) == 0 {
		return fmt.Errorf("no kernel matches %q", *kernel)
	}
	devs, err := selectDevices(*devFlag)
	if err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "gompt-polybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe, err := polybench.BuildC(dir)
	if err != nil {
		return err
	}

	rep := &report{Size: size.String(), Rounds: *rounds, CPUs: runtime.NumCPU(), Devices: devs,
		C:          polybench.Clang + " " + strings.Join(polybench.CFlags, " ") + " (libomp)",
		Timing:     "C: its parallel regions (omp_get_wtime); gompt: the whole launcher calls (map, kernel, unmap; the target data region around several launches); low end of the rounds",
		GeoDevices: map[string]float64{}}
	rows := map[string]*row{}
	refused := map[string]string{} // kernel/device -> why
	for _, b := range benches {
		r := &row{Kernel: b.Name, Params: map[string]int{}, Gompt: map[string]*cell{}}
		for i, p := range strings.Fields(b.Params) {
			r.Params[p] = b.Args(size)[i]
		}
		rows[b.Name] = r
		rep.Kernels = append(rep.Kernels, r)
		// Warm up: load (build) every kernel on every device, untimed.
		for _, d := range devs {
			if err := b.New(b.Args(polybench.Mini)).Run(d.Num); err != nil {
				if errors.Is(err, device.ErrUnsupported) {
					refused[b.Name+"/"+d.Name] = err.Error()
					continue
				}
				return fmt.Errorf("%s on %s: %w", b.Name, d.Name, err)
			}
		}
	}

	best := func(old, t float64) float64 {
		if old == 0 || t < old {
			return t
		}
		return old
	}
	start := time.Now()
	for round := 1; round <= *rounds; round++ {
		fmt.Fprintf(stderr, "round %d/%d:", round, *rounds)
		for _, b := range benches {
			fmt.Fprintf(stderr, " %s", b.Name)
			r := rows[b.Name]
			p := b.Args(size)
			ct, h, err := polybench.RunC(exe, b.Name, p)
			if err != nil {
				return err
			}
			r.CSeconds = best(r.CSeconds, ct.Seconds())
			r.cHash = h
			for _, d := range devs {
				c := r.Gompt[d.Name]
				if c == nil {
					c = &cell{}
					r.Gompt[d.Name] = c
				}
				if why, ok := refused[b.Name+"/"+d.Name]; ok {
					c.Refused = why
					continue
				}
				in := b.New(p)
				runtime.GC()
				t0 := time.Now()
				err := in.Run(d.Num)
				el := time.Since(t0)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", b.Name, d.Name, err)
				}
				c.Seconds = best(c.Seconds, el.Seconds())
				if polybench.Hash(in.Outputs()) != h {
					c.Differs = true
					rep.Differ = true
				}
			}
		}
		fmt.Fprintln(stderr)
	}
	fmt.Fprintf(stderr, "%d rounds in %s\n", *rounds, time.Since(start).Round(time.Second))

	logs := map[string]float64{}
	counts := map[string]int{}
	var bestLog float64
	for _, r := range rep.Kernels {
		for _, d := range devs {
			c := r.Gompt[d.Name]
			if c.Refused != "" {
				continue
			}
			c.Ratio = c.Seconds / r.CSeconds
			logs[d.Name] += math.Log(c.Ratio)
			counts[d.Name]++
			if r.Best == "" || c.Ratio < r.BestRatio {
				r.Best, r.BestRatio = d.Name, c.Ratio
			}
		}
		bestLog += math.Log(r.BestRatio)
	}
	rep.GeoBest = math.Exp(bestLog / float64(len(rep.Kernels)))
	for name, l := range logs {
		rep.GeoDevices[name] = math.Exp(l / float64(counts[name]))
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printTable(stdout, rep)
	}
	if rep.Differ {
		return errDiffer
	}
	return nil
}

func printTable(w io.Writer, rep *report) {
	fmt.Fprintf(w, "PolyBench/C 4.2, %s dataset, float64; low end of %d rounds, interleaved (each round, kernel by kernel: C, then each gompt device); %d CPUs\n",
		rep.Size, rep.Rounds, rep.CPUs)
	fmt.Fprintf(w, "C: %s, one `omp parallel for` per loop nest; time: its parallel regions\n", rep.C)
	fmt.Fprintf(w, "gompt: one kernel per loop nest; time: the whole launcher calls (map, kernel, unmap; the data region around several launches)\n")
	for _, d := range rep.Devices {
		fmt.Fprintf(w, "  %-9s %s\n", d.Name, d.Desc)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "kernel\tC OpenMP\t"
	for _, d := range rep.Devices {
		hdr += d.Name + "\t×C\t"
	}
	hdr += "best\t×C\t"
	fmt.Fprintln(tw, hdr)
	for _, r := range rep.Kernels {
		line := r.Kernel + "\t" + ms(r.CSeconds) + "\t"
		for _, d := range rep.Devices {
			c := r.Gompt[d.Name]
			switch {
			case c.Refused != "":
				line += "refused\t-\t"
			default:
				mark := ""
				if c.Differs {
					mark = "!"
				}
				line += ms(c.Seconds) + mark + "\t" + ratio(c.Ratio) + "\t"
			}
		}
		line += r.Best + "\t" + ratio(r.BestRatio) + "\t"
		fmt.Fprintln(tw, line)
	}
	line := "geomean\t\t"
	for _, d := range rep.Devices {
		if g, ok := rep.GeoDevices[d.Name]; ok {
			line += "\t" + ratio(g) + "\t"
		} else {
			line += "\t-\t"
		}
	}
	line += "best\t" + ratio(rep.GeoBest) + "\t"
	fmt.Fprintln(tw, line)
	tw.Flush()
	fmt.Fprintln(w, "\ntimes in ms; ×C: gompt's time over C's (below 1, gompt is faster)")
	for _, d := range rep.Devices {
		n, first := 0, ""
		for _, r := range rep.Kernels {
			if c := r.Gompt[d.Name]; c.Refused != "" {
				if n == 0 {
					first = c.Refused
				}
				n++
			}
		}
		if n > 0 {
			fmt.Fprintf(w, "%s refused %d of the %d kernels at load; the first: %s\n", d.Name, n, len(rep.Kernels), first)
		}
	}
}

// ms formats seconds as milliseconds with three or more significant digits.
func ms(s float64) string {
	m := s * 1000
	switch {
	case m < 10:
		return strconv.FormatFloat(m, 'f', 2, 64)
	case m < 100:
		return strconv.FormatFloat(m, 'f', 1, 64)
	}
	return strconv.FormatFloat(m, 'f', 0, 64)
}

func ratio(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) }

// selectDevices returns the devices -device names, or every offload device
// and the initial device.
func selectDevices(spec string) ([]dev, error) {
	var all []dev
	for _, d := range target.Devices() {
		all = append(all, dev{Num: d.Num, Name: d.ID, Desc: d.Name})
	}
	all = append(all, dev{Num: target.InitialDevice, Name: "initial", Desc: "the initial device: the kernels' Go images on the program's slices"})
	if spec == "" {
		return all, nil
	}
	var out []dev
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		found := false
		for _, d := range all {
			if f == d.Name || f == strconv.Itoa(d.Num) || (d.Num == target.InitialDevice && f == strconv.Itoa(target.InitialDeviceNum())) {
				out = append(out, d)
				found = true
			}
		}
		if !found {
			var names []string
			for _, d := range all {
				names = append(names, d.Name)
			}
			return nil, fmt.Errorf("no device %q: the devices are %s", f, strings.Join(names, ", "))
		}
	}
	return out, nil
}
