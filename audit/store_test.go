package audit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// These tests drive the store through the Auditor, against the memory store
// and the real Redis: cache hits, the per-host windows, joins and failed
// audits, each checked against the test site's request log. Like every
// test using mustEnv they share the browser and do not run in parallel.

// storeT0 is where the stores' test clocks start.
var storeT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// storeClock is a settable clock for a store.
type storeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStoreClock() *storeClock { return &storeClock{t: storeT0} }

func (c *storeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to storeT0+d.
func (c *storeClock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = storeT0.Add(d)
}

// storeKind opens a fresh, empty store of one implementation with the
// production limits, on clock.
type storeKind struct {
	name string
	open func(tb testing.TB, clock func() time.Time) cache.Store
}

var storeKinds = []storeKind{
	{"memory", func(tb testing.TB, clock func() time.Time) cache.Store {
		tb.Helper()
		s, err := cache.NewMemoryStore(productionLimits(), clock)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"sqlite", func(tb testing.TB, clock func() time.Time) cache.Store {
		tb.Helper()
		db := openRecords(tb, records.Config{DataDir: tb.TempDir()})
		s, err := cache.NewSQLiteStore(context.Background(), db.SQL(), db, productionLimits(),
			cache.SQLiteOptions{Clock: clock, PollInterval: 20 * time.Millisecond})
		if err != nil {
			tb.Fatalf("open the SQLite store: %v", err)
		}
		tb.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"redis+postgres", func(tb testing.TB, clock func() time.Time) cache.Store {
		tb.Helper()
		url, raw := redistest.Shared(tb)
		archive := openRecords(tb, records.Config{DatabaseURL: pgtest.Database(tb)})
		s, err := cache.NewRedisStore(context.Background(), url, archive, productionLimits(), cache.RedisOptions{
			Prefix: redistest.Prefix(tb, raw), Clock: clock,
			// Generous: this machine is shared; fail-closed timing is tested below.
			CallTimeout: 2 * time.Second, PollInterval: 50 * time.Millisecond,
		})
		if err != nil {
			tb.Fatalf("open the Redis store: %v", err)
		}
		tb.Cleanup(func() { _ = s.Close() })
		return s
	}},
}

// openRecords opens and migrates a records database for one test.
func openRecords(tb testing.TB, c records.Config) *records.DB {
	tb.Helper()
	db, err := records.Open(context.Background(), c)
	if err != nil {
		tb.Fatalf("open records: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// productionLimits are the promised limits (1 at a time, 1/1m, 5/1h, 15 min
// cache) with a lease that outlives the tests' 30 s audit deadline.
func productionLimits() cache.Limits {
	l := cache.Defaults()
	l.LeaseTTL = 45 * time.Second
	return l
}

// wantOwnID checks that the cached answer r has a report id of its own,
// not the id of the audit first that produced the result, and that the id
// reads back as the same cached answer.
func wantOwnID(t *testing.T, e *env, r, first *Report) {
	t.Helper()
	if r.ID == "" || r.ID == first.ID {
		t.Errorf("cached answer has id %q, want an id of its own, not the first audit's %s", r.ID, first.ID)
		return
	}
	got, err := e.auditor.Report(context.Background(), r.ID)
	if err != nil {
		t.Fatalf("Report of the cached answer's id %s: %v", r.ID, err)
	}
	if got.ID != r.ID || !got.Cached || got.CacheAgeS != r.CacheAgeS || got.Status != first.Status ||
		got.Lanes.Render.Page.Title != first.Lanes.Render.Page.Title {
		t.Errorf("Report(%s) = id %s cached %v age %ds status %s title %q; want the cached answer %s, age %ds, %s, %q",
			r.ID, got.ID, got.Cached, got.CacheAgeS, got.Status, got.Lanes.Render.Page.Title,
			r.ID, r.CacheAgeS, first.Status, first.Lanes.Render.Page.Title)
	}
}

func TestStoreCacheHitAndWindow(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clock := newStoreClock()
			e := mustEnv(t, func(c *Config) { c.Store, c.Now = kind.open(t, clock.Now), clock.Now })
			first := e.audit(t, "http://shop.example/index.html", TriggerCLI)
			if first.Status != StatusComplete || first.Cached {
				t.Fatalf("first audit: status %s (%s), cached %v", first.Status, first.Reason, first.Cached)
			}
			seen := len(e.site.Hits())

			cases := []struct {
				name, url  string
				at         time.Duration
				status     Status
				cached     bool
				age, retry int64
				reason     string
			}{
				{name: "repeat answered from the cache with its age", url: "http://shop.example/index.html",
					at: 10*time.Second + 400*time.Millisecond, status: StatusComplete, cached: true, age: 10},
				{name: "other URL of the host refused by the minute window", url: "http://shop.example/js-title.html",
					at: 25 * time.Second, status: StatusRateLimited, retry: 35, reason: "This host was audited less than a minute ago; try again in 35 s."},
				{name: "cache hit while the window is exhausted", url: "http://shop.example/index.html",
					at: 59 * time.Second, status: StatusComplete, cached: true, age: 59},
				{name: "refusals did not extend the window", url: "http://shop.example/js-title.html",
					at: 59*time.Second + 999*time.Millisecond, status: StatusRateLimited, retry: 1, reason: "This host was audited less than a minute ago; try again in 1 s."},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					clock.Set(tc.at)
					r := e.audit(t, tc.url, TriggerCLI)
					if r.Status != tc.status || r.Cached != tc.cached || r.CacheAgeS != tc.age || r.RetryAfterS != tc.retry {
						t.Errorf("status %s, cached %v, age %ds, retry_after %ds; want %s, %v, %ds, %ds (reason %q)",
							r.Status, r.Cached, r.CacheAgeS, r.RetryAfterS, tc.status, tc.cached, tc.age, tc.retry, r.Reason)
					}
					if !strings.Contains(r.Reason, tc.reason) {
						t.Errorf("reason %q does not name %q", r.Reason, tc.reason)
					}
					if tc.cached {
						wantOwnID(t, e, r, first)
					}
					if n := len(e.site.Hits()); n != seen {
						t.Errorf("the site got %d requests, want none: %v", n-seen, e.site.Hits()[seen:])
					}
				})
			}
		})
	}
}

// TestStoreFailedAuditCounts: an audit skipped because robots.txt answered
// 503 still used the host's minute, and its report is never a cached answer.
func TestStoreFailedAuditCounts(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clock := newStoreClock()
			e := mustEnv(t, func(c *Config) { c.Store, c.Now = kind.open(t, clock.Now), clock.Now })
			e.site.SetRobots("shop.example", http.StatusServiceUnavailable, "")
			const page = "http://shop.example/index.html"
			cases := []struct {
				name   string
				at     time.Duration
				status Status
				robots int // robots.txt reads so far
			}{
				{"skipped", 0, StatusSkipped, 1},
				{"repeat refused, not cached", 5 * time.Second, StatusRateLimited, 1},
				{"runs again once the minute is over", time.Minute, StatusSkipped, 2},
			}
			for _, tc := range cases {
				clock.Set(tc.at)
				r := e.audit(t, page, TriggerCLI)
				if r.Status != tc.status || r.Cached {
					t.Errorf("%s: status %s (%s), cached %v; want %s, not cached", tc.name, r.Status, r.Reason, r.Cached, tc.status)
				}
				if n := len(e.site.HitsOf("shop.example", "/robots.txt")); n != tc.robots {
					t.Errorf("%s: robots.txt read %d times, want %d", tc.name, n, tc.robots)
				}
			}
			if n, robots := len(e.site.Hits()), len(e.site.HitsOf("shop.example", "/robots.txt")); n != robots {
				t.Errorf("skipped audits requested %d things besides robots.txt", n-robots)
			}
		})
	}
}

