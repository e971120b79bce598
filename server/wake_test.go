package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
)

// noFallback makes a waiter read the store only at once and on news: an
// answer that comes proves that the news woke it.
func noFallback(c *harnessConfig) { c.WaitFallback = time.Hour }

// answer is a ?wait= client's answer.
type answer struct {
	status int
	body   []byte
}

// waitFor asks h for the audit id with ?wait=30s in the background, and
// returns once the request waits (its waiter is registered).
func waitFor(t *testing.T, h *harness, id string) <-chan answer {
	t.Helper()
	out := make(chan answer, 1)
	go func() {
		resp, body := h.do("GET", "/api/v1/audits/"+id+"?wait=30s", "", nil)
		out <- answer{resp.StatusCode, body}
	}()
	untilWaiting(t, h)
	return out
}

// untilWaiting returns once a request to h waits for news.
func untilWaiting(t *testing.T, h *harness) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !h.srv.cfg.Wake.Waiting(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the request never waited")
		}
	}
}

// wokenWithReport checks that the waiting client got the report of id,
// having read it at most most times: once at once, once on the news (a
// poll every 200 ms reads it five times more in the second the audit is
// held).
func wokenWithReport(t *testing.T, h *harness, got <-chan answer, id string, before, most int64) {
	t.Helper()
	var a answer
	select {
	case a = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting client got no answer within 30 s")
	}
	if a.status != http.StatusOK {
		t.Fatalf("the waiting client got %d, want 200 with the report:\n%s", a.status, a.body)
	}
	if r := decode[audit.Report](t, a.body); r.ID != id || r.Status != audit.StatusComplete {
		t.Fatalf("the waiting client got report %s (%s), want %s complete", r.ID, r.Status, id)
	}
	if n := h.store.reports.Load() - before; n > most {
		t.Errorf("the waiter read the report %d times, want %d at most (at once, then on the news): it polled", n, most)
	}
}

// heldAudit submits an audit to h, whose renders are gated, and returns
// its id once its render is held.
func heldAudit(t *testing.T, h *harness) string {
	t.Helper()
	resp, body := h.post("http://shop.example/js-title.html")
	wantStatus(t, resp, body, http.StatusAccepted)
	id := decode[pending](t, body).ID
	<-h.rend.started
	return id
}

// TestWaitWakesOnItsOwnAudit: a ?wait= on the instance that runs the
// audit is answered when the report is stored, by the audit's own
// signal: it reads the store at once and then once more, never on a
// timer, however long the audit runs.
func TestWaitWakesOnItsOwnAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gated, noFallback)
	id := heldAudit(t, h)
	before := h.store.reports.Load()
	got := waitFor(t, h, id)
	time.Sleep(time.Second) // a poll every 200 ms would read five times meanwhile
	h.open()
	wokenWithReport(t, h, got, id, before, 2)
}

// twoInstances starts A, whose renders are gated, and B (with bOpt),
// sharing Redis, each with a queue of its own; B's store is returned for
// B to follow or not.
func twoInstances(t *testing.T, bOpt harnessOpt) (a, b *harness, bStore *cache.RedisStore) {
	t.Helper()
	lim := cache.Defaults()
	site := testsite.Start(t)
	stores := sharedRedis(t, lim, 2)
	a = newInstance(t, site, stores[0], lim, gated)
	b = newInstance(t, site, stores[1], lim, bOpt)
	return a, b, stores[1].(*cache.RedisStore)
}

// TestWaitWakesOnAnotherInstancesAudit: instances sharing Redis, each
// with its own queue; a ?wait= on B for the audit A runs is woken by the
// news Complete publishes in Redis (B follows it), not by a timer.
func TestWaitWakesOnAnotherInstancesAudit(t *testing.T) {
	t.Parallel()
	a, b, bStore := twoInstances(t, noFallback)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go bStore.Follow(ctx, b.srv.cfg.Wake)

	id := heldAudit(t, a)
	before := b.store.reports.Load()
	got := waitFor(t, b, id)
	time.Sleep(time.Second)
	a.open()
	wokenWithReport(t, b, got, id, before, 2)
}

