package audit

import (
	"context"
	"errors"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
)

// within135 is the service's bound on a queued audit's wait for its start:
// the 75 s hard limit plus a minute.
const within135 = 135 * time.Second

// TestQueuedAuditKeepsItsStart submits two pages of one host for a queue:
// each is promised a start a window apart; the second, run early, is told
// to wait until its start (nothing reaches the site), then runs at it. An
// audit of the host without a reservation (the command line) is refused
// the start promised to the queued one. The site's log has the two page
// requests a minute apart.
func TestQueuedAuditKeepsItsStart(t *testing.T) {
	clock := newStoreClock()
	lim := cache.Defaults() // 1/1m, 5/1h
	mem, err := cache.NewMemoryStore(lim, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	e := mustEnv(t, func(c *Config) { c.Store, c.Now = mem, clock.Now })
	ctx := context.Background()
	first, err := e.auditor.Submit(ctx, Request{URL: "http://shop.example/index.html", Trigger: TriggerAPI, Within: within135})
	if err != nil || !first.Reserved() || !first.StartsAt.Equal(storeT0) {
		t.Fatalf("first submission: %+v, %v; want reserved now", first, err)
	}
	second, err := e.auditor.Submit(ctx, Request{URL: "http://shop.example/about.html", Trigger: TriggerAPI, Within: within135})
	if err != nil || !second.Reserved() || !second.StartsAt.Equal(storeT0.Add(time.Minute)) {
		t.Fatalf("second submission: %+v, %v; want reserved a minute later", second, err)
	}
	// A third would start two minutes on, within the bound; a fourth at
	// three minutes is past it (75 s hard limit plus a minute).
	third, err := e.auditor.Submit(ctx, Request{URL: "http://shop.example/a.html", Trigger: TriggerAPI, Within: within135})
	if err != nil || !third.Reserved() {
		t.Fatalf("third submission: %+v, %v; want reserved", third, err)
	}
	fourth, err := e.auditor.Submit(ctx, Request{URL: "http://shop.example/b.html", Trigger: TriggerAPI, Within: within135})
	if err != nil || fourth.Ready() == nil || fourth.Ready().Status != StatusRateLimited {
		t.Fatalf("fourth submission: %+v, %v; want refused as rate limited", fourth, err)
	}
	if err := e.auditor.Unreserve(ctx, third); err != nil {
		t.Fatal(err)
	}

	r, err := e.auditor.Run(ctx, Request{URL: first.URL, ID: first.ID, Trigger: TriggerAPI})
	if err != nil || r.Status != StatusComplete || r.ID != first.ID {
		t.Fatalf("run of the first: %+v, %v; want complete under its id", r, err)
	}
	cli, err := e.auditor.Audit(ctx, Request{URL: "http://shop.example/cli.html", Trigger: TriggerCLI})
	if err != nil || cli.Status != StatusRateLimited {
		t.Fatalf("an audit without a reservation: %+v, %v; want rate limited", cli, err)
	}
	hits := len(e.site.Hits())
	clock.Set(10 * time.Second)
	_, err = e.auditor.Run(ctx, Request{URL: second.URL, ID: second.ID, Trigger: TriggerAPI})
	var ny *NotYet
	if !errors.As(err, &ny) || !ny.Until.Equal(storeT0.Add(time.Minute)) || ny.Reason != "1/1m" {
		t.Fatalf("run of the second 50 s early: %v; want NotYet until its start", err)
	}
	if n := len(e.site.Hits()) - hits; n != 0 {
		t.Fatalf("%d requests reached the site for an audit told to wait", n)
	}
	if _, err := e.auditor.Report(ctx, second.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a waiting audit's report: %v, want none stored", err)
	}
	clock.Set(time.Minute)
	r, err = e.auditor.Run(ctx, Request{URL: second.URL, ID: second.ID, Trigger: TriggerAPI})
	if err != nil || r.Status != StatusComplete {
		t.Fatalf("run of the second at its start: %+v, %v", r, err)
	}
	if n := e.site.MaxConcurrent("shop.example"); n != 1 {
		t.Errorf("shop.example had %d requests in flight at once, want 1", n)
	}
}

// TestQueuedAuditStartAndLoss: OnStart runs before the admission and the
// first request to the site; an OnStart error ends Run with it, nothing
// admitted or fetched; Lost stores the answer every instance gives for an
// audit whose instance died while it ran.
func TestQueuedAuditStartAndLoss(t *testing.T) {
	e := mustEnv(t, nil)
	ctx := context.Background()
	var hitsAtStart = -1
	r, err := e.auditor.Run(ctx, Request{URL: "http://shop.example/index.html", ID: NewID(), Trigger: TriggerAPI,
		OnStart: func(context.Context) error { hitsAtStart = len(e.site.Hits()); return nil }})
	if err != nil || r.Status != StatusComplete || hitsAtStart != 0 {
		t.Fatalf("run with OnStart: %+v, %v, %d requests before OnStart; want complete and none", r, err, hitsAtStart)
	}
	r, err = e.auditor.Run(ctx, Request{URL: "http://other.example/index.html", ID: NewID(), Trigger: TriggerAPI,
		OnStart: func(context.Context) error { return errors.New("queue down") }})
	if err == nil || r != nil || len(e.site.HitsOf("other.example", "/")) != 0 {
		t.Fatalf("run whose OnStart failed: %+v, %v, %d requests; want the error and no request", r, err, len(e.site.HitsOf("other.example", "/")))
	}
	// Nothing was admitted: the host takes an audit at once.
	if r, err := e.auditor.Audit(ctx, Request{URL: "http://other.example/index.html", Trigger: TriggerCLI}); err != nil || r.Status != StatusComplete {
		t.Fatalf("the audit after a failed OnStart: %+v, %v; want complete", r, err)
	}
	id := NewID()
	lost, err := e.auditor.Lost(ctx, Request{URL: "http://shop.example/lost.html", ID: id, Trigger: TriggerAPI})
	if err != nil || lost.Status != StatusError || lost.Reason != ReasonLost {
		t.Fatalf("Lost: %+v, %v", lost, err)
	}
	got, err := e.auditor.Report(ctx, id)
	if err != nil || got.Status != StatusError || got.Reason != ReasonLost || got.Robots != nil || len(got.Findings) != 0 {
		t.Fatalf("the lost audit's stored report: %+v, %v; want the error, nothing said of the site", got, err)
	}
}

// TestNoJoinWaits: a re-audit (NoJoin) of a URL whose audit is running —
// perhaps on an instance that died — is told to wait, never joined to
// it: no report, nothing reaching the site, no lease taken.
func TestNoJoinWaits(t *testing.T) {
	e := mustEnv(t, nil)
	ctx := context.Background()
	const u = "http://shop.example/index.html"
	held, err := e.store.Admit(ctx, u, "RUNNINGELSEWHERE0000000001")
	if err != nil || held.Decision != cache.Admitted {
		t.Fatalf("hold the URL: %+v, %v", held, err)
	}
	r, err := e.auditor.Run(ctx, Request{URL: u, ID: "REAUDIT0000000000000000001", Trigger: TriggerScheduled, Unkept: true, NoJoin: true})
	var ny *NotYet
	if !errors.As(err, &ny) || r != nil || ny.Until.Before(time.Now()) {
		t.Fatalf("a re-audit of a URL being audited: %+v, %v; want NotYet, not the running audit's answer", r, err)
	}
	if n := len(e.site.Hits()); n != 0 {
		t.Errorf("%d requests reached the site", n)
	}
}
