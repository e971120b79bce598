package server

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
)

// reportID reads the id out of a /r/{id} Location.
func reportID(tb testing.TB, resp *http.Response) string {
	tb.Helper()
	loc := resp.Header.Get("Location")
	id, ok := strings.CutPrefix(loc, "/r/")
	if !ok || !validID(id) {
		tb.Fatalf("Location %q, want /r/{id}", loc)
	}
	return id
}

func TestFormToReport(t *testing.T) {
	h := newHarness(t, gated)
	resp, b := h.postForm("http://shop.example/js-title.html", map[string]string{
		"Origin": h.ts.URL, "Sec-Fetch-Site": "same-origin"})
	wantStatus(t, resp, b, http.StatusSeeOther)
	id := reportID(t, resp)
	<-h.rend.started

	resp, b = h.do("GET", "/r/"+id, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	page := string(b)
	if !strings.Contains(page, `<meta http-equiv="refresh" content="0; url=/r/`+id+`?follow">`) || !strings.Contains(page, `data-state="running"`) {
		t.Fatalf("running report page has no progress and refresh:\n%s", page)
	}
	// The render is held at the gate: robots.txt and the plain fetch are
	// done, the render is the running step, with the elapsed time.
	steps := regexp.MustCompile(`(?s)<li class="done">reading robots.txt.*<li class="done">fetching the page without JavaScript.*<li class="doing">rendering the page in Chromium <span class="now">\(running now\)</span>.*<li class="todo">comparing the two`)
	if !steps.MatchString(page) || !regexp.MustCompile(`Running for <span id="elapsed">(less than a second|\d+ s|\d+ min)</span>`).MatchString(page) {
		t.Errorf("running report page does not show the step and the elapsed time:\n%s", page)
	}
	if resp.Header.Get("X-Robots-Tag") != "noindex, nofollow" {
		t.Errorf("X-Robots-Tag %q while running", resp.Header.Get("X-Robots-Tag"))
	}

	h.open()
	h.waitReport(id)
	resp, b = h.do("GET", "/r/"+id, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	page = string(b)
	if strings.Contains(page, "http-equiv=\"refresh\"") {
		t.Error("the finished report still refreshes")
	}
	if resp.Header.Get("X-Robots-Tag") != "noindex, nofollow" {
		t.Errorf("X-Robots-Tag %q on the report", resp.Header.Get("X-Robots-Tag"))
	}
	checks := []struct {
		name string
		re   string
	}{
		{"verdict before the table", `(?s)id="verdict".*id="text-share">\d+%</strong>.*id="link-share">\d+%</strong>.*id="fields"`},
		{"title differs, side by side, in words", `(?s)<tr id="field-title" class="differs only_render"><th scope="row" class="field">Title <span class="change">only after JavaScript</span></th><td class="plain" data-lane="Plain"><span class="empty">\(none\)</span></td><td class="render" data-lane="Rendered">Rendered title</td>`},
		{"field names in words", `<th scope="row" class="field">Meta description`},
		{"h1 same in both lanes", `<tr id="field-h1" class="same">`},
		{"finding in words, code small, message once", `(?s)<dt id="finding-title.render_only">Title: only after JavaScript <code class="code">title.render_only</code></dt>\s*<dd><p class="message">The title “Rendered title” is set by JavaScript;[^<]*</p>`},
		{"verdict box coloured by the worst finding", `<section class="verdict verdict-critical" id="verdict"`},
		{"verdict opens with the worst finding", `<p class="summary">The title “Rendered title” is set by JavaScript;`},
		{"critical group first", `(?s)sev-critical.*sev-(warning|info)`},
		{"render-only link listed", `(?s)Links only in the rendered page.*http://shop.example/cart.html`},
		{"blocked requests", `<li>image: 2</li>`},
		{"lane user agents", `StubChrome/1.0 LektaBot/0.1`},
		{"JSON link", `href="/api/v1/audits/` + id + `"`},
		{"crawlers table", `(?s)<section id="crawlers">.*<tr id="crawler-Googlebot"[^>]*><th[^>]*>Googlebot</th><td data-label="view">render</td>.*?<td data-label="title">Rendered title</td>`},
		{"non-rendering crawler gets the plain view", `<tr id="crawler-GPTBot"[^>]*><th[^>]*>GPTBot</th><td data-label="view">plain</td>`},
	}
	for _, c := range checks {
		if !regexp.MustCompile(c.re).MatchString(page) {
			t.Errorf("%s: report page does not match %s", c.name, c.re)
		}
	}
}

func TestFormErrors(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name   string
		url    string
		hdr    map[string]string
		status int
		code   string
	}{
		{"empty", "", nil, 400, codeInvalidURL},
		{"invalid", "ftp://shop.example/", nil, 400, codeInvalidURL},
		{"refused", "http://127.0.0.1/", nil, 403, codeTargetRefused},
		{"cross-site fetch metadata", "http://shop.example/", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, codeForbidden},
		{"foreign origin", "http://shop.example/", map[string]string{"Origin": "https://evil.example"}, 403, codeForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := h.postForm(tc.url, tc.hdr)
			wantStatus(t, resp, b, tc.status)
			page := string(b)
			if !strings.Contains(page, `id="url-error"`) || !strings.Contains(page, `data-code="`+tc.code+`"`) {
				t.Fatalf("form without the error next to the field (code %s):\n%s", tc.code, page)
			}
			if !strings.Contains(page, `<input id="url" name="url"`) {
				t.Error("the error page is not the form")
			}
		})
	}
	if n := len(h.site.Hits()); n != 0 {
		t.Errorf("refused form submissions reached the site %d times", n)
	}
	t.Run("rate limited", func(t *testing.T) {
		resp, b := h.postForm("http://other.example/index.html", nil)
		wantStatus(t, resp, b, http.StatusSeeOther)
		// The host is charged when the audit starts, not when it queues.
		h.waitReport(strings.TrimPrefix(resp.Header.Get("Location"), "/r/"))
		resp, b = h.postForm("http://other.example/js-title.html", nil)
		wantStatus(t, resp, b, http.StatusTooManyRequests)
		if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `data-code="rate_limited"`) {
			t.Errorf("rate-limited form: Retry-After %q\n%s", resp.Header.Get("Retry-After"), b)
		}
	})
	t.Run("store down", func(t *testing.T) {
		h.store.down.Store(true)
		defer h.store.down.Store(false)
		resp, b := h.postForm("http://c.example/", nil)
		wantStatus(t, resp, b, http.StatusServiceUnavailable)
		if resp.Header.Get("Retry-After") == "" || strings.Contains(string(b), "dial") {
			t.Errorf("store-down form: Retry-After %q, internals shown: %v", resp.Header.Get("Retry-After"), strings.Contains(string(b), "dial"))
		}
	})
}

func TestSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/", "/bot", "/r/AAAAAAAAAAAAAAAAAAAAAAAAAA", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA", "/static/style.css", "/healthz", "/metrics", "/nowhere"} {
		t.Run(p, func(t *testing.T) {
			resp, _ := h.do("GET", p, "", nil)
			want := map[string]string{
				"Content-Security-Policy": contentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"X-Frame-Options":         "DENY",
			}
			for k, v := range want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
	// The pages load nothing from elsewhere and need no script.
	_, b := h.do("GET", "/", "", nil)
	if regexp.MustCompile(`(?i)<script|src="https?:|href="https?://[^"]*\.css`).Match(b) {
		t.Errorf("the form page references scripts or remote assets:\n%s", b)
	}
	if !strings.Contains(contentSecurityPolicy, "frame-ancestors 'none'") || strings.Contains(contentSecurityPolicy, "script-src") {
		t.Errorf("CSP %q", contentSecurityPolicy)
	}
}

func TestUnknownReportPage(t *testing.T) {
	h := newHarness(t)
	resp, b := h.do("GET", "/r/AAAAAAAAAAAAAAAAAAAAAAAAAA", "", nil)
	wantStatus(t, resp, b, http.StatusNotFound)
	if resp.Header.Get("X-Robots-Tag") == "" || !strings.Contains(string(b), "No such report") {
		t.Errorf("404 report page: X-Robots-Tag %q\n%s", resp.Header.Get("X-Robots-Tag"), b)
	}
}

func TestBotPageFollowsPolicy(t *testing.T) {
	cases := []struct {
		name   string
		policy func(*Policy)
		want   []string
	}{
		{"defaults", func(*Policy) {}, []string{
			"at most 1 audit at a time", "at most 1 started per 1 minute", "at most 5 started per 1 hour",
			`<span id="cache-ttl">15 minutes</span>`, `<span id="timeout-value">20 seconds</span>`,
			`<span id="report-ttl">30 days</span>`, "lost sooner when it stops", "At most 5 redirects",
			"Mozilla/5.0 (compatible; LektaBot/0.1; +https://lekta.dev/bot)",
			"StubChrome/1.0 LektaBot/0.1 (+https://lekta.dev/bot)",
			"User-agent: LektaBot\nDisallow: /", "in its own memory", "at most 1000 submitted per 1 minute",
			"link-local addresses.",
			"at most 3 times after it first loads, and at most 20 documents load into its frames",
			"only <code>GET</code> and <code>HEAD</code> requests reach your server",
			"No <code>Cookie</code> or <code>Authorization</code> header is ever sent",
		}},
		{"changed", func(p *Policy) {
			p.Limits.Windows = []cache.Window{{N: 2, Per: 90 * time.Second}}
			p.Limits.Concurrency = 3
			p.Limits.CacheTTL = time.Hour
			p.Timeout = 45 * time.Second
			p.Scope = ScopeInstances
			p.ReportsDurable = true
			p.Contact = "mailto:bots@lekta.dev"
			p.PrivateAllowed = true
		}, []string{
			"at most 3 audits at a time", "at most 2 started per 1 minute 30 seconds",
			`<span id="cache-ttl">1 hour</span>`, `<span id="timeout-value">45 seconds</span>`,
			"they share one store", `are deleted after <span id="report-ttl">30 days</span>`, `<a id="contact" href="mailto:bots@lekta.dev">bots@lekta.dev</a>`,
			"explicitly allowed for local testing",
		}},
		{"one machine", func(p *Policy) {
			p.Scope = ScopeMachine
			p.ReportsDurable = true
		}, []string{
			"of the lekta command line on its machine (they share one database)",
			`are deleted after <span id="report-ttl">30 days</span>`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *harnessConfig) { tc.policy(&c.Policy) })
			resp, b := h.do("GET", "/bot", "", nil)
			wantStatus(t, resp, b, http.StatusOK)
			page := html.UnescapeString(string(b))
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("/bot lacks %q", w)
				}
			}
		})
	}
}

