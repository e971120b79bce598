package audit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// lektaRobots disallows everything for other bots and gives LektaBot its
// own group: longest match decides and Allow wins ties.
const lektaRobots = `User-agent: *
Disallow: /

User-agent: LektaBot
Disallow: /private/
Allow: /private/ok.html$
Disallow: /*.json$
Allow: /data/article.json
Disallow: /js/
Disallow: /noindex-added.html
`

func TestAuditRobots(t *testing.T) {
	e := mustEnv(t, nil)
	e.site.SetRobots("shop.example", http.StatusOK, lektaRobots)
	e.site.Handle("/old-page", http.RedirectHandler("/private/secret.html", http.StatusMovedPermanently))
	e.site.SetRobots("other.example", http.StatusOK, "User-agent: *\nDisallow: /js/\nDisallow: /private/\n")
	e.site.Handle("/to-other", http.RedirectHandler("http://other.example/spa.html?moved", http.StatusFound))
	e.site.Handle("/to-other-private", http.RedirectHandler("http://other.example/private/x.html", http.StatusFound))

	cases := []struct {
		name, path string
		trigger    Trigger
		status     Status
		allowed    bool
		rule       string
		findings   []string
		// never lists paths that must not be requested.
		never []string
	}{
		{name: "no rule matches", path: "/index.html", trigger: TriggerCLI, status: StatusComplete, allowed: true},
		{name: "disallowed same-origin script", path: "/spa.html", trigger: TriggerCLI, status: StatusComplete, allowed: true,
			findings: []string{compare.CodeRenderBlockedRobots}, never: []string{"/js/app.js"}},
		{name: "longest match allows the fetched json", path: "/fetch-content.html", trigger: TriggerCLI, status: StatusComplete, allowed: true},
		{name: "dollar anchors the allow", path: "/private/ok.html", trigger: TriggerCLI, status: StatusComplete, allowed: true, rule: "Allow: /private/ok.html$"},
		{name: "dollar does not match a longer path", path: "/private/ok.html?x=1", trigger: TriggerCLI, status: StatusComplete, allowed: false, rule: "Disallow: /private/",
			findings: []string{compare.CodeRobotsDisallowed}},
		{name: "user-triggered fetch of a disallowed page", path: "/noindex-added.html", trigger: TriggerAPI, status: StatusComplete, allowed: false,
			rule: "Disallow: /noindex-added.html", findings: []string{compare.CodeRobotsDisallowed}},
		{name: "scheduled re-audit of a disallowed page is skipped", path: "/noindex-added.html?s=1", trigger: TriggerScheduled, status: StatusSkipped, allowed: false,
			rule: "Disallow: /noindex-added.html", findings: []string{compare.CodeRobotsDisallowed}, never: []string{"/noindex-added.html?s=1"}},
		{name: "redirect to a disallowed path is not followed", path: "/old-page", trigger: TriggerCLI, status: StatusBlocked, allowed: true,
			never: []string{"/private/secret.html"}},
		{name: "a hop to another origin follows that origin's robots.txt", path: "/to-other", trigger: TriggerCLI, status: StatusComplete, allowed: true,
			findings: []string{compare.CodeRenderBlockedRobots}, never: []string{"other.example/js/app.js"}},
		{name: "a hop to a path the other origin disallows is not followed", path: "/to-other-private", trigger: TriggerCLI, status: StatusBlocked, allowed: true,
			never: []string{"other.example/private/x.html"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.site.HitsOf("shop.example", "/robots.txt"))
			otherBefore := len(e.site.HitsOf("other.example", "/robots.txt"))
			r := e.audit(t, "http://shop.example"+tc.path, tc.trigger)
			if r.Status != tc.status {
				t.Errorf("status %s (%s), want %s", r.Status, r.Reason, tc.status)
			}
			if r.Robots == nil || r.Robots.Outcome != policy.RobotsFetched {
				t.Fatalf("robots section %+v", r.Robots)
			}
			if r.Robots.Allowed != tc.allowed || r.Robots.Rule != tc.rule {
				t.Errorf("robots allowed %v by %q, want %v by %q", r.Robots.Allowed, r.Robots.Rule, tc.allowed, tc.rule)
			}
			for _, code := range tc.findings {
				if !hasFinding(r, code) {
					t.Errorf("no finding %s in %v", code, codes(r))
				}
			}
			if n := len(e.site.HitsOf("shop.example", "/robots.txt")) - before; n != 1 {
				t.Errorf("robots.txt fetched %d times in one audit, want 1", n)
			}
			if n := len(e.site.HitsOf("other.example", "/robots.txt")) - otherBefore; n > 1 {
				t.Errorf("other.example's robots.txt fetched %d times in one audit, want at most 1", n)
			}
			for _, p := range tc.never {
				host, path := "shop.example", p
				if h, rest, ok := strings.Cut(p, "/"); ok && h != "" {
					host, path = h, "/"+rest
				}
				if hits := e.site.HitsOf(host, path); len(hits) > 0 {
					t.Errorf("%s%s was requested %d times", host, path, len(hits))
				}
			}
		})
	}
	t.Run("blocked script is counted", func(t *testing.T) {
		r := e.audit(t, "http://shop.example/spa.html?again", TriggerCLI)
		if got := r.Lanes.Render.BlockedRequests["robots"]; got != 1 {
			t.Errorf("blocked_requests[robots] = %d, want 1", got)
		}
	})
}

