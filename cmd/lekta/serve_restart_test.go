package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// startServeProc runs the built binary's "lekta serve" as a process of its
// own on 127.0.0.1:0 with args, and waits until /healthz answers. Its stop
// sends SIGTERM, as an operator or a supervisor does; kill sends SIGKILL.
func startServeProc(tb testing.TB, h *lektaHarness, args ...string) *served {
	tb.Helper()
	cmd := exec.Command(h.bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--chromium", h.browser,
		"--client-rate", "100000/1m"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEKTA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	s := &served{tb: tb, stdout: &serveBuf{}, stderr: &serveBuf{}, done: make(chan error, 1),
		client: &http.Client{Timeout: 90 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start lekta serve: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		s.done <- cmd.Wait()
		close(exited)
	}()
	s.cancel = func() { _ = cmd.Process.Signal(syscall.SIGTERM) }
	s.proc = cmd.Process
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s.waitServing(tb)
	return s
}

// kill ends a serve process with SIGKILL, as a crash or the OOM killer
// would, and waits for it.
func (s *served) kill() {
	s.tb.Helper()
	if err := s.proc.Kill(); err != nil {
		s.tb.Fatal(err)
	}
	<-s.done
	s.done <- nil
}

// auditOnce submits u through the API and waits for its report.
func (s *served) auditOnce(u string) *audit.Report {
	s.tb.Helper()
	resp, body := s.postAPI(u)
	return s.waitReport(servePendingID(s.tb, resp, body))
}

// restartArgs are the serve flags of the restart tests on data dir dir.
func restartArgs(site *testsite.Site, dir string, extra ...string) []string {
	return slices.Concat([]string{"--data-dir", dir}, extra, siteArgs(site))
}

// TestServeRestart stops lekta serve with SIGTERM and starts it again on
// the same data dir: the reports made before are readable by id, the cache
// still answers without touching the site, and the hour window still counts
// the audits made before the restart.
func TestServeRestart(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	args := restartArgs(site, t.TempDir(), "--rate", "10/1m,2/1h", "--timeout", "30s")
	const first, second, third = "http://shop.example/index.html", "http://shop.example/js-title.html", "http://shop.example/links-added.html"

	a := startServeProc(t, h, args...)
	r1, r2 := a.auditOnce(first), a.auditOnce(second)
	if r1.Status != audit.StatusComplete || r2.Status != audit.StatusComplete {
		t.Fatalf("audits before the restart: %s, %s", r1.Status, r2.Status)
	}
	if err := a.stop(); err != nil {
		t.Fatalf("lekta serve after SIGTERM: %v\n%s", err, a.stderr)
	}
	seen := len(site.Hits())

	b := startServeProc(t, h, args...)
	for _, before := range []*audit.Report{r1, r2} {
		resp, body := b.do("GET", "/api/v1/audits/"+before.ID, "", nil)
		var got audit.Report
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || got.ID != before.ID || got.Status != before.Status {
			t.Errorf("report %s after the restart: %d %s", before.ID, resp.StatusCode, body)
		}
	}
	resp, body := b.postAPI(first)
	var cached audit.Report
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &cached) != nil || !cached.Cached || cached.ID == r1.ID || cached.URL != r1.URL {
		t.Errorf("a repeat after the restart: %d %s; want the cached result of %s under an id of its own", resp.StatusCode, body, r1.ID)
	}
	resp, body = b.postAPI(third)
	if code := serveErrorCode(t, resp, body, http.StatusTooManyRequests, true); code != "rate_limited" || !strings.Contains(string(body), "2 times in the last hour") {
		t.Errorf("a third audit of the host within the hour: %s %s; want rate_limited by 2/1h", code, body)
	}
	if n := len(site.Hits()) - seen; n != 0 {
		t.Errorf("after the restart %d requests reached the site, want none", n)
	}
}

// TestServeKilledMidAudit kills lekta serve (SIGKILL) while an audit's page
// is held at the site, with another audit queued behind it, and starts it
// again on the same data dir. The report committed before the kill is
// readable; the queued audit runs after the restart; the killed audit is
// not run again: once River takes its job back it ends error with the true
// reason, and the site saw its page requested once. An audit of the host
// submitted meanwhile is accepted and reaches the site only after the dead
// audit could no longer be running (its start plus --timeout plus 15 s).
func TestServeKilledMidAudit(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	const timeout = 5 * time.Second
	args := restartArgs(site, t.TempDir(), "--rate", "100/1m", "--timeout", timeout.String(), "--renderers", "1",
		"--rescue-after", "10s")

	a := startServeProc(t, h, args...)
	r1 := a.auditOnce("http://shop.example/index.html")
	entered, release := site.Hold(t, "/held.html")
	resp, body := a.postAPI("http://shop.example/held.html")
	held := servePendingID(t, resp, body)
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatalf("the audit never reached the page:\n%s", a.stderr)
	}
	heldAt := site.HitsOf("shop.example", "/robots.txt")
	resp, body = a.postAPI("http://other.example/index.html")
	queued := servePendingID(t, resp, body) // the one renderer is busy
	killed := time.Now()
	a.kill()
	release()

	b := startServeProc(t, h, args...)
	if got := b.waitReport(r1.ID); got.ID != r1.ID || got.Status != r1.Status {
		t.Errorf("the report committed before the kill: %+v", got)
	}
	if r := b.waitReport(queued); r.Status != audit.StatusComplete {
		t.Errorf("the audit queued at the kill: %s (%s), want complete after the restart", r.Status, r.Reason)
	}
	// The dead audit still holds the host: the next one is accepted for
	// later and reaches the site only once the dead one could not be
	// running any more.
	const next = "http://shop.example/js-title.html"
	resp, body = b.postAPI(next)
	id := servePendingID(t, resp, body)
	if r := b.waitReport(id); r.Status != audit.StatusComplete {
		t.Errorf("the audit after the dead lease: %s (%s)", r.Status, r.Reason)
	}
	starts := site.HitsOf("shop.example", "/robots.txt")
	if len(heldAt) == 0 || len(starts) == 0 {
		t.Fatalf("no robots.txt reads at the site")
	}
	bound := heldAt[len(heldAt)-1].Start.Add(timeout + 15*time.Second - time.Second)
	if last := starts[len(starts)-1].Start; last.Before(bound) {
		t.Errorf("the next audit of the host reached it %s after the dead one started, want at least %s",
			last.Sub(heldAt[len(heldAt)-1].Start).Round(100*time.Millisecond), timeout+15*time.Second)
	}
	t.Logf("the host was audited again %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	// River takes the dead job back: it ends error, never run again.
	lost := b.waitReportFor(held, 2*time.Minute)
	if lost.Status != audit.StatusError || lost.Reason != audit.ReasonLost {
		t.Errorf("the killed audit: %s (%q), want error with %q", lost.Status, lost.Reason, audit.ReasonLost)
	}
	if n := len(site.HitsOf("shop.example", "/held.html")); n != 1 {
		t.Errorf("the held page was requested %d times, want once (never run again)", n)
	}
	t.Logf("the killed audit ended error %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	if err := b.stop(); err != nil {
		t.Errorf("lekta serve after SIGTERM: %v", err)
	}
}
