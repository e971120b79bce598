package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// TestServeLoad sends 200 API submissions at once across 20 hosts, two
// pages each, where a host may start an audit every 2 s. Every one must be
// answered correctly (a report, a pending audit that finishes, or 503 with
// Retry-After when the shared queue is full; never 429, since every host
// allows a start within the wait a submitter accepts), every accepted
// audit runs (a 202 means it will run: none ends rate limited), no host
// sees two requests at a time nor two audits closer than its window (its
// own log), and no goroutine outlives the server.
func TestServeLoad(t *testing.T) {
	const hostCount, perHost = 20, 10
	site := testsite.Start(t)
	var hosts []string
	for i := 1; i <= hostCount; i++ {
		hosts = append(hosts, fmt.Sprintf("host%d.example", i))
	}
	before := runtime.NumGoroutine()
	const window = 2 * time.Second
	s := startServe(t, site, hosts, "--queue", "24", "--rate", "1/2s,5/1h")

	type answer struct {
		status int
		retry  string
		body   []byte
	}
	answers := make([]answer, hostCount*perHost)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		// Most submissions of a host ask for the same page (joins and cache
		// hits); every fifth asks for another page of it (limiter refusals).
		page := "/index.html"
		if (i/hostCount)%5 == 4 {
			page = "/js-title.html"
		}
		u := "http://" + hosts[i%hostCount] + page
		wg.Go(func() {
			<-start
			resp, b := s.postAPI(u)
			answers[i] = answer{resp.StatusCode, resp.Header.Get("Retry-After"), b}
		})
	}
	close(start)
	wg.Wait()

	counts := map[int]int{}
	pending := map[string]bool{}
	for i, a := range answers {
		counts[a.status]++
		switch a.status {
		case http.StatusOK:
			var r audit.Report
			if err := json.Unmarshal(a.body, &r); err != nil || !r.Cached || !r.Status.Ran() {
				t.Errorf("submission %d: 200 that is not a cached report (%v): %.200s", i, err, a.body)
			}
		case http.StatusAccepted:
			var p struct{ ID string }
			if err := json.Unmarshal(a.body, &p); err != nil || p.ID == "" {
				t.Errorf("submission %d: 202 without an id: %s", i, a.body)
			}
			pending[p.ID] = true
		case http.StatusServiceUnavailable:
			if n, err := strconv.Atoi(a.retry); err != nil || n < 1 {
				t.Errorf("submission %d: %d with Retry-After %q", i, a.status, a.retry)
			}
		default:
			t.Errorf("submission %d: unexpected %d %s", i, a.status, a.body)
		}
	}
	t.Logf("answers by status: %v; %d distinct audits pending", counts, len(pending))
	if counts[http.StatusAccepted] == 0 {
		t.Fatal("no submission was accepted")
	}
	// A 202 means it will run: the start its host's windows reserved at
	// submission holds, so no accepted audit ends rate limited.
	audited := map[string]bool{}
	for id := range pending {
		r := s.waitReport(id)
		if !r.Status.Ran() {
			t.Errorf("accepted audit %s ended %s: %s", id, r.Status, r.Reason)
		}
		if r.Status.Ran() {
			audited[r.URL] = true
		}
	}
	// A second wave once all is done: each audited page comes from the
	// cache. It asks one URL at a time: the burst above already showed
	// that every answer under load is a correct one (503 included).
	auditedHost := map[string]bool{}
	for u := range audited {
		if pu, err := url.Parse(u); err == nil {
			auditedHost[pu.Hostname()] = true
		}
	}
	t.Logf("%d of %d hosts were audited in the burst", len(auditedHost), len(hosts))
	for _, h := range hosts {
		if !auditedHost[h] {
			continue
		}
		for _, page := range []string{"/index.html", "/js-title.html"} {
			u := "http://" + h + page
			if !audited[u] {
				continue
			}
			if resp, b := s.postAPI(u); resp.StatusCode != http.StatusOK {
				t.Errorf("%s was audited but not answered from the cache: %d %s", u, resp.StatusCode, b)
			}
		}
	}
	for _, h := range hosts {
		if n := site.MaxConcurrent(h); n > 1 {
			t.Errorf("%s saw %d requests at once", h, n)
		}
		starts := site.HitsOf(h, "/robots.txt")
		sort.Slice(starts, func(i, j int) bool { return starts[i].Start.Before(starts[j].Start) })
		for i := 1; i < len(starts); i++ {
			if gap := starts[i].Start.Sub(starts[i-1].Start); gap < window {
				t.Errorf("%s: audits %d and %d reached it %s apart, want at least %s", h, i, i+1, gap, window)
			}
		}
	}

	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Connections the lanes kept alive to the site close with the site's
	// side; what is left after that is a leak.
	site.CloseClientConnections()
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before the server, %d after it stopped:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