// TestAuditRobotsReadings: a scheduled re-audit is skipped when only one
// reading of robots.txt disallows the page, Google's or RFC 9309's, and
// the report's robots section and its text say which.
func TestAuditRobotsReadings(t *testing.T) {
	cases := []struct {
		name, robots, reading, note string
	}{
		{"google_only", "User-agent: LektaBot\nSitemap: http://shop.example/s.xml\nUser-agent: OtherBot\nDisallow:\v/index.html\n",
			"google", "Only Google's reading of the file disallows this page"},
		{"rfc_only", "User-agent: *\nDisallow: /%69ndex.html\n", "rfc9309", "Only the RFC 9309 reading of the file disallows this page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustEnv(t, nil)
			e.site.SetRobots("shop.example", http.StatusOK, tc.robots)
			r := e.audit(t, "http://shop.example/index.html", TriggerScheduled)
			if r.Status != StatusSkipped || r.Robots == nil || r.Robots.Allowed {
				t.Fatalf("status %s, robots %+v; want skipped, disallowed", r.Status, r.Robots)
			}
			b, err := r.Encode()
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, b); err != nil {
				t.Fatal(err)
			}
			if want := `"reading":"` + tc.reading + `"`; !strings.Contains(compact.String(), want) {
				t.Errorf("report JSON lacks %s: %s", want, compact.String())
			}
			if strings.ContainsAny(compact.String(), "\v") || strings.Contains(compact.String(), `\u000b`) {
				t.Errorf("a vertical tab from robots.txt reached the report unescaped: %s", compact.String())
			}
			var out strings.Builder
			if err := WriteText(&out, r); err != nil {
				t.Fatal(err)
			}
			if text := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(text, tc.note) {
				t.Errorf("text report lacks %q:\n%s", tc.note, out.String())
			}
			if hits := e.site.HitsOf("shop.example", "/index.html"); len(hits) > 0 {
				t.Errorf("the page was requested %d times", len(hits))
			}
		})
	}
}