func TestMetricsCount(t *testing.T) {
	h := newHarness(t)
	resp, b := h.post("http://shop.example/js-title.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	h.waitReport(decode[pending](t, b).ID)
	h.post("http://shop.example/js-title.html") // cached
	h.post("http://shop.example/index.html")    // 1/1m window
	h.postForm("http://10.1.2.3/", nil)         // refused
	h.postForm("", nil)                         // no address
	h.do("POST", "/api/v1/audits", "{", map[string]string{"Content-Type": "application/json"})
	_, m := h.do("GET", "/metrics", "", nil)
	for _, want := range []string{
		`lekta_audits_total{outcome="complete",trigger="api"} 1`,
		`lekta_submissions_total{outcome="queued",trigger="api"} 1`,
		`lekta_submissions_total{outcome="cached",trigger="api"} 1`,
		`lekta_submissions_total{outcome="rate_limited",trigger="api"} 1`,
		`lekta_submissions_total{outcome="target_refused",trigger="form"} 1`,
		`lekta_submissions_total{outcome="invalid_url",trigger="form"} 1`,
		`lekta_submissions_total{outcome="bad_request",trigger="api"} 1`,
		`lekta_outbound_requests_total{lane="robots",status="4xx"} 1`,
		`lekta_limiter_refusals_total{reason="1/1m"} 1`,
		`lekta_cache_hits_total 1`,
		`lekta_lane_duration_seconds_count{lane="plain"} 1`,
		`lekta_lane_duration_seconds_count{lane="render"} 1`,
		`lekta_render_stage_seconds_count{stage="context"} 1`,
		`lekta_render_stage_seconds_count{stage="navigate"} 1`,
		`lekta_render_stage_seconds_count{stage="document_request"} 1`,
		`lekta_render_stage_seconds_count{stage="load"} 1`,
		`lekta_render_stage_seconds_count{stage="settle"} 1`,
		`lekta_render_stage_seconds_count{stage="snapshot"} 1`,
		`lekta_outbound_requests_total{lane="plain",status="2xx"} 1`,
		`lekta_outbound_requests_total{lane="render",status="2xx"} 1`,
		`lekta_queue_depth 0`,
		`lekta_browser_contexts_in_use 0`,
		`lekta_outbound_requests_total{lane="render",status="unrecorded"} 2`,
	} {
		if !strings.Contains(string(m), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\nlekta_build_info\{go_version="go[^"]+",revision="[^"]+",version="[^"]+"\} 1\n`).Match(m) {
		t.Errorf("/metrics has no lekta_build_info gauge")
	}
	if regexp.MustCompile(`lekta_audits_total\{outcome="(cached|rate_limited|target_refused|queued)"`).Match(m) {
		t.Errorf("submissions are counted as audits")
	}
}

// TestBotPolicyPage: /bot against the published operator policy — the
// version and date in force with the dated log, the basis, the final URL
// graded, when robots.txt changes take effect, the example groups, the
// Crawl-delay note, the verification section, what Disallow does (never
// "keeps LektaBot away" unqualified), the typical duration (configured
// bounds, then measured here), and the contact or its absence.
func TestBotPolicyPage(t *testing.T) {
	h := newHarness(t)
	changes, err := policyChanges()
	if err != nil {
		t.Fatal(err)
	}
	resp, b := h.do("GET", "/bot", "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	page := string(b)
	for _, want := range []string{
		"Policy version <strong>" + changes[0].Version + "</strong>, in force since <time datetime=\"" + changes[0].Date.Format(time.DateOnly) + "\">",
		"RFC 9309", "§2.2", "RFC 9110", "§15.3.1",
		"The final URL after redirects is the one graded",
		"take effect on the next fresh audit",
		"User-agent: LektaBot\nDisallow: /admin/\nDisallow: /checkout/\nAllow: /",
		`id="crawl-delay"`, "publishes no list of source addresses", "no reverse-DNS zone",
		"a scheduled re-audit of a disallowed URL is skipped entirely",
		"the block is written at the top of its report",
		`<span id="typical-value">5 s to 30 s</span> (the configured bounds`,
		`<span id="no-contact">the operator of this instance has not published a contact</span>`,
		"2026-12-01</time> · version 1.2</dt><dd>While rendering, only GET and HEAD",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/bot lacks %q", want)
		}
	}
	for _, bad := range []string{"keeps LektaBot away", "keep LektaBot away", "stricter than any"} {
		if strings.Contains(page, bad) {
			t.Errorf("/bot says %q", bad)
		}
	}
	// Measured figures replace the bounds once enough audits ran here.
	for i := range durationsEnough {
		h.srv.durations.add(time.Duration(2+i%3) * time.Second)
	}
	_, b = h.do("GET", "/bot", "", nil)
	if !strings.Contains(string(b), `<span id="typical-value">3 s to 4 s</span> (the median to the 95th percentile of the last 20 audits`) {
		t.Errorf("/bot does not show the measured duration:\n%s", b)
	}
}

func TestPolicyChangeLog(t *testing.T) {
	changes, err := policyChanges()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range changes {
		if c.Version == "" || c.What == "" || c.Date.IsZero() {
			t.Errorf("entry %d incomplete: %+v", i, c)
		}
		if i > 0 && c.Version == changes[i-1].Version {
			t.Errorf("version %s listed twice", c.Version)
		}
	}
}
