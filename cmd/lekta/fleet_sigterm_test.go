package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// waiterAnswer is what one long-polling client got.
type waiterAnswer struct {
	status int
	body   string
	err    error
}

// longPoll sends GET ?wait=60s for id in the background, as a client
// waiting for its report does.
func longPoll(s *served, id string) <-chan waiterAnswer {
	ch := make(chan waiterAnswer, 1)
	go func() {
		resp, err := s.client.Get(s.base + "/api/v1/audits/" + id + "?wait=60s")
		if err != nil {
			ch <- waiterAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		ch <- waiterAnswer{status: resp.StatusCode, body: string(b), err: err}
	}()
	return ch
}

// TestFleetSIGTERMAnswersWaiters sends SIGTERM to a lekta serve of a
// fleet on PostgreSQL and Redis whose one renderer is held at the site,
// with an audit queued behind it and a client long-polling each: both
// clients are answered before their connections close (the cancelled
// report, and 202 with its start for the queued one), a submission during
// the shutdown is refused in words that say so, the process exits 0, and
// another instance runs the queued audit; from the site's log, its host
// was contacted by that one audit only.
func TestFleetSIGTERMAnswersWaiters(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	hosts := []string{"shop.example", "q1.example", "q2.example"}
	args := fleetArgs(t, site, hosts, "--timeout", "30s", "--renderers", "1", "--shutdown-grace", "3s", "--rate", "1/1s,100/1h")
	a := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
	entered, release := site.Hold(t, "/held.html")
	defer release()
	resp, body := a.postAPI("http://shop.example/held.html")
	running := servePendingID(t, resp, body)
	waitClosed(t, entered, "the audit reaching its page", a)
	resp, body = a.postAPI("http://q1.example/index.html")
	queued := servePendingID(t, resp, body)
	waitRunning, waitQueued := longPoll(a, running), longPoll(a, queued)
	time.Sleep(300 * time.Millisecond) // both polls are in flight

	a.cancel() // SIGTERM
	waitFor(t, "shutdown to begin", func() bool { return strings.Contains(a.stderr.String(), "shutting down") })
	resp, body = a.postAPI("http://q2.example/index.html")
	serveErrorCode(t, resp, body, http.StatusServiceUnavailable, true)
	if !strings.Contains(string(body), "shutting down") {
		t.Errorf("a submission during the shutdown: %s; want words that say the server is shutting down", body)
	}
	var exit error
	select {
	case exit = <-a.done:
		a.done <- exit
	case <-time.After(90 * time.Second):
		t.Fatalf("lekta serve did not exit within 90 s of SIGTERM\n%s", a.stderr)
	}
	if exit != nil {
		t.Errorf("lekta serve after SIGTERM: %v, want exit 0\n%s", exit, a.stderr)
	}
	wantWaiter(t, "the running audit's waiter", <-waitRunning, http.StatusOK, `"status":"cancelled"`)
	wantWaiter(t, "the queued audit's waiter", <-waitQueued, http.StatusAccepted, `"starts_at"`)

	b := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
	if r := b.waitReport(queued); r.Status != audit.StatusComplete {
		t.Errorf("the queued audit on another instance: %s (%s), want complete", r.Status, r.Reason)
	}
	if n := len(site.HitsOf("q1.example", "/robots.txt")); n != 1 {
		t.Errorf("q1.example read robots.txt %d times, want once (one audit)", n)
	}
	if n := len(site.HitsOf("q2.example", "/")); n != 0 {
		t.Errorf("the refused q2.example was contacted %d times", n)
	}
}

// wantWaiter checks that a long-polling client got status with a body
// holding want, not a connection closed without an answer.
func wantWaiter(t *testing.T, who string, got waiterAnswer, status int, want string) {
	t.Helper()
	if got.err != nil {
		t.Errorf("%s got no answer: %v", who, got.err)
		return
	}
	if got.status != status || !strings.Contains(got.body, want) {
		t.Errorf("%s: %d %s; want %d with %s", who, got.status, got.body, status, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got.body), &v); err != nil {
		t.Errorf("%s: %v", who, fmt.Errorf("body is not JSON: %w", err))
	}
}
