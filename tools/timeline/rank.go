package timeline

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gompt/gompt/ompt"
)

// RankEnv lists the variables that MPI launchers set to a process's rank,
// in the order they are read: Open MPI's mpirun, MPICH's and Intel MPI's
// (PMI), PMIx launchers, and Slurm's srun.
var RankEnv = []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}

// Rank returns the process's rank from the first variable of RankEnv that
// holds a whole number, and that variable's name; ok is false when none
// does (not an MPI or Slurm job).
func Rank(getenv func(string) string) (rank int, from string, ok bool) {
	for _, v := range RankEnv {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv(v))); err == nil && n >= 0 {
			return n, v, true
		}
	}
	return 0, "", false
}

// ExpandPath expands GOMPT_TRACE's value: %r is the rank (Rank; 0 outside
// a job), %p the process id, %h the host name, %% a percent sign, so that
// every process of a job writes its own file ("trace-%r.json"). Any other
// %x is left as it is and named in bad.
func ExpandPath(path string, getenv func(string) string) (expanded string, bad []string) {
	if !strings.Contains(path, "%") {
		return path, nil
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c != '%' || i+1 == len(path) {
			b.WriteByte(c)
			if c == '%' {
				bad = append(bad, "%")
			}
			continue
		}
		i++
		switch path[i] {
		case 'r':
			r, _, _ := Rank(getenv)
			b.WriteString(strconv.Itoa(r))
		case 'p':
			b.WriteString(strconv.Itoa(os.Getpid()))
		case 'h':
			h, err := os.Hostname()
			if err != nil || h == "" {
				h = "unknown-host"
			}
			b.WriteString(h)
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(path[i])
			bad = append(bad, "%"+string(path[i]))
		}
	}
	return b.String(), bad
}

// processInfo is what a trace file records about the process that wrote
// it, in otherData, for timeline-merge: its rank (when in a job), host,
// pid, and a clock anchor, the wall-clock time (Unix nanoseconds, as a
// decimal string so that JSON numbers lose no digits) of the zero of the
// file's time base (ompt.Wtime), from one reading of both clocks. Files
// of processes on one host share the wall clock exactly; across hosts it
// is as good as their clock synchronisation (NTP, PTP).
func processInfo(getenv func(string) string) map[string]any {
	m := map[string]any{"pid": os.Getpid()}
	if r, from, ok := Rank(getenv); ok {
		m["rank"], m["rank_from"] = r, from
	}
	if h, err := os.Hostname(); err == nil {
		m["host"] = h
	}
	now := time.Now()
	w := ompt.Wtime()
	m["clock_anchor"] = map[string]any{
		"wtime_zero_unix_ns": strconv.FormatInt(now.UnixNano()-int64(w*1e9), 10),
		"taken_at_wtime_s":   w,
	}
	return m
}
