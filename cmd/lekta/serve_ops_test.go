package main

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

func TestServeBotPageFollowsFlags(t *testing.T) {
	site := testsite.Start(t)
	s := startServe(t, site, []string{"shop.example"},
		"--rate", "2/1m,7/1h", "--per-host-concurrency", "2", "--cache-ttl", "20m",
		"--timeout", "40s", "--report-ttl", "72h", "--contact", "mailto:ops@lekta.example")
	_, b := s.do("GET", "/bot", "", nil)
	page := html.UnescapeString(string(b))
	for _, want := range []string{
		"at most 2 audits at a time", "at most 2 started per 1 minute", "at most 7 started per 1 hour",
		`<span id="cache-ttl">20 minutes</span>`, `<span id="timeout-value">40 seconds</span>`,
		`<span id="report-ttl">3 days</span>`, `href="mailto:ops@lekta.example"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/bot lacks %q", want)
		}
	}
	for _, stale := range []string{"at most 1 started per 1 minute", "15 minutes", "75 seconds"} {
		if strings.Contains(page, stale) {
			t.Errorf("/bot still shows the default %q", stale)
		}
	}
	_, b = s.do("GET", "/", "", nil)
	if !strings.Contains(string(b), "within 20 minutes") {
		t.Error("the form does not show the cache TTL in force")
	}
}

// TestServeStoreDown stops the Redis the server uses: submissions are
// refused with 503 and Retry-After, nothing reaches the site, and /readyz
// says not ready.
func TestServeStoreDown(t *testing.T) {
	store := redistest.StartPrivate(t)
	site := testsite.Start(t)
	s := startServe(t, site, []string{"shop.example"}, "--redis-url", store.URL())
	if strings.Contains(s.stderr.String(), "no --redis-url") {
		t.Error("the per-process warning was printed although --redis-url was given")
	}
	resp, b := s.do("GET", "/readyz", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz with Redis up: %d %s", resp.StatusCode, b)
	}
	store.Kill()

	resp, b = s.postAPI("http://shop.example/index.html")
	if code := serveErrorCode(t, resp, b, http.StatusServiceUnavailable, true); code != "unavailable" {
		t.Errorf("code %q, want unavailable", code)
	}
	if msg := serveErrorMessage(t, b); !strings.Contains(msg, "Redis") {
		t.Errorf("refused with %q; want words naming Redis", msg)
	}
	resp, b = s.postForm("http://shop.example/index.html", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("form with Redis down: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if strings.Contains(string(b), "redis") || strings.Contains(string(b), "dial") {
		t.Errorf("the form shows internals: %s", b)
	}
	resp, b = s.do("GET", "/readyz", "", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"store":"failing"`) {
		t.Errorf("/readyz with Redis down: %d %s", resp.StatusCode, b)
	}
	if n := len(site.Hits()); n != 0 {
		t.Errorf("%d requests reached the site while the store was down", n)
	}
}

// TestServeQueueFullAndGracefulShutdown fills the one renderer and the one
// queue slot, sees the next submission refused with 503, then stops the
// server while the audit runs: it finishes, the queued one never reaches
// its site, and run returns nil.
func TestServeQueueFullAndGracefulShutdown(t *testing.T) {
	site := testsite.Start(t)
	entered := make(chan string, 8)
	release := make(chan struct{})
	site.Handle("/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- r.Host:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Slow</title><h1>Slow page</h1>")
	}))
	hosts := []string{"q1.example", "q2.example", "q3.example"}
	s := startServe(t, site, hosts, "--renderers", "1", "--queue", "1")

	resp, b := s.postAPI("http://q1.example/slow")
	running := servePendingID(t, resp, b)
	<-entered // q1's plain lane is at the site; the one renderer is busy
	resp, b = s.postAPI("http://q2.example/slow")
	queued := servePendingID(t, resp, b)
	resp, b = s.postAPI("http://q3.example/slow")
	if code := serveErrorCode(t, resp, b, http.StatusServiceUnavailable, true); code != "unavailable" {
		t.Errorf("full queue: code %q", code)
	}
	_, m := s.do("GET", "/metrics", "", nil)
	for _, want := range []string{"lekta_queue_depth 1\n", `lekta_submissions_total{outcome="queue_full",trigger="api"} 1` + "\n"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.stderr.String(), "shutting down") {
		if time.Now().After(deadline) {
			t.Fatalf("no shutdown began:\n%s", s.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("run returned %v while an audit was running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-stopped; err != nil {
		t.Fatalf("run returned %v after a graceful shutdown\n%s", err, s.stderr)
	}
	logs := s.stderr.String()
	if !regexp.MustCompile(`msg=audit id=` + running + ` host=q1.example trigger=api outcome=(complete|partial)`).MatchString(logs) {
		t.Errorf("the running audit did not finish before exit:\n%s", logs)
	}
	if strings.Contains(logs, "msg=audit id="+queued) {
		t.Errorf("the queued audit ended at shutdown; it stays queued for the next start:\n%s", logs)
	}
	if n := len(site.HitsOf("q2.example", "/")); n != 0 {
		t.Errorf("the queued audit reached q2.example %d times during shutdown", n)
	}
	if n := len(site.HitsOf("q3.example", "/")); n != 0 {
		t.Errorf("the refused audit reached q3.example %d times", n)
	}
}

// TestServeWarnsOfForgetfulRedis starts lekta serve on a Redis without
// persistence and with an evicting policy, and on one with both right: the
// first start warns of each, the second of neither.
func TestServeWarnsOfForgetfulRedis(t *testing.T) {
	site := testsite.Start(t)
	forgetful := redistest.StartPrivate(t, "--maxmemory-policy", "allkeys-lru")
	s := startServe(t, site, []string{"shop.example"}, "--redis-url", forgetful.URL())
	logs := s.stderr.String()
	for _, want := range []string{"warning: Redis reports appendonly no and no RDB save points", "warning: Redis maxmemory-policy is allkeys-lru"} {
		if !strings.Contains(logs, want) {
			t.Errorf("start-up on a forgetful Redis does not warn %q:\n%s", want, logs)
		}
	}
	durable := redistest.StartPrivate(t, "--appendonly", "yes")
	s = startServe(t, site, []string{"shop.example"}, "--redis-url", durable.URL())
	if logs := s.stderr.String(); strings.Contains(logs, "warning: Redis") {
		t.Errorf("start-up on a durable Redis warns:\n%s", logs)
	}
}
