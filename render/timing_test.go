package render

import (
	"testing"
	"time"
)

// TestRenderTiming: the stages of lanes.render.timing follow one another
// and agree with the site's own log — the document arrives after Chromium
// asked for it and before the navigation returned; the script it loads
// arrives before the page settled.
func TestRenderTiming(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	s.addPage("timing.js", `setTimeout(() => { document.title = "late"; }, 400);`)
	snap, err := renderTestPage(t, b, s, "http://"+host,
		`<!doctype html><title>early</title><script src="/t/timing.js"></script><p>text</p>`, Request{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	tm := snap.Render.Timing
	t.Logf("timing %+v, total %v", tm, snap.Timings.Total)
	if tm.Navigate <= 0 || tm.Settle <= 0 || tm.Snapshot <= 0 {
		t.Errorf("navigate %v, settle %v, snapshot %v: each stage took some time", tm.Navigate, tm.Settle, tm.Snapshot)
	}
	if tm.DocumentRequest <= 0 || tm.DocumentRequest > tm.Navigate {
		t.Errorf("document request at %v: want within the navigation (%v)", tm.DocumentRequest, tm.Navigate)
	}
	if tm.Load < tm.DocumentRequest {
		t.Errorf("load at %v, before the document request at %v", tm.Load, tm.DocumentRequest)
	}
	if sum := tm.Context + tm.Navigate + tm.Settle + tm.Snapshot; sum > snap.Timings.Total {
		t.Errorf("stages add up to %v, more than the render's %v", sum, snap.Timings.Total)
	}
	navStart := snap.FetchedAt.Add(tm.Context)
	var doc, script time.Time
	for _, h := range s.hitsFor(host) {
		switch h.Path {
		case "/t/" + pageName(t):
			doc = h.At
		case "/t/timing.js":
			script = h.At
		}
	}
	if doc.IsZero() || script.IsZero() {
		t.Fatalf("the site saw the document at %v and the script at %v", doc, script)
	}
	if asked, done := navStart.Add(tm.DocumentRequest), navStart.Add(tm.Navigate); doc.Before(asked) || doc.After(done) {
		t.Errorf("the site got the document %v after the navigation began; want between %v (asked) and %v (navigated)",
			doc.Sub(navStart), tm.DocumentRequest, tm.Navigate)
	}
	if settled := navStart.Add(tm.Navigate + tm.Settle); script.After(settled) {
		t.Errorf("the site got the script %v after the page settled", script.Sub(settled))
	}
	if got := snap.Render.PageTime; got < 400*time.Millisecond {
		t.Errorf("page time %v: the 400 ms timer ran within it", got)
	}
}
