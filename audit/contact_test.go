package audit

import (
	"context"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/policy"
)

// slowFirstLookup resolves every name to addr, the first lookup after
// delay: the first audit's first request reaches the site that much after
// its admission.
type slowFirstLookup struct {
	addr  netip.Addr
	delay time.Duration
	calls atomic.Int32
}

func (r *slowFirstLookup) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return []netip.Addr{r.addr}, nil
}

// TestWindowCountsFromTheSite: a host's window counts from when the site
// saw an audit's first request, not from its admission. The first audit's
// name lookup takes 700 ms; the next audit of the host, which asks at once
// and again until it may start, reaches the site's log at least a whole
// window after the first one.
func TestWindowCountsFromTheSite(t *testing.T) {
	const window = 2 * time.Second
	const host = "slowdns.example"
	res := &slowFirstLookup{delay: 700 * time.Millisecond}
	e := mustEnvGuard(t, func(e *env, gc *policy.GuardConfig) {
		res.addr = e.site.AddrPort().Addr()
		gc.Resolver = res
		gc.AllowPorts = append(gc.AllowPorts, e.site.AddrPort().Port())
	}, nil)
	l := cache.Defaults()
	l.Windows = []cache.Window{{N: 1, Per: window}}
	store, err := cache.NewMemoryStore(l, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	e.auditor.cfg.Store = store
	base := "http://" + host + ":" + itoa(int(e.site.AddrPort().Port()))
	for _, page := range []string{"/index.html", "/js-title.html"} {
		for {
			r := e.audit(t, base+page, TriggerAPI)
			if r.Status != StatusRateLimited {
				if !r.Status.Ran() {
					t.Fatalf("%s: %s (%s)", page, r.Status, r.Reason)
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	hits := e.site.HitsOf(host, "/robots.txt")
	if len(hits) != 2 {
		t.Fatalf("the site saw %d robots.txt requests, want 2", len(hits))
	}
	if gap := hits[1].Start.Sub(hits[0].Start); gap < window {
		t.Errorf("the site saw the two audits start %s apart, want at least %s", gap, window)
	}
}
