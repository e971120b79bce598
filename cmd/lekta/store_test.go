package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

// siteArgs are the flags that map every test host to site.
func siteArgs(site *testsite.Site) []string {
	resolve, allow := site.ResolveFlags()
	args := []string{"--allow-addr", allow}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	return args
}

// runCLI calls run with args and an environment holding only
// LEKTA_DATA_DIR, a directory of the test's own, and returns the exit
// status, stdout and stderr.
func runCLI(tb testing.TB, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	return runCLIEnv(dataDirEnv(tb.TempDir()), args...)
}

// runCLIEnv is runCLI with the environment given.
func runCLIEnv(getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, getenv, &out, &errOut)
	return exitCode(err, &errOut), out.String(), errOut.String()
}

// dataDirEnv is an environment holding only LEKTA_DATA_DIR=dir.
func dataDirEnv(dir string) func(string) string {
	return func(k string) string {
		if k == "LEKTA_DATA_DIR" {
			return dir
		}
		return ""
	}
}

// TestAuditStoreUnavailable: with --redis-url given but Redis not
// answering, lekta audit refuses with exit 3 and one clear line, prints no
// report, starts no browser and sends nothing to the site.
func TestAuditStoreUnavailable(t *testing.T) {
	closed := fmt.Sprintf("redis://127.0.0.1:%d/0", redistest.FreePort(t))
	paused := redistest.StartPrivate(t)

	cases := []struct {
		name, url string
		before    func(t *testing.T)
	}{
		{name: "nothing listening", url: closed},
		{name: "paused", url: paused.URL(), before: func(t *testing.T) {
			paused.Pause(t, 3*time.Second)
			// UNPAUSE waits for the pause to end, so the next test finds Redis free.
			t.Cleanup(func() { paused.Unpause(t) })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := testsite.Start(t)
			if tc.before != nil {
				tc.before(t)
			}
			// /bin/true is found but is no browser: starting it would fail the run differently.
			args := append([]string{"audit", "--json", "--redis-url", tc.url, "--chromium", "/bin/true"}, siteArgs(site)...)
			code, out, errOut := runCLI(t, append(args, "http://shop.example/index.html")...)
			if code != exitNotRun {
				t.Errorf("exit %d, want %d", code, exitNotRun)
			}
			if !strings.Contains(errOut, "store unavailable") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("stderr is not one line naming the unavailable store:\n%s", errOut)
			}
			if out != "" {
				t.Errorf("a report was printed: %s", out)
			}
			if n := len(site.Hits()); n != 0 {
				t.Errorf("%d requests reached the site", n)
			}
		})
	}
}

// TestAuditStoreLostMidAudit stops Redis while lekta audit is at the site:
// the audit that ran still prints its report, and the exit status and
// message say that it was not stored.
func TestAuditStoreLostMidAudit(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	store := redistest.StartPrivate(t)
	site := testsite.Start(t)
	entered, release := site.Hold(t, "/held.html")
	args := append([]string{"audit", "--json", "--redis-url", store.URL()}, siteArgs(site)...)
	args = append(args, "http://shop.example/held.html")
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	env := dataDirEnv(t.TempDir())
	go func() {
		code, out, errOut := runCLIEnv(env, args...)
		done <- result{code, out, errOut}
	}()
	select {
	case <-entered:
	case res := <-done:
		t.Fatalf("lekta audit ended before reaching the site: exit %d\n%s", res.code, res.errOut)
	case <-time.After(time.Minute):
		t.Fatal("lekta audit never reached the site")
	}
	store.Kill()
	release()
	var res result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("lekta audit did not end")
	}
	if res.code != exitNotRun || !strings.Contains(res.errOut, "storing its report failed") || !strings.Contains(res.errOut, "store unavailable") {
		t.Errorf("exit %d, stderr %q; want exit 3 saying the report was not stored", res.code, res.errOut)
	}
	r, err := audit.Decode([]byte(res.out))
	if err != nil || r.Status != audit.StatusComplete {
		t.Errorf("the report of the audit that ran was not printed (%v):\n%s", err, res.out)
	}
	wantOneAuditOf(t, site, "shop.example", "/held.html")
}

func TestAuditRedisPrefixFlag(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		getenv map[string]string
		code   int
		msg    string
	}{
		{"braces in the flag", []string{"--redis-prefix", "a{b}:"}, nil, exitBadInput, `--redis-prefix "a{b}:"`},
		{"braces in the environment", nil, map[string]string{"LEKTA_REDIS_PREFIX": "{x}"}, exitBadInput, `--redis-prefix "{x}"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"audit", "--redis-url", "redis://127.0.0.1:1/0"}, tc.args...), "http://shop.example/")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), args, func(k string) string { return tc.getenv[k] }, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.code, tc.msg)
			}
		})
	}
}

// BenchmarkCLICacheHit measures "lekta audit --json" answered from the
// cache through run(), the whole CLI path but the process start: flags,
// opening the database (and Redis), lookup, printing. The first run fills
// the cache with a real audit; no later run starts a browser.
func BenchmarkCLICacheHit(b *testing.B) {
	serveNeeds(b, "chromium", "chromium-browser", "google-chrome")
	url, raw := redistest.Shared(b)
	for _, store := range []struct {
		name  string
		flags []string
	}{
		{"sqlite", nil},
		{"redis", []string{"--redis-url", url, "--redis-prefix", redistest.Prefix(b, raw)}},
	} {
		b.Run(store.name, func(b *testing.B) {
			site := testsite.Start(b)
			env := dataDirEnv(b.TempDir())
			args := slices.Concat([]string{"audit", "--json", "--report-ttl", "1h"}, store.flags, siteArgs(site),
				[]string{"http://shop.example/index.html"})
			code, out, errOut := runCLIEnv(env, args...)
			if code != exitOK {
				b.Fatalf("filling the cache: exit %d\n%s", code, errOut)
			}
			first, err := audit.Decode([]byte(out))
			if err != nil {
				b.Fatal(err)
			}
			hits := len(site.Hits())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				code, out, errOut := runCLIEnv(env, args...)
				if code != exitOK || !strings.Contains(out, `"cached": true`) || strings.Contains(out, first.ID) {
					b.Fatalf("exit %d, not the cached report:\n%s\n%s", code, out, errOut)
				}
			}
			b.StopTimer()
			if n := len(site.Hits()); n != hits {
				b.Fatalf("cache hits sent %d requests to the site", n-hits)
			}
		})
	}
}
