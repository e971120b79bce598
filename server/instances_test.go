package server

import (
	"context"
	"net/http"
	"sort"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// sharedRedis opens one RedisStore per instance on the shared test Redis,
// all under one key prefix of the test's own, each with its own SQLite
// archive (as instances on machines of their own have).
func sharedRedis(tb testing.TB, lim cache.Limits, n int) []cache.Store {
	tb.Helper()
	url, raw := redistest.Shared(tb)
	prefix := redistest.Prefix(tb, raw)
	var out []cache.Store
	for range n {
		db, err := records.Open(context.Background(), records.Config{DataDir: tb.TempDir()})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		s, err := cache.NewRedisStore(context.Background(), url, db, lim,
			cache.RedisOptions{Prefix: prefix, CallTimeout: 2 * time.Second, PollInterval: 50 * time.Millisecond})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = s.Close() })
		out = append(out, s)
	}
	return out
}

func oneRenderer(c *Config, _ *stubRenderer) { c.Renderers, c.Queue = 1, 4 }

// TestServeChargesAtStart runs two instances with one renderer each on one
// Redis. Instance A's renderer is held by a slow audit while a second host's
// audit waits in its queue; instance B audits that host meanwhile. When A's
// renderer frees, its queued audit is decided then, so at the site the
// host's audits are never closer together than the window (first request
// of each audit, robots.txt, from the site's own log).
func TestServeChargesAtStart(t *testing.T) {
	const window = 3 * time.Second
	lim := cache.Defaults()
	lim.Windows = []cache.Window{{N: 1, Per: window}}
	site := testsite.Start(t)
	stores := sharedRedis(t, lim, 2)
	a := newInstance(t, site, stores[0], lim, gated, oneRenderer)
	b := newInstance(t, site, stores[1], lim, oneRenderer)

	resp, body := a.post("http://a.example/index.html")
	wantStatus(t, resp, body, http.StatusAccepted)
	<-a.rend.started // A's one renderer is held
	resp, body = a.post("http://b.example/index.html?queued")
	wantStatus(t, resp, body, http.StatusAccepted)
	queued := decode[pending](t, body)
	if queued.Status != "queued" || queued.Position != 1 {
		t.Fatalf("the audit behind the held one: %+v, want queued at position 1", queued)
	}
	// B audits the same host now: A's queued audit charged nothing.
	resp, body = b.post("http://b.example/index.html?now")
	wantStatus(t, resp, body, http.StatusAccepted)
	now := b.waitReport(decode[pending](t, body).ID)
	if now.Status != audit.StatusComplete {
		t.Fatalf("B's audit: %s (%s), want complete", now.Status, now.Reason)
	}
	a.open()
	late := a.waitReport(queued.ID)
	if late.Status != audit.StatusRateLimited && late.Status != audit.StatusComplete {
		t.Fatalf("A's queued audit ended %s (%s), want rate_limited or complete", late.Status, late.Reason)
	}
	if late.Status == audit.StatusRateLimited && (late.Limit != "1/3s" || late.RetryAfterS < 1) {
		t.Errorf("A's queued audit refused with limit %q retry %d s, want 1/3s and a retry", late.Limit, late.RetryAfterS)
	}
	starts := site.HitsOf("b.example", "/robots.txt")
	sort.Slice(starts, func(i, j int) bool { return starts[i].Start.Before(starts[j].Start) })
	if late.Status == audit.StatusRateLimited && len(starts) != 1 {
		t.Errorf("b.example saw %d audits, want 1 (the late one was refused before contacting it)", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Start.Sub(starts[i-1].Start); gap < window {
			t.Errorf("b.example audits %d and %d reached the site %s apart, want at least %s", i, i+1, gap, window)
		}
	}
	if n := site.MaxConcurrent("b.example"); n != 1 {
		t.Errorf("b.example had %d requests in flight at once, want 1", n)
	}
}

// TestFollowOnAnotherInstance submits on instance A and follows on B: B
// answers 202 with A's progress (running at its step, queued at its place)
// and then 200 with the report, with ?wait= returning once it exists.
func TestFollowOnAnotherInstance(t *testing.T) {
	lim := cache.Defaults()
	site := testsite.Start(t)
	stores := sharedRedis(t, lim, 2)
	a := newInstance(t, site, stores[0], lim, gated, oneRenderer)
	b := newInstance(t, site, stores[1], lim, oneRenderer)

	resp, body := a.post("http://a.example/index.html")
	wantStatus(t, resp, body, http.StatusAccepted)
	running := decode[pending](t, body).ID
	<-a.rend.started
	resp, body = a.post("http://c.example/index.html")
	wantStatus(t, resp, body, http.StatusAccepted)
	queued := decode[pending](t, body).ID

	resp, body = b.do("GET", "/api/v1/audits/"+running, "", nil)
	wantStatus(t, resp, body, http.StatusAccepted)
	if p := decode[pending](t, body); p.ID != running || p.Status != "running" || p.Step != "render" || p.URL != "http://a.example/index.html" {
		t.Errorf("B on A's running audit: %+v, want running at render", p)
	}
	resp, body = b.do("GET", "/api/v1/audits/"+queued, "", nil)
	wantStatus(t, resp, body, http.StatusAccepted)
	if p := decode[pending](t, body); p.Status != "queued" || p.Position != 1 {
		t.Errorf("B on A's queued audit: %+v, want queued at position 1", p)
	}
	// A long poll on B returns once A has stored the report.
	polled := make(chan *audit.Report, 1)
	go func() { polled <- b.waitReport(running) }()
	a.open()
	if r := <-polled; r.ID != running || r.Status != audit.StatusComplete {
		t.Errorf("B's long poll: %s %s, want %s complete", r.ID, r.Status, running)
	}
	if r := b.waitReport(queued); r.ID != queued || r.Status != audit.StatusComplete {
		t.Errorf("B on the queued audit at the end: %s %s, want %s complete", r.ID, r.Status, queued)
	}
}
