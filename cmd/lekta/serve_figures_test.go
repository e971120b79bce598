package main

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

// TestServeLoadFigures runs three `lekta serve` processes with one renderer
// each on one Redis, sends bounded submissions over 40 hosts, then kills
// one instance with SIGKILL while its audit holds a page, and prints the
// figures of the per-host promise as the site saw them. It asserts the
// promise (no host audited closer together than its window, never two
// requests of a host in flight) and logs the rest. Opt-in by
// LEKTA_LOAD_FIGURES=1: it runs for a few minutes.
func TestServeLoadFigures(t *testing.T) {
	if os.Getenv("LEKTA_LOAD_FIGURES") == "" {
		t.Skip("set LEKTA_LOAD_FIGURES=1 to run the load figures (a few minutes)")
	}
	const (
		hostCount, perHost = 40, 3
		window             = 5 * time.Second
		// tolerance is the time between an audit's charge in Redis and
		// its robots.txt request reaching the site.
		tolerance = 500 * time.Millisecond
	)
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	redisURL, raw := redistest.Shared(t)
	prefix := redistest.Prefix(t, raw)
	hosts := []string{"held.example"}
	for i := range hostCount {
		hosts = append(hosts, fmt.Sprintf("h%02d.example", i))
	}
	resolve, allow := site.ResolveFlags(hosts...)
	args := []string{"--redis-url", redisURL, "--redis-prefix", prefix, "--renderers", "1", "--queue", "16",
		"--rate", "1/5s", "--timeout", "30s", "--allow-addr", allow}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	var inst []*served
	for range 3 {
		inst = append(inst, startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...))
	}

	type sub struct {
		at     time.Time
		id     string
		status int
		via    *served
	}
	subs := make([]sub, hostCount*perHost)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 12) // at most 12 submissions in flight
	for i := range subs {
		u := fmt.Sprintf("http://%s/index.html?n=%d", hosts[1+i%hostCount], i/hostCount)
		s := inst[i%3]
		wg.Go(func() {
			gate <- struct{}{}
			defer func() { <-gate }()
			at := time.Now()
			resp, b := s.postAPI(u)
			subs[i] = sub{at: at, status: resp.StatusCode, via: s}
			if resp.StatusCode == http.StatusAccepted {
				subs[i].id = servePendingID(t, resp, b)
			}
		})
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	counts := map[int]int{}
	var waits []time.Duration
	ran := 0
	for _, s := range subs {
		counts[s.status]++
		if s.id == "" {
			continue
		}
		r := s.via.waitReport(s.id)
		if r.Status.Ran() {
			ran++
			waits = append(waits, r.StartedAt.Sub(s.at))
		}
	}

	over, maxInFlight, minGap := 0, 0, time.Duration(1<<62)
	for _, host := range hosts[1:] {
		starts := site.HitsOf(host, "/robots.txt")
		sort.Slice(starts, func(i, j int) bool { return starts[i].Start.Before(starts[j].Start) })
		for i := 1; i < len(starts); i++ {
			gap := starts[i].Start.Sub(starts[i-1].Start)
			minGap = min(minGap, gap)
			if gap < window-tolerance {
				over++
				t.Errorf("%s: audits reached the site %s apart, want at least %s", host, gap, window)
			}
		}
		maxInFlight = max(maxInFlight, site.MaxConcurrent(host))
	}
	if maxInFlight != 1 {
		t.Errorf("a host had %d requests in flight at once, want 1", maxInFlight)
	}
	slices.Sort(waits)
	pct := func(p float64) time.Duration {
		if len(waits) == 0 {
			return 0
		}
		return waits[min(len(waits)-1, int(p*float64(len(waits))))].Round(10 * time.Millisecond)
	}

	// kill -9 of an instance whose audit holds a page: how long until
	// another instance is admitted for the host.
	entered, release := site.Hold(t, "/held.html")
	resp, b := inst[0].postAPI("http://held.example/held.html")
	servePendingID(t, resp, b)
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatalf("the held audit never reached the page:\n%s", inst[0].stderr)
	}
	killed := time.Now()
	inst[0].kill()
	release()
	var readmitted time.Duration
	for i := 0; ; i++ {
		resp, b = inst[1].postAPI(fmt.Sprintf("http://held.example/index.html?after=%d", i))
		if resp.StatusCode == http.StatusAccepted {
			readmitted = time.Since(killed)
			inst[1].waitReport(servePendingID(t, resp, b))
			break
		}
		if time.Since(killed) > leaseTTL+30*time.Second {
			t.Fatalf("the host was not admitted again %s after the kill: %d %s", time.Since(killed), resp.StatusCode, b)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if n := site.MaxConcurrent("held.example"); n != 1 {
		t.Errorf("held.example had %d requests in flight at once, want 1", n)
	}

	t.Logf("figures: %d submissions over %d hosts on 3 instances (--renderers 1 --rate 1/5s): answers %v; %d audits ran",
		len(subs), hostCount, counts, ran)
	t.Logf("figures: over-admissions at the site %d (closest two audits of a host %s apart, window %s); most requests of one host in flight %d",
		over, minGap.Round(time.Millisecond), window, maxInFlight)
	t.Logf("figures: queue wait p50 %s, p95 %s (submission to the audit's start, %d audits)", pct(0.50), pct(0.95), len(waits))
	t.Logf("figures: kill -9 to readmission of the host %s (lease TTL %s, renewed every %s)",
		readmitted.Round(100*time.Millisecond), leaseTTL, leaseTTL/3)
}
