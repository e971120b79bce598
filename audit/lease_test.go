package audit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/records"
)

// holderProbe is a real store as one audit holder sees it: it reports each
// successful renewal (with the store clock's time) and can be cut off, as
// a holder whose process died or lost its network is.
type holderProbe struct {
	cache.Store
	clock   func() time.Time
	renewed chan time.Time
	cut     atomic.Bool
}

func (p *holderProbe) Renew(ctx context.Context, l cache.Lease) error {
	if p.cut.Load() {
		return cache.ErrUnavailable
	}
	at := p.clock()
	if err := p.Store.Renew(ctx, l); err != nil {
		return err
	}
	select {
	case p.renewed <- at:
	default:
	}
	return nil
}

func (p *holderProbe) Complete(ctx context.Context, l cache.Lease, o cache.Outcome) error {
	if p.cut.Load() {
		return cache.ErrUnavailable
	}
	return p.Store.Complete(ctx, l, o)
}

// renewedAfter waits for a renewal made at or after at (store clock).
func (p *holderProbe) renewedAfter(tb testing.TB, at time.Time) time.Time {
	tb.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-p.renewed:
			if !got.Before(at) {
				return got
			}
		case <-deadline:
			tb.Fatalf("no renewal of the lease at or after %s", at)
		}
	}
}

type finished struct {
	r   *Report
	err error
}

func finishAsync(a *Auditor, t *Ticket) <-chan finished {
	done := make(chan finished, 1)
	go func() {
		r, err := a.Finish(context.Background(), t)
		done <- finished{r, err}
	}()
	return done
}

