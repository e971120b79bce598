package render

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
)

// TestRenderCatchesDelayedContent: content that timers, fetch() chains,
// idle callbacks and scrolling into view produce is in the render lane's
// extract, as Google's renderer sees it, and the render says the page went
// idle. Each page sets its title, a section of text and a link late;
// "posted" does so after a chain of tasks it posts to itself from its load
// event (a framework scheduler's MessageChannel), then a fetch.
func TestRenderCatchesDelayedContent(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	for _, kind := range []string{"static", "spa", "timer-1500", "timer-4000", "scroll", "big-script", "idle", "chain", "posted"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			u := "http://" + hostFor(t) + "/delayed/" + kind + ".html"
			snap, err := renderPage(t, b, Request{URL: u}, 30*time.Second)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			p := compare.Extract(snap)
			wantTitle := map[string]string{"static": "Static article | Lekta Test Shop"}[kind]
			if wantTitle == "" {
				wantTitle = kind + " content | Lekta Test Shop"
			}
			if p.Title != wantTitle {
				t.Errorf("title %q, want %q", p.Title, wantTitle)
			}
			if !strings.Contains(string(snap.Body), kind+"-content-rendered") {
				t.Errorf("the late text is missing from the rendered page")
			}
			if !slices.ContainsFunc(p.Links, func(l compare.Link) bool { return strings.HasSuffix(l.Href, "/products/"+kind+"-product.html") }) {
				t.Errorf("the late link is missing: %v", p.Links)
			}
			if r := snap.Render; r.SettledBy != SettledIdle || !r.Settled {
				t.Errorf("settled_by %q (settled %v), want idle", r.SettledBy, r.Settled)
			}
		})
	}
}

// TestRenderEndsLoopsAtTheBudget: a page that changes its title every 10 ms
// and one that animates for ever end at their budget of page time, not at
// the wall-clock cap, with a complete snapshot.
func TestRenderEndsLoopsAtTheBudget(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	for _, kind := range []string{"interval", "raf"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/delayed/" + kind + ".html"}, 30*time.Second)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			r := snap.Render
			if r.SettledBy != SettledBudget || !r.Settled || r.PageTime < DefaultBudget {
				t.Errorf("settled_by %q, settled %v, page time %v: want the budget of %v used up", r.SettledBy, r.Settled, r.PageTime, DefaultBudget)
			}
			if !strings.Contains(string(snap.Body), "</html>") || compare.Extract(snap).H1[0] == "" {
				t.Errorf("incomplete snapshot: %.200s", snap.Body)
			}
		})
	}
}

// TestRenderNeverAnsweredFetch: a fetch() that never answers holds page
// time still; the render ends at the caller's deadline with the request
// named, and keeps what the page showed.
func TestRenderNeverAnsweredFetch(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	host := hostFor(t)
	snap, err := renderPage(t, b, Request{URL: "http://" + host + "/delayed/never-fetch.html"}, 4*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	r := snap.Render
	if r.SettledBy != SettledDeadline || r.Settled {
		t.Errorf("settled_by %q, settled %v, want deadline", r.SettledBy, r.Settled)
	}
	if !slices.ContainsFunc(r.PendingRequests, func(p string) bool { return strings.Contains(p, "http://"+host+"/slow/0/data/article.json") }) {
		t.Errorf("pending requests %v do not name the fetch", r.PendingRequests)
	}
	if !strings.Contains(string(snap.Body), "content before the hang") {
		t.Errorf("the page's content was not kept")
	}
}

// TestRenderPageClockMovesForward: page script that reads the clock across
// timers sees Date.now and performance.now move forward, never back, by at
// least the timers' delays, and Date.now starts at the real time.
func TestRenderPageClockMovesForward(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	before := time.Now()
	snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/delayed/clock.html"}, 30*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	m := regexp.MustCompile(`<p id="clock">([^<]*)</p>`).FindSubmatch(snap.Body)
	if m == nil {
		t.Fatalf("the page did not record its clock: %s", snap.Body)
	}
	var samples [][2]float64
	if err := json.Unmarshal(m[1], &samples); err != nil || len(samples) != 31 {
		t.Fatalf("samples %s: %v", m[1], err)
	}
	for i := 1; i < len(samples); i++ {
		if samples[i][0] < samples[i-1][0] || samples[i][1] < samples[i-1][1] {
			t.Errorf("the clock went back between samples %d and %d: %v -> %v", i-1, i, samples[i-1], samples[i])
		}
	}
	// performance.now is coarsened to 100 µs, so 30 timers of 100 ms may
	// read as 2999.9 ms.
	if span := samples[30][1] - samples[0][1]; span < 3000-1 {
		t.Errorf("performance.now advanced %v ms over 30 timers of 100 ms, want at least 3000", span)
	}
	start := time.UnixMilli(int64(samples[0][0]))
	if start.Before(before.Add(-time.Minute)) || start.After(time.Now().Add(time.Minute)) {
		t.Errorf("Date.now started at %v, want about %v", start, before)
	}
}
