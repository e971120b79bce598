package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/disktest"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

// wantServeRefuses checks that a submission is answered 503 with
// Retry-After in words that name what failed (says), that /readyz says
// the store is failing, and that nothing reached the site.
func wantServeRefuses(t *testing.T, s *served, site *testsite.Site, u, says string) {
	t.Helper()
	seen := len(site.Hits())
	resp, b := s.postAPI(u)
	if code := serveErrorCode(t, resp, b, http.StatusServiceUnavailable, true); code != "unavailable" {
		t.Errorf("submission: code %q, want unavailable", code)
	}
	if msg := serveErrorMessage(t, b); !strings.Contains(msg, says) {
		t.Errorf("submission refused with %q; want words naming %q\n%s", msg, says, s.stderr)
	}
	resp, b = s.do("GET", "/readyz", "", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"store":"failing"`) {
		t.Errorf("/readyz: %d %s; want the store failing", resp.StatusCode, b)
	}
	if n := len(site.Hits()) - seen; n != 0 {
		t.Errorf("%d requests reached the site", n)
	}
}

// TestServeDiskFullMidRun fills the disk under a running server's data dir:
// submissions get 503 with Retry-After and nothing reaches the site; with
// room again, the same server audits.
func TestServeDiskFullMidRun(t *testing.T) {
	site := testsite.Start(t)
	dir := disktest.Small(t, 32<<20)
	s := startServe(t, site, []string{"shop.example"}, "--data-dir", dir)
	filler := disktest.Fill(t, dir, "filler")
	wantServeRefuses(t, s, site, "http://shop.example/index.html", "disk")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := s.auditOnce("http://shop.example/index.html"); r.Status != "complete" {
		t.Errorf("after the disk had room again: %s (%s)", r.Status, r.Reason)
	}
}

// TestServeLockedMidRun has another process hold the SQLite file's write
// lock under a running server: submissions get 503 (after the busy
// timeout), nothing reaches the site, and once the lock is gone it audits.
func TestServeLockedMidRun(t *testing.T) {
	site := testsite.Start(t)
	dir := t.TempDir()
	s := startServe(t, site, []string{"shop.example"}, "--data-dir", dir)
	t.Run("locked", func(t *testing.T) {
		startLockHolder(t, dir) // released when this subtest ends
		seen := len(site.Hits())
		resp, b := s.postAPI("http://shop.example/index.html")
		if code := serveErrorCode(t, resp, b, http.StatusServiceUnavailable, true); code != "unavailable" {
			t.Errorf("submission while locked: code %q, want unavailable", code)
		}
		if msg := serveErrorMessage(t, b); !strings.Contains(msg, "locked") {
			t.Errorf("submission while locked refused with %q; want words saying the file is locked", msg)
		}
		if n := len(site.Hits()) - seen; n != 0 {
			t.Errorf("%d requests reached the site", n)
		}
	})
	if r := s.auditOnce("http://shop.example/index.html"); r.Status != "complete" {
		t.Errorf("after the lock was released: %s (%s)", r.Status, r.Reason)
	}
}

// TestServePostgresDown runs the scale-out configuration on a private
// PostgreSQL: stopped mid-run, submissions get 503 and nothing reaches the
// site; started again, the same server audits; stopped before start-up,
// serve refuses to start. No log line or message shows the password.
func TestServePostgresDown(t *testing.T) {
	redisURL, raw := redistest.Shared(t)
	pg := pgtest.StartPrivate(t)
	dbURL := pg.Database(t)
	site := testsite.Start(t)
	s := startServe(t, site, []string{"shop.example", "other.example"},
		"--redis-url", redisURL, "--redis-prefix", redistest.Prefix(t, raw), "--database-url", dbURL, "--secrets-key-file", sharedSecretsKey(t))
	if !strings.Contains(s.stderr.String(), "shared by every instance") {
		t.Errorf("the start-up line does not say where reports are kept:\n%s", s.stderr)
	}
	before := s.auditOnce("http://shop.example/index.html")
	pg.Stop(t)
	wantServeRefuses(t, s, site, "http://other.example/index.html", "PostgreSQL")
	pg.Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, b := s.do("GET", "/api/v1/audits/"+before.ID, "", nil)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the report made before the outage: %d %s", resp.StatusCode, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := s.auditOnce("http://other.example/index.html"); r.Status != "complete" {
		t.Errorf("after PostgreSQL came back: %s (%s)", r.Status, r.Reason)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.stderr.String(), pg.Password()) {
		t.Errorf("the logs show the database password:\n%s", s.stderr)
	}

	pg.Stop(t)
	code, out, errOut := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--redis-url", redisURL, "--database-url", dbURL, "--secrets-key-file", sharedSecretsKey(t))
	if code != exitNotRun || strings.Contains(out, "serving on") || !strings.Contains(errOut, "nothing answers") {
		t.Errorf("serve with PostgreSQL down: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, pg.Password()) {
		t.Errorf("serve shows the database password:\n%s", errOut)
	}
}

// TestServeRedisAloneSaysReportsAreLocal: with --redis-url but no
// --database-url, serve says at start-up that reports stay on this machine.
func TestServeRedisAloneSaysReportsAreLocal(t *testing.T) {
	redisURL, raw := redistest.Shared(t)
	site := testsite.Start(t)
	s := startServe(t, site, []string{"shop.example"}, "--redis-url", redisURL, "--redis-prefix", redistest.Prefix(t, raw))
	if !strings.Contains(s.stderr.String(), "local to this instance") {
		t.Errorf("the start-up lines do not say that reports are local:\n%s", s.stderr)
	}
}
