package render

import (
	"sync/atomic"
	"time"

	"lekta.dev/lekta/compare"
)

// stageClock records where one render's wall time goes
// (compare.RenderTiming). run's goroutine sets the stages; the event
// goroutine marks the navigation's points, so those are atomic.
type stageClock struct {
	timing compare.RenderTiming
	// navStart is when the navigation began, in Unix nanoseconds.
	navStart atomic.Int64
	// doc and load are the points after navStart, 0 until they happen.
	doc, load atomic.Int64
}

// startNavigation notes the navigation's start.
func (c *stageClock) startNavigation(now time.Time) { c.navStart.Store(now.UnixNano()) }

// mark stores the time since the navigation's start in p, once.
func (c *stageClock) mark(p *atomic.Int64) {
	start := c.navStart.Load()
	if start == 0 {
		return
	}
	p.CompareAndSwap(0, max(time.Now().UnixNano()-start, 1))
}

// result is the timing with the navigation's points filled in.
func (c *stageClock) result() compare.RenderTiming {
	t := c.timing
	t.DocumentRequest = time.Duration(c.doc.Load())
	t.Load = time.Duration(c.load.Load())
	return t
}
