package server

import (
	"context"
	"fmt"
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

func oneRenderer(c *harnessConfig) { c.renderers, c.queueLimit = 1, 4 }

// TestIdleInstanceTakesTheQueue runs two instances with one renderer each
// on one Redis and one queue. Instance A's renderer is held by a slow
// audit; what is submitted to A meanwhile runs on B, whose renderer is
// free: the queue is the fleet's, not an instance's.
func TestIdleInstanceTakesTheQueue(t *testing.T) {
	lim := cache.Defaults()
	site := testsite.Start(t)
	stores := sharedRedis(t, lim, 2)
	dir := t.TempDir()
	a := newInstance(t, site, stores[0], lim, gated, oneRenderer, sharedQueue(dir))
	resp, body := a.post("http://a.example/index.html")
	wantStatus(t, resp, body, http.StatusAccepted)
	held := decode[pending](t, body).ID
	<-a.rend.started // A's one renderer is held
	// B starts once A holds its audit, so that B cannot have taken it.
	b := newInstance(t, site, stores[1], lim, oneRenderer, sharedQueue(dir))
	resp, body = a.post("http://b.example/index.html")
	wantStatus(t, resp, body, http.StatusAccepted)
	other := decode[pending](t, body)
	if other.Status != "queued" || other.StartsAt == nil {
		t.Fatalf("the submission to the busy instance: %+v, want queued with its start", other)
	}
	if r := a.waitReport(other.ID); r.Status != audit.StatusComplete {
		t.Fatalf("the audit submitted to A while A was busy: %s (%s), want complete (run by B)", r.Status, r.Reason)
	}
	if n := b.rend.renders.Load(); n != 1 {
		t.Errorf("B rendered %d pages, want 1 (A's submission)", n)
	}
	resp, body = b.do("GET", "/api/v1/audits/"+held, "", nil)
	wantStatus(t, resp, body, http.StatusAccepted)
	if p := decode[pending](t, body); p.Status != "running" || p.Step != "render" {
		t.Errorf("B on A's held audit: %+v, want running at render", p)
	}
	a.open()
	if r := b.waitReport(held); r.Status != audit.StatusComplete {
		t.Errorf("A's held audit: %s, want complete", r.Status)
	}
}

// TestAcceptedMeansItRuns submits four pages of one host at once, where the
// host may start one audit every 3 s and a submitter waits at most 7 s for
// a start: the first three are accepted with starts 3.5 s apart and all
// run (none ends rate limited), the fourth would start after 10.5 s and is
// refused at once with Retry-After. From the site's own log the audits
// reached it at least the window apart, one at a time.
func TestAcceptedMeansItRuns(t *testing.T) {
	const window = 3 * time.Second
	lim := cache.Defaults()
	lim.Windows = []cache.Window{{N: 1, Per: window}}
	lim.StartSlack = cache.DefaultStartSlack
	// The stub renders in milliseconds: a running audit is expected to end
	// within a second, not the 30 s of a real one, which alone would put a
	// start past this test's 7 s bound.
	lim.Typical = time.Second
	site := testsite.Start(t)
	stores := sharedRedis(t, lim, 2)
	dir := t.TempDir()
	wait := func(c *harnessConfig) { c.MaxStartWait = 7 * time.Second }
	a := newInstance(t, site, stores[0], lim, oneRenderer, sharedQueue(dir), wait)
	b := newInstance(t, site, stores[1], lim, oneRenderer, sharedQueue(dir), wait)
	var ids []string
	var starts []time.Time
	for i, h := range []*harness{a, b, a} {
		resp, body := h.post(fmt.Sprintf("http://c.example/index.html?%d", i))
		wantStatus(t, resp, body, http.StatusAccepted)
		p := decode[pending](t, body)
		if p.StartsAt == nil || p.Status != "queued" {
			t.Fatalf("submission %d: %+v, want queued with starts_at", i, p)
		}
		ids, starts = append(ids, p.ID), append(starts, p.StartsAt.Time)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < window {
			t.Errorf("starts %d and %d are %s apart, want at least %s", i-1, i, gap, window)
		}
	}
	resp, body := b.post("http://c.example/index.html?3")
	wantError(t, resp, body, http.StatusTooManyRequests, codeRateLimited, true)
	for _, id := range ids {
		if r := a.waitReport(id); r.Status != audit.StatusComplete {
			t.Errorf("accepted audit %s ended %s (%s), want complete", id, r.Status, r.Reason)
		}
	}
	seen := site.HitsOf("c.example", "/robots.txt")
	sort.Slice(seen, func(i, j int) bool { return seen[i].Start.Before(seen[j].Start) })
	if len(seen) != 3 {
		t.Errorf("c.example saw %d audits, want 3", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if gap := seen[i].Start.Sub(seen[i-1].Start); gap < window {
			t.Errorf("c.example audits %d and %d reached the site %s apart, want at least %s", i, i+1, gap, window)
		}
	}
	if n := site.MaxConcurrent("c.example"); n != 1 {
		t.Errorf("c.example had %d requests in flight at once, want 1", n)
	}
}

// TestClusterSlotMovesUnderLoad runs two instances on a Redis Cluster of
// three masters, sharing one queue, with a dozen audits of three hosts
// queued at once, and moves one host's slot to another master while they
// run. Every accepted audit runs, and from the site's own log each host
// had one request at a time and its audits at least its window apart.
func TestClusterSlotMovesUnderLoad(t *testing.T) {
	const window = time.Second
	lim := cache.Defaults()
	lim.Windows = []cache.Window{{N: 1, Per: window}, {N: 100, Per: time.Hour}}
	lim.StartSlack = cache.DefaultStartSlack
	lim.Typical = time.Second
	c := redistest.StartCluster(t, 3)
	prefix := redistest.Prefix(t, c.Client(t))
	site := testsite.Start(t)
	dir := t.TempDir()
	var hs []*harness
	for range 2 {
		db, err := records.Open(context.Background(), records.Config{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		s, err := cache.NewRedisStore(context.Background(), c.URL(), db, lim,
			cache.RedisOptions{Prefix: prefix, Cluster: true, CallTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		hs = append(hs, newInstance(t, site, s, lim, oneRenderer, sharedQueue(dir),
			func(c *harnessConfig) { c.queueLimit, c.MaxStartWait = 20, time.Minute }))
	}
	hosts := []string{"a.example", "b.example", "c.example"}
	var ids []string
	for i := range 12 {
		resp, body := hs[i%2].post(fmt.Sprintf("http://%s/index.html?%d", hosts[i%3], i))
		wantStatus(t, resp, body, http.StatusAccepted)
		ids = append(ids, decode[pending](t, body).ID)
	}
	slot := redistest.Slot("{a.example}")
	c.MoveSlot(t, slot, (c.Owner(slot)+1)%3)
	for _, id := range ids {
		if r := hs[0].waitReportWithin(id, 90*time.Second); r.Status != audit.StatusComplete {
			t.Errorf("accepted audit %s ended %s (%s), want complete", id, r.Status, r.Reason)
		}
	}
	for _, host := range hosts {
		if n := site.MaxConcurrent(host); n != 1 {
			t.Errorf("%s had %d requests in flight at once, want 1", host, n)
		}
		seen := site.HitsOf(host, "/robots.txt")
		sort.Slice(seen, func(i, j int) bool { return seen[i].Start.Before(seen[j].Start) })
		if len(seen) != 4 {
			t.Errorf("%s saw %d audits, want 4", host, len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if gap := seen[i].Start.Sub(seen[i-1].Start); gap < window {
				t.Errorf("%s: audits %d and %d reached it %s apart, want at least %s", host, i, i+1, gap, window)
			}
		}
	}
}
