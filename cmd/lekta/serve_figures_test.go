package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// TestServeLoadFigures runs three `lekta serve` processes with one renderer
// each on one PostgreSQL (records and the shared queue) and one Redis,
// sends 300 submissions over 40 hosts (at most 12 in flight), and prints
// the figures of the per-host promise as the site saw them. It asserts the
// promise (no host audited closer together than its window, never two
// requests of a host in flight), that every accepted audit ran (none ended
// rate limited) and that a 503 only ever meant the shared queue was full;
// the rest it logs. Opt-in by LEKTA_LOAD_FIGURES=1: it runs for a few
// minutes.
func TestServeLoadFigures(t *testing.T) {
	if os.Getenv("LEKTA_LOAD_FIGURES") == "" {
		t.Skip("set LEKTA_LOAD_FIGURES=1 to run the load figures (a few minutes)")
	}
	const (
		hostCount, total = 40, 300
		window           = 5 * time.Second
	)
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	var hosts []string
	for i := range hostCount {
		hosts = append(hosts, fmt.Sprintf("h%02d.example", i))
	}
	args := fleetArgs(t, site, hosts, "--renderers", "1", "--queue", "100", "--rate", "1/5s,100/1h", "--timeout", "30s")
	var inst []*served
	for range 3 {
		inst = append(inst, startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...))
	}

	type sub struct {
		at       time.Time
		id       string
		status   int
		body     string
		startsAt time.Time
		via      *served
	}
	subs := make([]sub, total)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 12) // at most 12 submissions in flight
	for i := range subs {
		u := fmt.Sprintf("http://%s/index.html?n=%d", hosts[i%hostCount], i/hostCount)
		s := inst[i%3]
		wg.Go(func() {
			gate <- struct{}{}
			defer func() { <-gate }()
			at := time.Now()
			resp, b := s.postAPI(u)
			subs[i] = sub{at: at, status: resp.StatusCode, body: string(b), via: s}
			if resp.StatusCode == http.StatusAccepted {
				var p struct {
					ID       string    `json:"id"`
					StartsAt time.Time `json:"starts_at"`
				}
				if err := json.Unmarshal(b, &p); err != nil {
					t.Errorf("202: %v %s", err, b)
				}
				subs[i].id, subs[i].startsAt = p.ID, p.StartsAt
			}
		})
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	counts := map[int]int{}
	var waits, lates []time.Duration
	ran, limited := 0, 0
	for _, s := range subs {
		counts[s.status]++
		if s.status == http.StatusServiceUnavailable && !strings.Contains(s.body, "queue is full") {
			t.Errorf("a 503 that is not a full queue: %s", s.body)
		}
		if s.id == "" {
			continue
		}
		r := s.via.waitReportFor(s.id, 10*time.Minute)
		switch {
		case r.Status == audit.StatusRateLimited:
			limited++
		case r.Status.Ran():
			ran++
			waits = append(waits, r.StartedAt.Sub(s.at))
			if !s.startsAt.IsZero() {
				lates = append(lates, r.StartedAt.Sub(s.startsAt))
			}
		}
	}
	if limited > 0 {
		t.Errorf("%d accepted audits ended rate limited, want none", limited)
	}

	over, maxInFlight, minGap := 0, 0, time.Duration(1<<62)
	for _, host := range hosts {
		starts := site.HitsOf(host, "/robots.txt")
		sort.Slice(starts, func(i, j int) bool { return starts[i].Start.Before(starts[j].Start) })
		for i := 1; i < len(starts); i++ {
			gap := starts[i].Start.Sub(starts[i-1].Start)
			minGap = min(minGap, gap)
			if gap < window {
				over++
				t.Errorf("%s: audits reached the site %s apart, want at least %s", host, gap, window)
			}
		}
		maxInFlight = max(maxInFlight, site.MaxConcurrent(host))
	}
	if maxInFlight != 1 {
		t.Errorf("a host had %d requests in flight at once, want 1", maxInFlight)
	}
	pct := func(ds []time.Duration, p float64) time.Duration {
		if len(ds) == 0 {
			return 0
		}
		slices.Sort(ds)
		return ds[min(len(ds)-1, int(p*float64(len(ds))))].Round(10 * time.Millisecond)
	}
	t.Logf("figures: %d submissions over %d hosts on 3 instances (--renderers 1 --rate 1/5s,100/1h --queue 100): answers %v; %d audits ran, %d accepted ended rate limited",
		len(subs), hostCount, counts, ran, limited)
	t.Logf("figures: over-admissions at the site %d (closest two audits of a host %s apart, window %s); most requests of one host in flight %d",
		over, minGap.Round(time.Millisecond), window, maxInFlight)
	t.Logf("figures: queue wait p50 %s, p95 %s (submission to the audit's start, %d audits); start after its starts_at p50 %s, p95 %s",
		pct(waits, 0.50), pct(waits, 0.95), len(waits), pct(lates, 0.50), pct(lates, 0.95))
}