// TestAuditRobotsOneRequestOneAnswer: robots.txt decides each request as
// it reaches the site, however the page or the submitter spelled it. Two
// spellings of one request get one answer in both lanes, in the site's
// own log: the page's two spellings of /one/café/x%3Dy both arrive as
// /one/caf%C3%A9/x%3Dy (a rule for /one/café/x=y is another resource), and
// neither spelling of /one/a|b (a rule only Google's parser reads,
// written raw) arrives at all.
func TestAuditRobotsOneRequestOneAnswer(t *testing.T) {
	e := mustEnv(t, nil)
	e.site.SetRobots("shop.example", http.StatusOK, "User-agent: *\nDisallow: /one/café/x=y\nDisalow: /one/a|b\n")
	e.site.Handle("/one/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/one/page.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!DOCTYPE html><title>spellings</title><p id=out>one</p><script>
for (const u of ["/one/café/x%3Dy", "/one/caf%C3%A9/x%3Dy", "/one/a|b", "/one/a%7Cb"]) fetch(u).catch(() => {});
</script>`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	if r := e.audit(t, "http://shop.example/one/page.html", TriggerCLI); r.Status != StatusComplete {
		t.Fatalf("status %s (%s)", r.Status, r.Reason)
	}
	if n := len(e.site.HitsOf("shop.example", "/one/caf%C3%A9/x%3Dy")); n != 2 {
		t.Errorf("the site got /one/caf%%C3%%A9/x%%3Dy %d times from the page, want 2 (both spellings allowed)", n)
	}
	for _, typed := range []string{"http://shop.example/one/café/x%3Dy", "http://shop.example/one/caf%C3%A9/x%3Dy"} {
		if r := e.audit(t, typed, TriggerAPI); r.Robots == nil || !r.Robots.Allowed {
			t.Errorf("%s: robots %+v, want allowed", typed, r.Robots)
		}
	}
	for _, typed := range []string{"http://shop.example/one/a|b", "http://shop.example/one/a%7Cb"} {
		if r := e.audit(t, typed, TriggerScheduled); r.Robots == nil || r.Robots.Allowed || r.Status != StatusSkipped {
			t.Errorf("%s: status %s, robots %+v, want skipped, disallowed", typed, r.Status, r.Robots)
		}
	}
	if hits := e.site.HitsOf("shop.example", "/one/a"); len(hits) > 0 {
		t.Errorf("the site got %d requests of /one/a|b in some spelling, want 0: %v", len(hits), hits)
	}
}

func TestAuditRobotsStatuses(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		want    Status
		outcome policy.RobotsOutcome
	}{
		{"404 means no restrictions", http.StatusNotFound, StatusComplete, policy.RobotsNotFound},
		{"410 means no restrictions", http.StatusGone, StatusComplete, policy.RobotsNotFound},
		{"503 skips the audit", http.StatusServiceUnavailable, StatusSkipped, policy.RobotsUnreachable},
		{"500 skips the audit", http.StatusInternalServerError, StatusSkipped, policy.RobotsUnreachable},
		{"429 skips the audit", http.StatusTooManyRequests, StatusSkipped, policy.RobotsUnreachable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustEnv(t, nil)
			e.site.SetRobots("shop.example", tc.status, "User-agent: *\nDisallow: /\n")
			r := e.audit(t, "http://shop.example/index.html", TriggerCLI)
			if r.Status != tc.want || r.Robots.Outcome != tc.outcome || r.Robots.HTTPStatus != tc.status {
				t.Fatalf("status %s, robots %s %d; want %s, %s %d", r.Status, r.Robots.Outcome, r.Robots.HTTPStatus, tc.want, tc.outcome, tc.status)
			}
			if tc.want != StatusSkipped {
				return
			}
			if !hasFinding(r, compare.CodeRobotsUnreachable) || !strings.Contains(r.Reason, "robots.txt") {
				t.Errorf("reason %q, findings %v", r.Reason, codes(r))
			}
			if r.Lanes.Plain.Outcome != OutcomeSkipped || r.Lanes.Render.Outcome != OutcomeSkipped {
				t.Errorf("lane outcomes %s, %s; want skipped", r.Lanes.Plain.Outcome, r.Lanes.Render.Outcome)
			}
			for _, h := range e.site.Hits() {
				if h.Path != "/robots.txt" {
					t.Errorf("skipped audit requested %s", h.Path)
				}
			}
		})
	}
}

func codes(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	return out
}
