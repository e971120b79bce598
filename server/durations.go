package server

import (
	"slices"
	"sync"
	"time"

	"lekta.dev/lekta/compare"
)

// Typical audit durations: the figures /bot and the progress page show.
const (
	// durationsKept is how many recent audits the figures come from.
	durationsKept = 200
	// durationsEnough is how many audits must have run before measured
	// figures replace the configured bounds.
	durationsEnough = 20
)

// DefaultTypical is the typical duration of an audit said until this
// instance has measured its own: 5 to 30 seconds.
var DefaultTypical = [2]time.Duration{5 * time.Second, 30 * time.Second}

// durations keeps the wall times of the last audits run in this process.
type durations struct {
	bounds [2]time.Duration
	mu     sync.Mutex
	last   []time.Duration
	next   int
}

func newDurations(bounds [2]time.Duration) *durations {
	if bounds[1] <= 0 {
		bounds = DefaultTypical
	}
	return &durations{bounds: bounds}
}

// add records one audit's duration.
func (d *durations) add(took time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.last) < durationsKept {
		d.last = append(d.last, took)
		return
	}
	d.last[d.next] = took
	d.next = (d.next + 1) % durationsKept
}

// spread returns the 50th and 95th percentile of the recent audits and how
// many there were; measured is false (and the bounds come back) until
// durationsEnough audits have run.
func (d *durations) spread() (p50, p95 time.Duration, n int, measured bool) {
	p50, p95, n = d.measured()
	if n < durationsEnough {
		return d.bounds[0], d.bounds[1], n, false
	}
	return p50, p95, n, true
}

// measured returns the 50th and 95th percentile of the recent audits and
// how many there were; zero durations when there were none.
func (d *durations) measured() (p50, p95 time.Duration, n int) {
	d.mu.Lock()
	sorted := slices.Clone(d.last)
	d.mu.Unlock()
	if len(sorted) == 0 {
		return 0, 0, 0
	}
	slices.Sort(sorted)
	at := func(q float64) time.Duration { return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))] }
	return at(0.5), at(0.95), len(sorted)
}

// typical says the spread in words: "5 s to 30 s".
func (d *durations) typical() string {
	p50, p95, _, _ := d.spread()
	return compare.Duration(p50) + " to " + compare.Duration(p95)
}

// estimate says, for a reader waiting on an audit, how long audits take
// here: measured on this instance once it has run any ("audits here took
// 0.3 s to 1.2 s lately (the median and the 95th percentile of the last
// 12 audits)"),
// else the configured bounds.
func (d *durations) estimate() string {
	p50, p95, n := d.measured()
	switch {
	case n == 0:
		return "A typical audit takes " + d.typical() + "."
	case n == 1:
		return "The one audit here so far took " + compare.Duration(p50) + "."
	case compare.Duration(p50) == compare.Duration(p95):
		return "Audits here took about " + compare.Duration(p50) + " lately (the last " + compare.Plural(n, "audit", "audits") + ")."
	}
	return "Audits here took " + compare.Duration(p50) + " to " + compare.Duration(p95) +
		" lately (the median and the 95th percentile of the last " + compare.Plural(n, "audit", "audits") + ")."
}