// TestWaitWithLostNewsStillAnswers: a waiter whose news never comes (a
// lost message) still gets the report, by its fallback read, and never a
// wrong answer.
func TestWaitWithLostNewsStillAnswers(t *testing.T) {
	t.Parallel()
	a, b, _ := twoInstances(t, func(c *harnessConfig) { c.WaitFallback = 200 * time.Millisecond }) // B follows nothing
	id := heldAudit(t, a)
	got := waitFor(t, b, id)
	a.open()
	a2 := <-got
	if a2.status != http.StatusOK {
		t.Fatalf("the waiter without news got %d, want the report:\n%s", a2.status, a2.body)
	}
	if r := decode[audit.Report](t, a2.body); r.ID != id || r.Status != audit.StatusComplete {
		t.Fatalf("the waiter without news got report %s (%s), want %s complete", r.ID, r.Status, id)
	}
}

// TestReportPageFollowsTheAudit: the running report page reloads itself
// at ?follow, which the server holds until the report is stored: the
// report shows the moment it exists, not at the next refresh.
func TestReportPageFollowsTheAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gated, noFallback)
	id := heldAudit(t, h)
	before := h.store.reports.Load()
	got := make(chan answer, 1)
	go func() {
		resp, body := h.do("GET", "/r/"+id+"?follow", "", nil)
		got <- answer{resp.StatusCode, body}
	}()
	untilWaiting(t, h)
	h.open()
	a := <-got
	if a.status != http.StatusOK || !strings.Contains(string(a.body), "<title>Audit of http://shop.example/js-title.html") {
		t.Fatalf("the following page got %d, want the report page:\n%s", a.status, a.body)
	}
	if n := h.store.reports.Load() - before; n > 2 {
		t.Errorf("the following page read the report %d times, want 2 at most", n)
	}
}

// recordsInstances starts A, whose renders are gated, and B (which reads
// only at once and on news), over one records database as two processes
// have it, each with a records DB of its own: a SQLite data dir, with
// SQLite stores on it; or PostgreSQL, with Redis stores over it. B
// follows the records database only, never Redis.
func recordsInstances(t *testing.T, postgres bool) (a, b *harness) {
	t.Helper()
	lim := cache.Defaults()
	rc := records.Config{DataDir: t.TempDir()}
	if postgres {
		rc = records.Config{DatabaseURL: pgtest.Database(t)}
	}
	var hs [2]*harness
	var redisURL, prefix string
	if postgres {
		url, raw := redistest.Shared(t)
		redisURL, prefix = url, redistest.Prefix(t, raw)
	}
	site := testsite.Start(t)
	for i, opt := range []harnessOpt{gated, noFallback} {
		db, err := records.Open(context.Background(), rc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		var s cache.Store
		if postgres {
			s, err = cache.NewRedisStore(context.Background(), redisURL, db, lim,
				cache.RedisOptions{Prefix: prefix, CallTimeout: 2 * time.Second})
		} else {
			s, err = cache.NewSQLiteStore(context.Background(), db.SQL(), db, lim, cache.SQLiteOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.(io.Closer).Close() })
		hs[i] = newInstance(t, site, s, lim, opt)
		if i == 1 {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			go db.Follow(ctx, hs[i].srv.cfg.Wake)
		}
	}
	return hs[0], hs[1]
}

// TestWaitWakesOnRecordsNews: a ?wait= on B for the audit A runs, with
// no news but the records database's, is woken when A stores the report:
// on PostgreSQL by its NOTIFY, on SQLite (another process's writes to
// the data dir) by the file's change, not by a fallback read.
func TestWaitWakesOnRecordsNews(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			t.Parallel()
			a, b := recordsInstances(t, pg)
			id := heldAudit(t, a)
			before := b.store.reports.Load()
			got := waitFor(t, b, id)
			time.Sleep(time.Second)
			a.open()
			// The SQLite file's news is any commit: the audit's last step,
			// written just before its report, may wake the waiter once more.
			wokenWithReport(t, b, got, id, before, map[bool]int64{false: 3, true: 2}[pg])
		})
	}
}
