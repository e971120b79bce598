package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
)

// TestMultiProcess runs separate OS processes of the real lekta binary
// against one Redis, one PostgreSQL holding the reports and one test site,
// and checks the promises that only hold if the processes share their state
// exactly: one audit of a URL at a time across all of them, joins and cache
// hits across processes, refusals of other URLs of the busy host with the
// right reason, and a Redis that does not answer refusing the audit. Each
// process has a data dir of its own, so nothing is shared through SQLite.
func TestMultiProcess(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	redisURL, raw := redistest.Shared(t)
	h := newLektaHarness(t, chromium)
	t.Run("one audit for every process", func(t *testing.T) { multiProcessAudit(t, h, redisURL, raw) })
	t.Run("holder crashes", func(t *testing.T) { multiProcessCrash(t, h, redisURL, raw) })
	t.Run("store unreachable", func(t *testing.T) { multiProcessStoreDown(t, h) })
}

// ownDataDir is the LEKTA_DATA_DIR of one process: a directory of its own.
func ownDataDir(tb testing.TB) string { return "LEKTA_DATA_DIR=" + tb.TempDir() }

// lektaHarness is a built lekta binary and a browser wrapper that logs
// every launch before it runs the real Chromium.
type lektaHarness struct {
	bin      string
	browser  string
	launches string
}

