// Command timeline-merge puts the GOMPT_TRACE timelines of several
// processes (the ranks of an MPI job) into one Perfetto timeline, a
// process group per rank, on one time base:
//
//	GOMPT_TRACE=trace-%r.json mpirun -np 4 ./myprog
//	go run ./tools/timeline/cmd/timeline-merge -o job.json trace-*.json
//
// Each file records its rank, host, pid and clock anchor (the wall-clock
// time of its time zero); the merged times are microseconds from the
// earliest file's zero. Files of processes on different hosts line up as
// well as the hosts' clocks agree.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gompt/gompt/tools/timeline"
)

func main() {
	out := flag.String("o", "-", "the merged timeline's file; - for standard output")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: timeline-merge [-o merged.json] trace.json...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*out, flag.Args(), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "timeline-merge:", err)
		os.Exit(1)
	}
}

func run(out string, files []string, stdout, stderr io.Writer) error {
	if len(files) == 0 {
		return fmt.Errorf("no trace files given (usage: timeline-merge [-o merged.json] trace.json...)")
	}
	var in []timeline.MergeInput
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		tf, err := timeline.ReadFile(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: not a trace file: %v", name, err)
		}
		in = append(in, timeline.MergeInput{Name: name, File: tf})
	}
	merged, warnings, err := timeline.Merge(in)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "timeline-merge: warning:", w)
	}
	if out == "-" {
		return timeline.WriteFile(stdout, merged)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := timeline.WriteFile(f, merged); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
