package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// auditCLI runs "lekta audit" with the test site's hosts mapped and a data
// dir of its own (so each call starts with empty windows and cache), and
// returns the exit status, stdout and stderr.
func auditCLI(t *testing.T, site *testsite.Site, args ...string) (int, string, string) {
	t.Helper()
	return auditCLIIn(t, site, t.TempDir(), args...)
}

// auditCLIIn is auditCLI on the data dir dir, which calls may share.
func auditCLIIn(t *testing.T, site *testsite.Site, dir string, args ...string) (int, string, string) {
	t.Helper()
	resolve, allow := site.ResolveFlags()
	full := []string{"audit", "--allow-addr", allow, "--timeout", "30s", "--data-dir", dir}
	for _, r := range resolve {
		full = append(full, "--resolve", r)
	}
	full = append(full, args...)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), full, func(string) string { return "" }, &stdout, &stderr)
	return exitCode(err, &stderr), stdout.String(), stderr.String()
}

func TestAuditCLI(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	site := testsite.Start(t)
	site.SetRobots("other.example", http.StatusServiceUnavailable, "")

	t.Run("json report", func(t *testing.T) {
		code, out, errOut := auditCLI(t, site, "--json", "http://shop.example/js-title.html")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		r, err := audit.Decode([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != audit.StatusComplete || r.Trigger != audit.TriggerCLI || r.Lanes.Render.Page == nil ||
			r.Lanes.Render.Page.Title != "Blue Stoneware Kettle | Lekta Test Shop" {
			t.Errorf("report: status %s trigger %s", r.Status, r.Trigger)
		}
	})
	t.Run("text report", func(t *testing.T) {
		code, out, errOut := auditCLI(t, site, "http://shop.example/js-title.html?text")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{"LektaBot audit of http://shop.example/js-title.html?text", "VERDICT  CRITICAL",
			"[title.render_only]", "Title — only after JavaScript", "SIDE BY SIDE", "ROBOTS.TXT  "} {
			if !strings.Contains(out, want) {
				t.Errorf("text report lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("robots.txt unreachable skips with exit 3", func(t *testing.T) {
		code, out, errOut := auditCLI(t, site, "--json", "http://other.example/index.html")
		if code != exitNotRun || !strings.Contains(errOut, "skipped") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if r, err := audit.Decode([]byte(out)); err != nil || r.Status != audit.StatusSkipped {
			t.Errorf("report %v, %v", r, err)
		}
		if hits := site.HitsOf("other.example", "/index.html"); len(hits) != 0 {
			t.Errorf("the page was fetched %d times", len(hits))
		}
	})
	// Behaviour 5 of issue 21: a rate-limited run claims nothing that did
	// not happen, and stderr says its status in words.
	t.Run("rate limited run claims nothing", func(t *testing.T) {
		dir := t.TempDir()
		if code, _, errOut := auditCLIIn(t, site, dir, "http://shop.example/index.html"); code != exitOK {
			t.Fatalf("first audit: exit %d: %s", code, errOut)
		}
		code, out, errOut := auditCLIIn(t, site, dir, "http://shop.example/index.html?again")
		if code != exitNotRun {
			t.Fatalf("second audit within the minute: exit %d, stderr %q", code, errOut)
		}
		if !strings.Contains(out, "Not run: rate limited — ") || !strings.Contains(strings.Join(strings.Fields(out), " "), "The site was not contacted.") {
			t.Errorf("the report does not say it did not run:\n%s", out)
		}
		for _, claim := range []string{"FINDINGS", "ROBOTS.TXT", "user agent", "both lanes agree"} {
			if strings.Contains(out, claim) {
				t.Errorf("the report of a run that did not happen claims %q:\n%s", claim, out)
			}
		}
		if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "lekta: Not run (rate limited): ") || strings.Contains(errOut, "rate_limited") {
			t.Errorf("stderr %q, want one line starting \"lekta: Not run (rate limited): \"", errOut)
		}
	})
}

func TestAuditCLIBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no URL", []string{"audit"}, exitBadInput, "exactly one URL"},
		{"two URLs", []string{"audit", "http://a.example/", "http://b.example/"}, exitBadInput, "exactly one URL"},
		{"malformed", []string{"audit", "http://exa mple.com/"}, exitBadInput, "Invalid URL"},
		{"not http", []string{"audit", "ftp://example.com/"}, exitBadInput, "Invalid URL"},
		{"bad --fail-on", []string{"audit", "--fail-on", "info", "http://example.com/"}, exitBadInput, "want never, critical or warning"},
		{"loopback", []string{"audit", "http://127.0.0.1/"}, exitBadInput, "loopback"},
		{"bad flag", []string{"audit", "--rate", "lots", "http://example.com/"}, exitBadInput, "--rate"},
		{"bad resolve", []string{"audit", "--resolve", "nonsense", "http://example.com/"}, exitBadInput, "--resolve"},
		{"bad render budget", []string{"audit", "--render-budget", "10ms", "http://example.com/"}, exitBadInput, "--render-budget"},
		{"bad env", []string{"audit", "http://example.com/"}, exitBadInput, "LEKTA_TIMEOUT"},
		{"browser missing", []string{"audit", "--chromium", "/nonexistent/chromium", "http://example.com/"}, exitNotRun, "chromium"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if tc.name == "bad env" && k == "LEKTA_TIMEOUT" {
					return "soon"
				}
				return ""
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, getenv, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.code, tc.msg)
			}
		})
	}
}