// joinProbe is a real store that tells the test when an auditor starts
// waiting for an audit it joined.
type joinProbe struct {
	cache.Store
	waiting chan string
}

func (j joinProbe) Wait(ctx context.Context, url, id string) (cache.Entry, error) {
	j.waiting <- id
	return j.Store.Wait(ctx, url, id)
}

// within waits for ch for up to limit and fails the test after that.
func within[T any](tb testing.TB, limit time.Duration, what string, ch <-chan T) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		tb.Fatalf("%s: nothing after %s", what, limit)
	}
	var zero T
	return zero
}

// TestStoreJoin runs two Audit calls of one URL at once: the site sees one
// audit, both callers get its report, the second marked joined.
func TestStoreJoin(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			probe := joinProbe{waiting: make(chan string, 4)}
			e := mustEnv(t, func(c *Config) {
				probe.Store = kind.open(t, time.Now)
				c.Store = probe
			})
			entered, release := e.site.Hold(t, "/gate.html")
			const page = "http://shop.example/gate.html"
			type answer struct {
				r   *Report
				err error
			}
			first, second := make(chan answer, 1), make(chan answer, 1)
			go func() {
				r, err := e.auditor.Audit(context.Background(), Request{URL: page, Trigger: TriggerAPI})
				first <- answer{r, err}
			}()
			within(t, 30*time.Second, "the first audit reaching the page", entered)
			go func() {
				r, err := e.auditor.Audit(context.Background(), Request{URL: page, Trigger: TriggerForm})
				second <- answer{r, err}
			}()
			joinedID := within(t, 30*time.Second, "the second caller joining", probe.waiting)
			release()
			a, b := within(t, 60*time.Second, "the first audit", first), within(t, 60*time.Second, "the joined audit", second)
			if a.err != nil || b.err != nil {
				t.Fatalf("audits: %v; %v", a.err, b.err)
			}
			if a.r.Status != StatusComplete || a.r.Joined || !b.r.Joined || b.r.Cached {
				t.Errorf("first: status %s joined %v; second: joined %v cached %v", a.r.Status, a.r.Joined, b.r.Joined, b.r.Cached)
			}
			if a.r.ID != b.r.ID || joinedID != a.r.ID {
				t.Errorf("report ids %s and %s, joined %s; want one id", a.r.ID, b.r.ID, joinedID)
			}
			if b.r.Trigger != TriggerAPI {
				t.Errorf("the joined report's trigger is %s, want the running audit's (api)", b.r.Trigger)
			}
			wantOneAudit(t, e.site, "shop.example", "/gate.html")
		})
	}
}

