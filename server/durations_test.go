package server

import (
	"testing"
	"time"
)

// TestDurationsEstimate: the running page's estimate is what this
// instance measured as soon as it has audited anything, and the
// configured bounds before that — never "5 s to 30 s" beside audits that
// take a third of a second.
func TestDurationsEstimate(t *testing.T) {
	t.Parallel()
	d := newDurations([2]time.Duration{})
	if got, want := d.estimate(), "A typical audit takes 5 s to 30 s."; got != want {
		t.Errorf("no audits yet: %q, want %q", got, want)
	}
	d.add(300 * time.Millisecond)
	if got, want := d.estimate(), "The one audit here so far took 300 ms."; got != want {
		t.Errorf("one audit: %q, want %q", got, want)
	}
	d.add(350 * time.Millisecond)
	d.add(1200 * time.Millisecond)
	if got, want := d.estimate(), "Audits here took 350 ms to 1.2 s lately (the median and the 95th percentile of the last 3 audits)."; got != want {
		t.Errorf("three audits: %q, want %q", got, want)
	}
}
