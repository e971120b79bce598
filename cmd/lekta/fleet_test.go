package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

// fleetArgs are the flags of serve processes sharing one PostgreSQL (the
// records and River's queue) and one Redis (hot state) under a prefix of
// the test's own, auditing site's hosts.
func fleetArgs(t *testing.T, site *testsite.Site, hosts []string, extra ...string) []string {
	t.Helper()
	redisURL, raw := redistest.Shared(t)
	prefix := redistest.Prefix(t, raw)
	resolve, allow := site.ResolveFlags(hosts...)
	args := []string{"--database-url", pgtest.Database(t), "--secrets-key-file", sharedSecretsKey(t), "--redis-url", redisURL,
		"--redis-prefix", strings.TrimSuffix(prefix, ":"), "--allow-addr", allow}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	return append(args, extra...)
}

// TestFleetKilledWithAFullQueue runs two lekta serve processes on one
// PostgreSQL and one Redis, one renderer each, both held at the site by an
// audit, with four more audits queued behind them; then kills one with
// SIGKILL. Every accepted id ends in a terminal status the survivor
// answers: the queued audits run there, the killed instance's running
// audit ends error with the true reason once River takes its job back,
// and from the site's own log its page was requested once (never run
// again), every queued host was audited once, and no host had two
// requests in flight.
func TestFleetKilledWithAFullQueue(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	hosts := []string{"shop.example", "other.example", "h0.example", "h1.example", "h2.example", "h3.example"}
	args := fleetArgs(t, site, hosts, "--timeout", "15s", "--rescue-after", "20s", "--renderers", "1", "--rate", "1/1s,100/1h")

	a := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
	entered, release := site.Hold(t, "/held.html")
	resp, body := a.postAPI("http://shop.example/held.html")
	killedID := servePendingID(t, resp, body)
	waitClosed(t, entered, "A's audit reaching its page", a)
	b := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
	entered2, release2 := site.Hold(t, "/held2.html")
	resp, body = b.postAPI("http://other.example/held2.html")
	heldB := servePendingID(t, resp, body)
	waitClosed(t, entered2, "B's audit reaching its page", b)
	var queued []string
	for i := range 4 {
		resp, body := a.postAPI(fmt.Sprintf("http://h%d.example/index.html", i))
		queued = append(queued, servePendingID(t, resp, body))
	}
	killed := time.Now()
	a.kill()
	release()
	release2()

	for _, id := range append([]string{heldB}, queued...) {
		if r := b.waitReport(id); r.Status != audit.StatusComplete {
			t.Errorf("audit %s on the survivor: %s (%s), want complete", id, r.Status, r.Reason)
		}
	}
	var firstQueued time.Time
	for i := range 4 {
		hits := site.HitsOf(fmt.Sprintf("h%d.example", i), "/robots.txt")
		if len(hits) != 1 {
			t.Errorf("h%d.example read robots.txt %d times, want once", i, len(hits))
			continue
		}
		if firstQueued.IsZero() || hits[0].Start.Before(firstQueued) {
			firstQueued = hits[0].Start
		}
	}
	t.Logf("figure: the first queued audit of the killed instance's queue reached its site %s after the kill",
		firstQueued.Sub(killed).Round(10*time.Millisecond))
	lost := b.waitReportFor(killedID, 3*time.Minute)
	if lost.Status != audit.StatusError || lost.Reason != audit.ReasonLost {
		t.Errorf("the killed instance's running audit: %s (%q), want error with %q", lost.Status, lost.Reason, audit.ReasonLost)
	}
	t.Logf("figure: the killed instance's running audit ended error %s after the kill", time.Since(killed).Round(time.Second))
	if n := len(site.HitsOf("shop.example", "/held.html")); n != 1 {
		t.Errorf("the killed audit's page was requested %d times, want once (never run again)", n)
	}
	for _, host := range hosts {
		if n := site.MaxConcurrent(host); n > 1 {
			t.Errorf("%s had %d requests in flight at once", host, n)
		}
	}
	if err := b.stop(); err != nil {
		t.Errorf("stop: %v\n%s", err, b.stderr)
	}
}

// TestFleetPausedHolderNeverOverlaps pauses (SIGSTOP) a lekta serve whose
// audit has a slow page's request open at the site, for longer than a
// lease lives without renewals, while another instance is asked to audit
// the same host. From the site's own log: no request of the host starts
// while the paused instance's request is open, since its host's lease
// lives until the paused audit could no longer be running (its start plus
// --timeout plus 15 s).
func TestFleetPausedHolderNeverOverlaps(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	const slow = 35 * time.Second
	slowEntered := make(chan struct{})
	var once bool
	site.Handle("/slow.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !once {
			once = true
			close(slowEntered)
		}
		select {
		case <-time.After(slow):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>Slow</title><h1>Slow page</h1>")
	}))
	args := fleetArgs(t, site, []string{"shop.example"}, "--timeout", "40s", "--renderers", "1", "--rate", "1/1s,100/1h")
	a := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
	b := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
	resp, body := a.postAPI("http://shop.example/slow.html")
	slowID := servePendingID(t, resp, body)
	select {
	case <-slowEntered:
	case <-time.After(time.Minute):
		t.Fatalf("the slow page was never requested:\n%s", a.stderr)
	}
	if err := a.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	// Ask B about the host until it accepts (today at once, for the start
	// the held lease allows; a lease that lapsed with the pause would let
	// it in after 30 s).
	var otherID string
	for otherID == "" && time.Since(paused) < 50*time.Second {
		resp, body := b.postAPI("http://shop.example/index.html")
		switch resp.StatusCode {
		case http.StatusAccepted:
			otherID = servePendingID(t, resp, body)
		case http.StatusTooManyRequests:
			time.Sleep(time.Second)
		default:
			t.Fatalf("B: %d %s", resp.StatusCode, body)
		}
	}
	if otherID == "" {
		t.Fatal("B never accepted an audit of the host")
	}
	time.Sleep(time.Until(paused.Add(45 * time.Second)))
	if err := a.proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r := b.waitReportFor(otherID, 2*time.Minute); r.Status != audit.StatusComplete {
		t.Errorf("B's audit of the host: %s (%s), want complete", r.Status, r.Reason)
	}
	if r := a.waitReport(slowID); r.Status.Ran() && r.Status != audit.StatusTimeout && r.Status != audit.StatusPartial {
		t.Logf("the paused audit ended %s (%s)", r.Status, r.Reason)
	}
	var open testsite.Hit
	for _, hit := range site.HitsOf("shop.example", "/slow.html") {
		open = hit
		break
	}
	if open.End.IsZero() {
		t.Fatalf("the slow request is not in the site's log")
	}
	for _, hit := range site.HitsOf("shop.example", "/") {
		if hit.Path == "/slow.html" {
			continue
		}
		if !hit.Start.Before(open.Start) && hit.Start.Before(open.End) {
			t.Errorf("%s %s started %s into the paused instance's open request (open %s to %s)",
				hit.Method, hit.Path, hit.Start.Sub(open.Start).Round(10*time.Millisecond),
				open.Start.Format("15:04:05.000"), open.End.Format("15:04:05.000"))
		}
	}
	if n := site.MaxConcurrent("shop.example"); n != 1 {
		t.Errorf("shop.example had %d requests in flight at once, want 1", n)
	}
}

// waitClosed waits for ch, or fails naming what with s's stderr.
func waitClosed(t *testing.T, ch <-chan struct{}, what string, s *served) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("timed out waiting for %s:\n%s", what, s.stderr)
	}
}