// wantOneAudit checks the site log for exactly one audit of path: one
// robots.txt read, one plain GET, one render navigation, never two
// requests to the host at once.
func wantOneAudit(tb testing.TB, site *testsite.Site, host, path string) {
	tb.Helper()
	wantOncePerLane(tb, site, host, path)
	if n := len(site.HitsOf(host, "/robots.txt")); n != 1 {
		tb.Errorf("robots.txt read %d times, want 1", n)
	}
	if n := site.MaxConcurrent(host); n != 1 {
		tb.Errorf("%s had %d requests in flight at once, want 1", host, n)
	}
}

// TestStoreRedisFailure runs one Auditor over a RedisStore on a private
// redis-server with the production call timeouts: paused or stopped, Submit
// fails closed with ErrUnavailable and nothing reaches the site; back on
// its port, the same Auditor and store audit again, as a long-lived serve
// process needs.
func TestStoreRedisFailure(t *testing.T) {
	srv := redistest.StartPrivate(t)
	archive := openRecords(t, records.Config{DataDir: t.TempDir()})
	// A short lease: Finish retries storing the report for its lifetime.
	lim := productionLimits()
	lim.LeaseTTL = 6 * time.Second
	store, err := cache.NewRedisStore(context.Background(), srv.URL(), archive, lim, cache.RedisOptions{})
	if err != nil {
		t.Fatalf("open the Redis store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	e := mustEnv(t, func(c *Config) { c.Store, c.LeaseTTL = store, lim.LeaseTTL })
	ctx := context.Background()

	wantDown := func(t *testing.T, rawURL string) {
		t.Helper()
		before := len(e.site.Hits())
		tk, err := e.auditor.Submit(ctx, Request{URL: rawURL, Trigger: TriggerAPI})
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, cache.ErrUnavailable) {
			t.Fatalf("Submit with Redis unavailable = %+v, %v; want ErrUnavailable", tk, err)
		}
		if n := len(e.site.Hits()) - before; n != 0 {
			t.Errorf("%d requests reached the site while Redis was unavailable", n)
		}
	}
	wantWorks := func(t *testing.T, rawURL string) {
		t.Helper()
		tk := eventuallySubmit(t, e.auditor, rawURL)
		if tk.Ready() != nil || tk.Joined() {
			t.Fatalf("Submit once Redis is back: ready %+v, joined %v; want admitted", tk.Ready(), tk.Joined())
		}
		r, err := e.auditor.Finish(ctx, tk)
		if err != nil || r.Status != StatusComplete {
			t.Fatalf("Finish once Redis is back: %v, %v", r, err)
		}
		if got, err := e.auditor.Report(ctx, r.ID); err != nil || got.ID != r.ID {
			t.Fatalf("the stored report: %v, %v", got, err)
		}
	}

	t.Run("paused", func(t *testing.T) {
		// Under PAUSE ALL even UNPAUSE waits, so the pause is short.
		srv.Pause(t, 3*time.Second)
		wantDown(t, "http://shop.example/index.html")
		srv.Unpause(t)
		wantWorks(t, "http://shop.example/index.html")
	})
	t.Run("stopped during an audit", func(t *testing.T) {
		entered, release := e.site.Hold(t, "/gate.html")
		tk := eventuallySubmit(t, e.auditor, "http://other.example/gate.html")
		if tk.Ready() != nil || tk.Joined() {
			t.Fatalf("Submit: ready %+v, joined %v; want admitted", tk.Ready(), tk.Joined())
		}
		type answer struct {
			r   *Report
			err error
		}
		done := make(chan answer, 1)
		go func() {
			r, err := e.auditor.Finish(ctx, tk)
			done <- answer{r, err}
		}()
		within(t, 30*time.Second, "the audit reaching the page", entered)
		srv.Kill()
		release()
		a := within(t, 60*time.Second, "the audit", done)
		// The site was audited once; its report comes back although it
		// could not be stored, and the error says why.
		if a.r == nil || a.r.Status != StatusComplete || !errors.Is(a.err, ErrNotStored) {
			t.Fatalf("Finish with Redis gone = %+v, %v; want the complete report and ErrNotStored", a.r, a.err)
		}
	})
	t.Run("stopped then restarted", func(t *testing.T) {
		srv.Kill()
		wantDown(t, "http://other.example/index.html")
		if _, err := e.auditor.Report(ctx, "anything"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Report with Redis stopped: %v, want ErrUnavailable", err)
		}
		srv.Start(t) // empty again: no persistence
		wantWorks(t, "http://other.example/index.html")
	})
}

// eventuallySubmit retries Submit (admitting at once, for Finish) while the
// store is still unavailable (a restarted Redis takes a moment, and
// go-redis backs off dialling).
func eventuallySubmit(tb testing.TB, a *Auditor, rawURL string) *Ticket {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tk, err := a.Submit(context.Background(), Request{URL: rawURL, Trigger: TriggerAPI, Start: true})
		if err == nil {
			return tk
		}
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			tb.Fatalf("Submit %s never answered: %v", rawURL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStorePostgresFailure runs one Auditor over Redis with its reports in
// a private PostgreSQL cluster: stopped, Submit fails closed and nothing
// reaches the site; stopped during an audit, Finish returns the report with
// ErrNotStored; started again, the same Auditor audits and reads reports.
func TestStorePostgresFailure(t *testing.T) {
	url, raw := redistest.Shared(t)
	pg := pgtest.StartPrivate(t)
	archive := openRecords(t, records.Config{DatabaseURL: pg.Database(t), CallTimeout: 2 * time.Second})
	// A short lease: Finish retries storing the report for its lifetime.
	lim := productionLimits()
	lim.LeaseTTL = 6 * time.Second
	store, err := cache.NewRedisStore(context.Background(), url, archive, lim,
		cache.RedisOptions{Prefix: redistest.Prefix(t, raw), CallTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	e := mustEnv(t, func(c *Config) { c.Store, c.LeaseTTL = store, lim.LeaseTTL })
	ctx := context.Background()
	before := e.audit(t, "http://shop.example/index.html", TriggerAPI)

	pg.Stop(t)
	seen := len(e.site.Hits())
	if tk, err := e.auditor.Submit(ctx, Request{URL: "http://other.example/index.html", Trigger: TriggerAPI}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Submit with PostgreSQL stopped = %+v, %v; want ErrUnavailable", tk, err)
	} else if strings.Contains(err.Error(), pg.Password()) {
		t.Fatalf("the error shows the password: %v", err)
	}
	if n := len(e.site.Hits()) - seen; n != 0 {
		t.Errorf("%d requests reached the site while PostgreSQL was stopped", n)
	}

	pg.Start(t)
	entered, release := e.site.Hold(t, "/gate.html")
	tk := eventuallySubmit(t, e.auditor, "http://other.example/gate.html")
	done := make(chan error, 1)
	var r *Report
	go func() {
		var err error
		r, err = e.auditor.Finish(ctx, tk)
		done <- err
	}()
	within(t, 30*time.Second, "the audit reaching the page", entered)
	pg.Stop(t)
	release()
	if err := within(t, 60*time.Second, "the audit", done); !errors.Is(err, ErrNotStored) || r == nil || r.Status != StatusComplete {
		t.Fatalf("Finish with PostgreSQL gone = %+v, %v; want the complete report and ErrNotStored", r, err)
	}

	pg.Start(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := e.auditor.Report(ctx, before.ID)
		if err == nil && got.ID == before.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the report stored before the outage: %v, %v", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