func newLektaHarness(tb testing.TB, chromium string) *lektaHarness {
	tb.Helper()
	dir := tb.TempDir()
	h := &lektaHarness{
		bin:      filepath.Join(dir, "lekta"),
		browser:  filepath.Join(dir, "chromium-logged"),
		launches: filepath.Join(dir, "launches"),
	}
	// Without -race: the processes are under test, not the detector, and
	// this builds faster on a busy machine.
	build := exec.Command("go", "build", "-o", h.bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	script := fmt.Sprintf("#!/bin/sh\necho launch >> '%s'\nexec '%s' \"$@\"\n", h.launches, chromium)
	if err := os.WriteFile(h.browser, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return h
}

// launchCount is how many times a process started the browser.
func (h *lektaHarness) launchCount(tb testing.TB) int {
	tb.Helper()
	b, err := os.ReadFile(h.launches)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Count(string(b), "launch\n")
}

// lektaProc is one running "lekta audit".
type lektaProc struct {
	name   string
	cmd    *exec.Cmd
	stdout serveBuf // read by the test while the process writes
	stderr serveBuf
	done   chan struct{}
}

// procResult is how a process ended.
type procResult struct {
	code   int
	report *audit.Report // nil when stdout held no report
	stderr string
}

// start runs "lekta audit --json" with args and env (besides the
// process's own, minus any LEKTA_* setting) until it exits; it is killed
// if the test ends first.
func (h *lektaHarness) start(tb testing.TB, name string, env, args []string) *lektaProc {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	p := &lektaProc{name: name, done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, h.bin, append([]string{"audit", "--json", "--chromium", h.browser}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEKTA_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// exited reports whether the process has ended.
func (p *lektaProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// result waits for the process and decodes its report.
func (p *lektaProc) result(tb testing.TB) procResult {
	tb.Helper()
	select {
	case <-p.done:
	case <-time.After(3 * time.Minute):
		tb.Fatalf("%s did not exit", p.name)
	}
	res := procResult{code: p.cmd.ProcessState.ExitCode(), stderr: p.stderr.String()}
	if out := p.stdout.String(); out != "" {
		r, err := audit.Decode([]byte(out))
		if err != nil {
			tb.Fatalf("%s printed no report (%v):\n%s\nstderr:\n%s", p.name, err, p.stdout.String(), res.stderr)
		}
		res.report = r
	}
	return res
}

// multiProcessAudit: two processes race for one URL while its page is
// held, two more arrive, and one asks for another URL of the host; once
// the page answers, two more come late. Exactly one audit reaches the site.
func multiProcessAudit(t *testing.T, h *lektaHarness, redisURL string, raw *redis.Client) {
	site := testsite.Start(t)
	site.SetRobots("shop.example", http.StatusOK, "User-agent: *\nAllow: /\n")
	entered, release := site.Hold(t, "/held.html")
	prefix := redistest.Prefix(t, raw)
	// The prefix comes through the environment, testing that fallback too.
	// The limits are the production ones: while the audit runs, another URL
	// is refused for the 1/1m window, whose wait (a minute) is longer than
	// the lease's (30 s, renewed every 10 s). The late processes start a
	// few seconds after the admission, well inside that minute.
	env := []string{"LEKTA_REDIS_PREFIX=" + prefix}
	args := append([]string{"--redis-url", redisURL, "--database-url", pgtest.Database(t), "--report-ttl", "1h"}, siteArgs(site)...)
	const page, other = "http://shop.example/held.html", "http://shop.example/index.html"
	launch := func(name, u string) *lektaProc {
		return h.start(t, name, append(env, ownDataDir(t)), slices.Concat(args, []string{u}))
	}

	same := []*lektaProc{launch("same-1", page), launch("same-2", page)}
	select {
	case <-entered:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no process reached the page:\n%s\n%s", same[0].stderr.String(), same[1].stderr.String())
	}
	same = append(same, launch("same-3", page), launch("same-4", page))
	busy := launch("other-while-running", other).result(t)
	wantRefused(t, "other URL while the host is busy", busy, "(1/1m)")
	waitJoiners(t, raw, prefix, 3, same)
	release()

	var id string
	var ran, joined int
	for _, p := range same {
		res := p.result(t)
		r := res.report
		if res.code != exitOK || r == nil || r.Status != audit.StatusComplete || r.Cached {
			t.Fatalf("%s: exit %d, report %+v\nstderr:\n%s", p.name, res.code, r, res.stderr)
		}
		if id == "" {
			id = r.ID
		}
		if r.ID != id {
			t.Errorf("%s got report %s, another process %s", p.name, r.ID, id)
		}
		if r.Joined {
			joined++
		} else {
			ran++
		}
	}
	if ran != 1 || joined != 3 {
		t.Errorf("%d processes ran the audit and %d joined it, want 1 and 3", ran, joined)
	}

	late, lateOther := launch("same-late", page), launch("other-late", other)
	res := late.result(t)
	if res.code != exitOK || res.report == nil || !res.report.Cached || res.report.ID == id || res.report.URL != page {
		t.Errorf("late process: exit %d, report %+v; want the cached result of %s under an id of its own\nstderr:\n%s", res.code, res.report, id, res.stderr)
	}
	wantRefused(t, "other URL after the audit", lateOther.result(t), "(1/1m)")

	wantOneAuditOf(t, site, "shop.example", "/held.html")
	if n := len(site.HitsOf("shop.example", "/index.html")); n != 0 {
		t.Errorf("the refused URL was requested %d times", n)
	}
	if n := h.launchCount(t); n != 1 {
		t.Errorf("the processes started Chromium %d times, want 1 (only the one that ran the audit)", n)
	}
	if keys := redistest.Keys(t, raw, prefix); len(keys) == 0 {
		t.Errorf("no Redis keys under LEKTA_REDIS_PREFIX %q", prefix)
	}
}

// wantRefused checks a process refused by the limiter: exit 3, a
// rate_limited report with retry_after_s, and reason naming why.
func wantRefused(tb testing.TB, what string, res procResult, reason string) {
	tb.Helper()
	r := res.report
	if res.code != exitNotRun || r == nil || r.Status != audit.StatusRateLimited || r.RetryAfterS < 1 {
		tb.Errorf("%s: exit %d, report %+v; want exit 3 and a rate_limited report\nstderr:\n%s", what, res.code, r, res.stderr)
		return
	}
	// The limit is named in the report's limit field; the reason says it in words.
	limit, words := strings.Trim(reason, "()"), "This host was audited"
	if limit == "concurrency" {
		words = "Another audit of"
	}
	if r.Limit != limit || !strings.Contains(r.Reason, words) || !strings.Contains(res.stderr, words) {
		tb.Errorf("%s: limit %q, reason %q, stderr %q; want the limit %s and %q in both", what, r.Limit, r.Reason, res.stderr, limit, words)
	}
}

// waitJoiners waits until n processes subscribe to the running audit's
// completion channel (the one channel under prefix), which shows that
// they joined it rather than being answered later from the cache.
func waitJoiners(tb testing.TB, raw *redis.Client, prefix string, n int, procs []*lektaProc) {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		chans, err := raw.PubSubChannels(ctx, prefix+"*").Result()
		if err != nil {
			tb.Fatalf("pubsub channels: %v", err)
		}
		got := 0
		if len(chans) == 1 {
			subs, err := raw.PubSubNumSub(ctx, chans[0]).Result()
			if err != nil {
				tb.Fatalf("pubsub numsub: %v", err)
			}
			got = int(subs[chans[0]])
		}
		if got == n {
			return
		}
		for _, p := range procs {
			if p.exited() {
				tb.Fatalf("%s exited while the audit was held:\n%s\n%s", p.name, p.stdout.String(), p.stderr.String())
			}
		}
		if time.Now().After(deadline) || len(chans) > 1 {
			tb.Fatalf("completion channels %v with %d subscribers, want one with %d", chans, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wantOneAuditOf checks the site log for exactly one audit of path: one
// robots.txt read, one plain GET, one render navigation, and never two
// requests to the host at a time.
func wantOneAuditOf(tb testing.TB, site *testsite.Site, host, path string) {
	tb.Helper()
	plainUA := policy.DefaultIdentity().PlainUA()
	var plain, rendered int
	for _, hit := range site.HitsOf(host, path) {
		switch {
		case hit.UserAgent == plainUA:
			plain++
		case strings.Contains(hit.UserAgent, "Chrome/") && strings.HasSuffix(hit.UserAgent, policy.DefaultIdentity().RenderSuffix()):
			rendered++
		default:
			tb.Errorf("%s fetched with user agent %q", path, hit.UserAgent)
		}
	}
	if plain != 1 || rendered != 1 {
		tb.Errorf("%s fetched %d times by the plain lane and %d by the render lane, want 1 and 1", path, plain, rendered)
	}
	if n := len(site.HitsOf(host, "/robots.txt")); n != 1 {
		tb.Errorf("robots.txt read %d times, want 1", n)
	}
	if n := site.MaxConcurrent(host); n != 1 {
		tb.Errorf("%s had %d requests in flight at once, want 1", host, n)
	}
}

// multiProcessStoreDown: the real binary pointed at a Redis that does not
// listen exits 3 with one clear line on stderr, before any browser starts
// or any request reaches the site.
func multiProcessStoreDown(t *testing.T, h *lektaHarness) {
	site := testsite.Start(t)
	launches := h.launchCount(t)
	args := append([]string{"--redis-url", fmt.Sprintf("redis://127.0.0.1:%d/0", redistest.FreePort(t))}, siteArgs(site)...)
	res := h.start(t, "store-down", []string{ownDataDir(t)}, append(args, "http://shop.example/index.html")).result(t)
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	if res.code != exitNotRun || len(lines) != 1 || !strings.HasPrefix(lines[0], "lekta: ") || !strings.Contains(lines[0], "store unavailable") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 3 and one line naming the unavailable store", res.code, res.stderr)
	}
	if res.report != nil {
		t.Errorf("a report was printed: %+v", res.report)
	}
	if n := len(site.Hits()); n != 0 {
		t.Errorf("%d requests reached the site", n)
	}
	if n := h.launchCount(t) - launches; n != 0 {
		t.Errorf("the browser was started %d times", n)
	}
}

// multiProcessCrash kills the process running an audit while it is at the
// site: a process that then asks for the same URL joins the dead holder's
// audit and is told it was abandoned once the lease expires (--timeout 5s
// + 15 s), and the crashed audit still counts against the host's minute.
func multiProcessCrash(t *testing.T, h *lektaHarness, redisURL string, raw *redis.Client) {
	site := testsite.Start(t)
	entered, release := site.Hold(t, "/held.html")
	// A browser that cannot start keeps this lean: the plain lane runs
	// without it and is held at the page.
	broken := filepath.Join(t.TempDir(), "no-browser")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"LEKTA_REDIS_PREFIX=" + redistest.Prefix(t, raw)}
	args := append([]string{"--redis-url", redisURL, "--database-url", pgtest.Database(t), "--report-ttl", "1h",
		"--timeout", "5s", "--chromium", broken}, siteArgs(site)...)
	const page = "http://shop.example/held.html"
	launch := func(name string) *lektaProc {
		return h.start(t, name, append(env, ownDataDir(t)), slices.Concat(args, []string{page}))
	}

	holder := launch("holder")
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatalf("the holder never reached the page:\n%s", holder.stderr.String())
	}
	// Killed at once, well inside its plain lane's 2 s share of the deadline.
	if err := holder.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-holder.done
	release()
	joiner := launch("joiner")

	res := joiner.result(t)
	if res.code != exitNotRun || !strings.Contains(res.stderr, cache.ErrAbandoned.Error()) || res.report != nil {
		t.Errorf("joiner: exit %d, report %+v, stderr %q; want exit 3 saying the audit was abandoned", res.code, res.report, res.stderr)
	}
	wantRefused(t, "the same URL after the crash", launch("after").result(t), "(1/1m)")
	if n := len(site.HitsOf("shop.example", "/held.html")); n != 1 {
		t.Errorf("the page was requested %d times, want once (by the crashed holder)", n)
	}
}
