package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// TestServeSIGTERMWithAFullQueue sends SIGTERM to a `lekta serve` process
// whose one renderer is held at the site and whose queue is full: new
// submissions get 503 with Retry-After, the queued audits stay queued
// (answered 202 queued while the running one finishes), the running one
// finishes, and a serve started again on the same data dir runs the queued
// audits, each host contacted by one audit.
func TestServeSIGTERMWithAFullQueue(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	resolve, allow := site.ResolveFlags("shop.example", "q1.example", "q2.example", "q3.example")
	args := []string{"--data-dir", t.TempDir(), "--renderers", "1", "--queue", "2", "--rate", "1/1m",
		"--timeout", "30s", "--shutdown-grace", "60s", "--allow-addr", allow}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	a := startServeProc(t, h, args...)
	entered, release := site.Hold(t, "/held.html")
	resp, body := a.postAPI("http://shop.example/held.html")
	running := servePendingID(t, resp, body)
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatalf("the audit never reached the page:\n%s", a.stderr)
	}
	var queued []string
	for _, u := range []string{"http://q1.example/index.html", "http://q2.example/index.html"} {
		resp, body = a.postAPI(u)
		queued = append(queued, servePendingID(t, resp, body))
	}
	resp, body = a.postAPI("http://q3.example/index.html")
	serveErrorCode(t, resp, body, http.StatusServiceUnavailable, true) // the queue is full

	a.cancel() // SIGTERM
	waitFor(t, "shutdown to begin", func() bool { return strings.Contains(a.stderr.String(), "shutting down") })
	for _, id := range queued {
		resp, body := a.do("GET", "/api/v1/audits/"+id, "", nil)
		if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(body), `"status":"queued"`) {
			t.Errorf("queued audit %s during shutdown: %d %s; want 202 queued", id, resp.StatusCode, body)
		}
	}
	resp, body = a.postAPI("http://q3.example/index.html")
	serveErrorCode(t, resp, body, http.StatusServiceUnavailable, true) // shutting down
	release()
	if err := <-a.done; err != nil {
		t.Fatalf("lekta serve after SIGTERM: %v\n%s", err, a.stderr)
	}
	a.done <- nil
	for _, host := range []string{"q1.example", "q2.example", "q3.example"} {
		if n := len(site.HitsOf(host, "/")); n != 0 {
			t.Errorf("%s was contacted %d times before the restart", host, n)
		}
	}

	b := startServeProc(t, h, args...)
	if r := b.waitReport(running); r.Status != audit.StatusComplete {
		t.Errorf("the running audit ended %s (%s), want complete", r.Status, r.Reason)
	}
	for _, id := range queued {
		if r := b.waitReport(id); r.Status != audit.StatusComplete {
			t.Errorf("queued audit %s after the restart: %s (%s), want complete", id, r.Status, r.Reason)
		}
	}
	for _, host := range []string{"q1.example", "q2.example"} {
		if n := len(site.HitsOf(host, "/robots.txt")); n != 1 {
			t.Errorf("%s read robots.txt %d times, want once (one audit)", host, n)
		}
	}
	if n := len(site.HitsOf("q3.example", "/")); n != 0 {
		t.Errorf("the refused q3.example was contacted %d times", n)
	}
}

// waitFor polls cond until it holds, for up to 30 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pollReport reads id from s until it is a report (long polls end at once
// while s shuts down).
func pollReport(tb testing.TB, s *served, id string) *audit.Report {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, b := s.do("GET", "/api/v1/audits/"+id, "", nil)
		if resp.StatusCode == http.StatusOK {
			var r audit.Report
			if err := json.Unmarshal(b, &r); err != nil {
				tb.Fatal(err)
			}
			return &r
		}
		if resp.StatusCode != http.StatusAccepted || time.Now().After(deadline) {
			tb.Fatalf("GET audit %s: %d %s", id, resp.StatusCode, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
