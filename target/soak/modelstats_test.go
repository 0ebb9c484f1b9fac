package soak

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// barrier is a reusable barrier for the goroutines of a round; abort
// releases everyone (a goroutine failed and will not come).
type barrier struct {
	mu      sync.Mutex
	cond    sync.Cond
	n, in   int
	gen     uint64
	aborted bool
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond.L = &b.mu
	return b
}

// wait blocks until all n goroutines have called it; false: aborted.
func (b *barrier) wait() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aborted {
		return false
	}
	g := b.gen
	b.in++
	if b.in == b.n {
		b.in, b.gen = 0, b.gen+1
		b.cond.Broadcast()
		return true
	}
	for g == b.gen && !b.aborted {
		b.cond.Wait()
	}
	return g != b.gen
}

func (b *barrier) abort() {
	b.mu.Lock()
	b.aborted = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

// classCount counts the constructs of one class on one device.
type classCount struct{ runs, wrong, errs int64 }

type classKey struct{ dev, class string }

// modelStats counts constructs and failures by device and class.
type modelStats struct {
	mu      sync.Mutex
	by      map[classKey]*classCount
	first   []string // the first failures, in full
	nfail   int
	rounds  int
	elapsed time.Duration
}

func newModelStats() *modelStats { return &modelStats{by: map[classKey]*classCount{}} }

func (m *modelStats) get(dev, cl string) *classCount {
	k := classKey{dev, cl}
	c := m.by[k]
	if c == nil {
		c = new(classCount)
		m.by[k] = c
	}
	return c
}

func (m *modelStats) run(dev, cl string) {
	m.mu.Lock()
	m.get(dev, cl).runs++
	m.mu.Unlock()
}

func (m *modelStats) fail(dev string, round, w, step int, cl string, wrong bool, msg string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.get(dev, cl)
	if wrong {
		c.wrong++
	} else {
		c.errs++
	}
	m.nfail++
	if len(m.first) < 12 {
		m.first = append(m.first, fmt.Sprintf("%s round %d goroutine %d step %d: %s: %s", dev, round, w, step, cl, msg))
	}
}

func (m *modelStats) merge(o *modelStats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, c := range o.by {
		d := m.get(k.dev, k.class)
		d.runs, d.wrong, d.errs = d.runs+c.runs, d.wrong+c.wrong, d.errs+c.errs
	}
	m.nfail += o.nfail
	m.rounds += o.rounds
	m.elapsed += o.elapsed
}

func (m *modelStats) failed() bool { return m.nfail > 0 }

func (m *modelStats) totals() (runs, wrong, errs int64) {
	for _, c := range m.by {
		runs, wrong, errs = runs+c.runs, wrong+c.wrong, errs+c.errs
	}
	return
}

func (m *modelStats) summary() string {
	runs, wrong, errs := m.totals()
	return fmt.Sprintf("%d constructs checked, %d wrong results, %d wrong errors", runs, wrong, errs)
}

func (m *modelStats) classes() []string {
	var cs []string
	for k := range m.by {
		if !slices.Contains(cs, k.class) {
			cs = append(cs, k.class)
		}
	}
	slices.Sort(cs)
	return cs
}

// table is the markdown table of constructs by class, a column per device.
func (m *modelStats) table(devs []modelDevice) string {
	var b strings.Builder
	b.WriteString("| class |")
	for _, d := range devs {
		fmt.Fprintf(&b, " %s |", d.name)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(devs)) + "\n")
	for _, cl := range m.classes() {
		fmt.Fprintf(&b, "| %s |", cl)
		for _, d := range devs {
			c := m.by[classKey{d.name, cl}]
			switch {
			case c == nil:
				b.WriteString(" |")
			case c.wrong+c.errs == 0:
				fmt.Fprintf(&b, " %d |", c.runs)
			default:
				fmt.Fprintf(&b, " **%d of %d wrong, %d errors** |", c.wrong, c.runs, c.errs)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// classRows gives the rows for writeClasses.
func (m *modelStats) classRows(devs []modelDevice) []classRow {
	var rows []classRow
	for _, cl := range m.classes() {
		for _, d := range devs {
			if c := m.by[classKey{d.name, cl}]; c != nil {
				rows = append(rows, classRow{class: cl, device: d.name, runs: c.runs, failed: c.wrong + c.errs})
			}
		}
	}
	return rows
}
