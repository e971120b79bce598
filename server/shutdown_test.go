package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/testsite"
)

// TestShutdownFinishesRunningAuditsAndKeepsQueuedOnes shuts down with a
// full queue: the running audit finishes, new submissions are refused, and
// the queued audits stay queued, neither run nor cancelled nor charged.
// Another instance on the same queue (or this one restarted) then runs
// them: a stopped instance loses nothing.
func TestShutdownFinishesRunningAuditsAndKeepsQueuedOnes(t *testing.T) {
	dir := t.TempDir()
	lim := cache.Defaults()
	mem, err := cache.NewMemoryStore(lim, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := newInstance(t, testsite.Start(t), mem, lim, gated, sharedQueue(dir), func(c *harnessConfig) { c.renderers, c.queueLimit = 1, 2 })
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
	for !h.srv.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	// New submissions are refused once shutdown began.
	resp, b = h.post("http://e.example/index.html")
	wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true)
	// The queued audits wait, while the running one still runs.
	for _, id := range queued {
		resp, b := h.do("GET", "/api/v1/audits/"+id, "", nil)
		if p := decode[pending](t, b); resp.StatusCode != http.StatusAccepted || p.Status != "queued" {
			t.Errorf("the queued audit %s during shutdown: %d %s, want 202 queued", id, resp.StatusCode, b)
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
	}
	if n := h.srv.Running(); n != 0 {
		t.Errorf("%d runs left after shutdown", n)
	}

	// The next instance on the queue runs what waited.
	next := newInstance(t, h.site, mem, lim, sharedQueue(dir))
	for _, id := range queued {
		if r := next.waitReport(id); r.ID != id || r.Status != audit.StatusComplete {
			t.Errorf("the queued audit %s after the restart: %s %s, want complete", id, r.ID, r.Status)
		}
	}
	for _, host := range []string{"b.example", "c.example"} {
		if n := len(h.site.HitsOf(host, "/robots.txt")); n != 1 {
			t.Errorf("%s read robots.txt %d times, want once (one audit)", host, n)
		}
	}
}

// TestShutdownGraceCancels shuts down while an audit runs past the grace
// period: a long poll for it made during the shutdown answers with its
// final report, cancelled with the reason, and Shutdown returns.
func TestShutdownGraceCancels(t *testing.T) {
	h := newHarness(t, gated, func(c *harnessConfig) { c.renderers, c.ShutdownGrace = 1, 500*time.Millisecond })
	resp, b := h.post("http://a.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	id := decode[pending](t, b).ID
	<-h.rend.started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- h.srv.Shutdown(ctx) }()
	for !h.srv.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	resp, b = h.do("GET", "/api/v1/audits/"+id+"?wait=10s", "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
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

// TestShutdownDuringSubmitGivesBackTheStart: a submission whose start was
// reserved when shutdown began is refused, queued nowhere, and its start
// is given back to its host.
func TestShutdownDuringSubmitGivesBackTheStart(t *testing.T) {
	slow := &slowSubmit{entered: make(chan struct{}), release: make(chan struct{}), ticket: make(chan *audit.Ticket, 1)}
	h := newHarness(t, func(c *harnessConfig) {
		slow.Auditor = c.Auditor
		c.Auditor = slow
	})
	answered := make(chan int, 1)
	go func() {
		resp, _ := h.post("http://a.example/index.html")
		answered <- resp.StatusCode
	}()
	<-slow.entered // a start of a.example is reserved
	stopped := make(chan error, 1)
	go func() { stopped <- h.srv.Shutdown(context.Background()) }()
	for !h.srv.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	close(slow.release)
	if code := <-answered; code != http.StatusServiceUnavailable {
		t.Errorf("submission reserved during shutdown answered %d, want 503", code)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if tk := <-slow.ticket; !tk.Reserved() {
		t.Fatalf("the submission was not reserved: %+v", tk)
	}
	// The start went back: an audit of the host now is admitted.
	if a, err := h.store.Admit(context.Background(), "http://a.example/other.html", "probe"); err != nil || a.Decision != cache.Admitted {
		t.Errorf("a.example after the refused submission: %s %s, %v; want admitted (its start given back)", a.Decision, a.Reason, err)
	}
	if n := len(h.site.Hits()); n != 0 {
		t.Errorf("%d requests reached the site during shutdown", n)
	}
}