// TestLeaseLivesAsLongAsItsAudit holds an audit's page at the site while
// the store's clock runs far past the lease's TTL: the heartbeat keeps the
// lease, so every other audit of the host is refused. Then the holder is
// cut off from the store: it stops its audit at once, and its lease frees
// the host exactly one TTL after its last heartbeat, to the millisecond.
// From the site's log, the host never had two requests in flight.
func TestLeaseLivesAsLongAsItsAudit(t *testing.T) {
	const ttl = 3 * time.Second
	clock := newStoreClock()
	lim := testLimits()
	lim.LeaseTTL = ttl
	mem, err := cache.NewMemoryStore(lim, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	probe := &holderProbe{Store: mem, clock: clock.Now, renewed: make(chan time.Time, 64)}
	e := mustEnv(t, func(c *Config) {
		c.Store, c.LeaseTTL, c.Heartbeat, c.Now = probe, ttl, 20*time.Millisecond, clock.Now
	})
	// The others audit through the same store, not the probe.
	other, err := New(Config{Guard: e.guard, Renderer: browser, Store: mem, Token: e.auditor.cfg.Token,
		PlainUA: e.auditor.cfg.PlainUA, Timeout: 30 * time.Second, LeaseTTL: ttl, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := e.site.Hold(t, "/long.html")
	defer release()
	long, err := e.auditor.Submit(context.Background(), Request{URL: "http://shop.example/long.html", Trigger: TriggerAPI, Start: true})
	if err != nil || long.lease == nil {
		t.Fatalf("Submit of the long audit: %+v, %v; want admitted", long, err)
	}
	done := finishAsync(e.auditor, long)
	within(t, 30*time.Second, "the long audit reaching its page", entered)

	admitted := 0
	last := storeT0
	for i := 1; i <= 9; i++ {
		clock.Set(time.Duration(i) * time.Second)
		last = probe.renewedAfter(t, clock.Now())
		tk, err := other.Submit(context.Background(), Request{URL: "http://shop.example/index.html", Trigger: TriggerAPI, Start: true})
		if err != nil {
			t.Fatal(err)
		}
		if tk.Ready() == nil || tk.Ready().Status != StatusRateLimited || tk.Ready().Limit != cache.ReasonConcurrency {
			admitted++
			if r, err := other.Finish(context.Background(), tk); err != nil {
				t.Errorf("the other audit: %v, %v", r, err)
			}
		}
	}
	if admitted > 0 {
		t.Errorf("%d other audits of the host were admitted while the long one ran (%s past its first lease)", admitted, 9*time.Second-ttl)
	}

	// The holder dies: no renewal succeeds from now on.
	probe.cut.Store(true)
	clock.Set(9*time.Second + time.Millisecond)
	stopped := within(t, 30*time.Second, "the cut-off holder stopping its audit", done)
	if stopped.r == nil || stopped.r.Status == StatusComplete || !errors.Is(stopped.err, ErrNotStored) {
		t.Errorf("the cut-off holder's audit = %+v, %v; want it stopped and not stored", stopped.r, stopped.err)
	}
	// Its lease frees the host one TTL after its last heartbeat.
	clock.Set(last.Sub(storeT0) + ttl - time.Millisecond)
	if a, err := mem.Admit(context.Background(), "http://shop.example/index.html", "probe"); err != nil || a.Decision != cache.Refused || a.RetryAfter != time.Millisecond {
		t.Fatalf("1 ms before the dead lease lapses: %+v, %v; want refused for 1ms", a, err)
	}
	clock.Set(last.Sub(storeT0) + ttl)
	r, err := other.Audit(context.Background(), Request{URL: "http://shop.example/index.html", Trigger: TriggerAPI})
	if err != nil || r.Status != StatusComplete {
		t.Fatalf("the audit after the dead lease lapsed: %+v, %v; want complete", r, err)
	}
	if n := e.site.MaxConcurrent("shop.example"); n != 1 {
		t.Errorf("shop.example had %d requests in flight at once, want 1", n)
	}
}

// faultEnv is an auditor over a RedisStore on a private redis-server that
// the test can freeze, with a short lease.
func faultEnv(t *testing.T, ttl time.Duration) (*env, *redistest.Private, cache.Store) {
	t.Helper()
	srv := redistest.StartPrivate(t)
	lim := testLimits()
	lim.LeaseTTL = ttl
	archive := openRecords(t, records.Config{DataDir: t.TempDir()})
	store, err := cache.NewRedisStore(context.Background(), srv.URL(), archive, lim, cache.RedisOptions{})
	if err != nil {
		t.Fatalf("open the Redis store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	e := mustEnv(t, func(c *Config) { c.Store, c.LeaseTTL = store, ttl })
	return e, srv, store
}

// startHeld submits a held page's audit and a joiner of it, and waits
// until the audit reached the page.
func startHeld(t *testing.T, e *env, path string) (holder, joiner <-chan finished, release func(), id string) {
	t.Helper()
	entered, release := e.site.Hold(t, path)
	u := "http://other.example" + path
	tk := eventuallySubmit(t, e.auditor, u)
	holder = finishAsync(e.auditor, tk)
	within(t, 30*time.Second, "the audit reaching its page", entered)
	jt, err := e.auditor.Submit(context.Background(), Request{URL: u, Trigger: TriggerAPI})
	if err != nil || !jt.Joined() || jt.ID != tk.ID {
		t.Fatalf("the second submission: %+v, %v; want it to join %s", jt, err, tk.ID)
	}
	return holder, finishAsync(e.auditor, jt), release, tk.ID
}

// TestStoreFaultAtTheEnd freezes Redis while an audit ends: the report is
// stored once Redis is back, the joiner receives it, and the host takes a
// new audit afterwards.
func TestStoreFaultAtTheEnd(t *testing.T) {
	e, srv, _ := faultEnv(t, 9*time.Second)
	holder, joiner, release, id := startHeld(t, e, "/end.html")
	srv.Freeze(t)
	release()
	// The audit ends while Redis is frozen; its store calls time out and
	// are retried.
	time.Sleep(2 * time.Second)
	srv.Thaw(t)
	h := within(t, 30*time.Second, "the holder", holder)
	if h.err != nil || h.r == nil || h.r.Status != StatusComplete {
		t.Fatalf("the holder: %+v, %v; want the complete report, stored", h.r, h.err)
	}
	j := within(t, 30*time.Second, "the joiner", joiner)
	if j.err != nil || j.r == nil || j.r.ID != id || !j.r.Joined {
		t.Fatalf("the joiner: %+v, %v; want report %s, joined", j.r, j.err, id)
	}
	if got, err := e.auditor.Report(context.Background(), id); err != nil || got.Status != StatusComplete {
		t.Fatalf("the stored report: %+v, %v", got, err)
	}
	r, err := e.auditor.Audit(context.Background(), Request{URL: "http://other.example/index.html", Trigger: TriggerAPI})
	if err != nil || r.Status != StatusComplete {
		t.Fatalf("the next audit of the host: %+v, %v; want complete", r, err)
	}
}

// TestStoreFaultPastTheLease keeps the store away from the holder past its
// retries (Redis frozen, and none of the holder's calls answering, so the
// report reaches neither Redis nor the archive): the holder gives up, its
// lease lapses, the joiner is told the audit ran but could not be saved,
// and the host takes a new audit at once.
func TestStoreFaultPastTheLease(t *testing.T) {
	const ttl = 3 * time.Second
	e, srv, store := faultEnv(t, ttl)
	probe := &holderProbe{Store: store, clock: time.Now, renewed: make(chan time.Time, 64)}
	holderAud, err := New(Config{Guard: e.guard, Renderer: browser, Store: probe, Token: e.auditor.cfg.Token,
		PlainUA: e.auditor.cfg.PlainUA, Timeout: 30 * time.Second, LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := e.site.Hold(t, "/lost.html")
	u := "http://other.example/lost.html"
	tk := eventuallySubmit(t, holderAud, u)
	holder := finishAsync(holderAud, tk)
	within(t, 30*time.Second, "the audit reaching its page", entered)
	jt, err := e.auditor.Submit(context.Background(), Request{URL: u, Trigger: TriggerAPI})
	if err != nil || !jt.Joined() || jt.ID != tk.ID {
		t.Fatalf("the second submission: %+v, %v; want it to join %s", jt, err, tk.ID)
	}
	joiner := finishAsync(e.auditor, jt)

	srv.Freeze(t)
	probe.cut.Store(true)
	release()
	h := within(t, 60*time.Second, "the holder", holder)
	if h.r == nil || h.r.Status != StatusComplete || !errors.Is(h.err, ErrNotStored) {
		t.Fatalf("the holder: %+v, %v; want the complete report and ErrNotStored", h.r, h.err)
	}
	// The holder stopped renewing before it gave up: by now its lease
	// has lapsed by Redis's clock.
	time.Sleep(ttl / 2)
	srv.Thaw(t)
	j := within(t, 60*time.Second, "the joiner", joiner)
	if !errors.Is(j.err, cache.ErrAbandoned) {
		t.Fatalf("the joiner: report %v, %v; want ErrAbandoned", j.r != nil, j.err)
	}
	r, err := e.auditor.Audit(context.Background(), Request{URL: "http://other.example/index.html", Trigger: TriggerAPI})
	if err != nil || r.Status != StatusComplete {
		t.Fatalf("the next audit of the host: %+v, %v; want complete (the dead lease released)", r, err)
	}
}
