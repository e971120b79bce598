package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
)

// TestShutdownFinishesRunningAuditsAndDropsQueuedOnes shuts down with a full
// queue: the running audit finishes, the queued ones end cancelled at once
// with the reason and nothing said about their sites, no robots finding,
// and only the audit that started was charged against its host's windows.
func TestShutdownFinishesRunningAuditsAndDropsQueuedOnes(t *testing.T) {
	h := newHarness(t, gated, func(c *Config, _ *stubRenderer) { c.Renderers, c.Queue = 1, 2 })
	resp, b := h.post("http://a.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	running := decode[pending](t, b).ID
	<-h.rend.started
	var queued []string
	for _, u := range []string{"http://b.example/index.html", "http://c.example/index.html"} {
		resp, b = h.post(u)
		wantStatus(t, resp, b, http.StatusAccepted)
		queued = append(queued, decode[pending](t, b).ID)
	}
	resp, b = h.post("http://d.example/index.html")
	wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true) // the queue is full

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- h.srv.Shutdown(ctx)
	}()
	// New submissions are refused once shutdown began.
	<-h.srv.pool.stopping()
	resp, b = h.post("http://e.example/index.html")
	wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true)
	// The queued audits end at once, while the running one still runs.
	for _, id := range queued {
		r := h.reportDuringShutdown(id)
		if r.Status != audit.StatusCancelled || r.Reason != "the service was shutting down" || len(r.Findings) != 0 || r.Robots != nil {
			t.Errorf("the queued audit %s ended %s (%q) with %d findings, robots %v; want cancelled, the reason, nothing about the site",
				id, r.Status, r.Reason, len(r.Findings), r.Robots != nil)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v while an audit was still running", err)
	default:
	}
	h.open()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	resp, b = h.do("GET", "/api/v1/audits/"+running, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	if r := decode[*audit.Report](t, b); r.Status != audit.StatusComplete {
		t.Errorf("the running audit ended %s, want complete", r.Status)
	}
	for _, host := range []string{"b.example", "c.example", "d.example", "e.example"} {
		if n := len(h.site.HitsOf(host, "/")); n != 0 {
			t.Errorf("%s was contacted %d times during shutdown", host, n)
		}
		// Never charged: the host's 1/1m window is free.
		if a, err := h.store.Peek(context.Background(), "http://"+host+"/other.html"); err != nil || a.Decision != cache.Admitted {
			t.Errorf("%s after shutdown: %s %s, %v; want it admitted (never charged)", host, a.Decision, a.Reason, err)
		}
	}
	if a, err := h.store.Peek(context.Background(), "http://a.example/other.html"); err != nil || a.Decision != cache.Refused || a.Reason != "1/1m" {
		t.Errorf("a.example after its audit: %s %q, %v; want refused by 1/1m (charged when it started)", a.Decision, a.Reason, err)
	}
	if n := h.srv.Running(); n != 0 {
		t.Errorf("%d runs left after shutdown", n)
	}
}

// TestShutdownGraceCancels shuts down while an audit runs past the grace
// period: it is cancelled with the reason, and Shutdown returns.
func TestShutdownGraceCancels(t *testing.T) {
	h := newHarness(t, gated, func(c *Config, _ *stubRenderer) { c.Renderers, c.ShutdownGrace = 1, 200*time.Millisecond })
	resp, b := h.post("http://a.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	id := decode[pending](t, b).ID
	<-h.rend.started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	resp, b = h.do("GET", "/api/v1/audits/"+id, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	if r := decode[*audit.Report](t, b); r.Status != audit.StatusCancelled || r.Reason != "the service was shutting down" || len(r.Findings) != 0 {
		t.Errorf("the audit past the grace period ended %s (%q), %d findings; want cancelled with the reason", r.Status, r.Reason, len(r.Findings))
	}
}

// slowSubmit holds Submit until released, to shut down in between.
type slowSubmit struct {
	Auditor
	entered chan struct{}
	release chan struct{}
	ticket  chan *audit.Ticket
}

func (s *slowSubmit) Submit(ctx context.Context, req audit.Request) (*audit.Ticket, error) {
	t, err := s.Auditor.Submit(ctx, req)
	close(s.entered)
	<-s.release
	s.ticket <- t
	return t, err
}

func TestShutdownDuringSubmitReleasesTheLease(t *testing.T) {
	slow := &slowSubmit{entered: make(chan struct{}), release: make(chan struct{}), ticket: make(chan *audit.Ticket, 1)}
	h := newHarness(t, func(c *Config, _ *stubRenderer) {
		slow.Auditor = c.Auditor
		c.Auditor = slow
	})
	answered := make(chan int, 1)
	go func() {
		resp, _ := h.post("http://a.example/index.html")
		answered <- resp.StatusCode
	}()
	<-slow.entered // admitted: the lease on a.example is taken
	stopped := make(chan error, 1)
	go func() { stopped <- h.srv.Shutdown(context.Background()) }()
	<-h.srv.pool.stopping()
	close(slow.release)
	if code := <-answered; code != http.StatusServiceUnavailable {
		t.Errorf("submission admitted during shutdown answered %d, want 503", code)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	id := (<-slow.ticket).ID
	rep, err := slow.Auditor.Report(context.Background(), id)
	if err != nil {
		t.Fatalf("the admitted audit left no report (its lease would stay taken): %v", err)
	}
	if rep.Status.Ran() {
		t.Errorf("the audit ran during shutdown: %s", rep.Status)
	}
	if n := len(h.site.Hits()); n != 0 {
		t.Errorf("%d requests reached the site during shutdown", n)
	}
}

// reportDuringShutdown polls id until its report is there: long polls end
// at once while the server shuts down.
func (h *harness) reportDuringShutdown(id string) *audit.Report {
	h.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, b := h.do("GET", "/api/v1/audits/"+id, "", nil)
		switch {
		case resp.StatusCode == http.StatusOK:
			return decode[*audit.Report](h.tb, b)
		case resp.StatusCode != http.StatusAccepted || time.Now().After(deadline):
			h.tb.Fatalf("GET audit %s during shutdown: %d %s", id, resp.StatusCode, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
