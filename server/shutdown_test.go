package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
)

func TestShutdownFinishesRunningAuditsAndDropsQueuedOnes(t *testing.T) {
	h := newHarness(t, gated, func(c *Config, _ *stubRenderer) { c.Renderers, c.Queue = 1, 2 })
	resp, b := h.post("http://a.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	running := decode[pending](t, b).ID
	<-h.rend.started
	resp, b = h.post("http://b.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	queued := decode[pending](t, b).ID

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- h.srv.Shutdown(ctx)
	}()
	// New submissions are refused once shutdown began.
	<-h.srv.pool.stopping()
	resp, b = h.post("http://c.example/index.html")
	wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v while an audit was still running", err)
	case <-time.After(50 * time.Millisecond):
	}
	h.open()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	got := map[string]audit.Status{}
	for _, id := range []string{running, queued} {
		resp, b := h.do("GET", "/api/v1/audits/"+id, "", nil)
		wantStatus(t, resp, b, http.StatusOK)
		got[id] = decode[*audit.Report](t, b).Status
	}
	if got[running] != audit.StatusComplete {
		t.Errorf("the running audit ended %s, want complete", got[running])
	}
	if got[queued] == audit.StatusComplete {
		t.Errorf("the queued audit ran during shutdown")
	}
	if n := len(h.site.HitsOf("b.example", "/")); n != 0 {
		t.Errorf("the queued audit contacted b.example %d times during shutdown", n)
	}
	if n := h.srv.Running(); n != 0 {
		t.Errorf("%d runs left after shutdown", n)
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
