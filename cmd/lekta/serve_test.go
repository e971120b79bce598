package main

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/testsite"
)

// serveHosts are the test site names the end-to-end server maps.
var serveHosts = []string{"shop.example", "form.example", "api.example", "www.google-analytics.com"}

// TestServeEndToEnd drives one real server (real Chromium, real test site)
// through a person's browser, the form, the API and the operator pages.
func TestServeEndToEnd(t *testing.T) {
	site := testsite.Start(t)
	s := startServe(t, site, serveHosts)

	t.Run("browser submits the form and reads the report", func(t *testing.T) {
		serveBrowserTest(t, s, "http://shop.example/js-title.html")
	})
	t.Run("form redirects to the report page", func(t *testing.T) {
		resp, b := s.postForm("http://form.example/js-title.html", nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("form: %d %s", resp.StatusCode, b)
		}
		loc := resp.Header.Get("Location")
		if !regexp.MustCompile(`^/r/[A-Z2-7]{26}$`).MatchString(loc) {
			t.Fatalf("Location %q, want /r/ and a 26-character id", loc)
		}
		s.waitReport(strings.TrimPrefix(loc, "/r/"))
		resp, b = s.do("GET", loc, "", nil)
		page := html.UnescapeString(string(b))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Robots-Tag") != "noindex, nofollow" {
			t.Fatalf("report page: %d, X-Robots-Tag %q", resp.StatusCode, resp.Header.Get("X-Robots-Tag"))
		}
		for _, re := range []string{
			`<tr id="field-title" class="differs only_render">.*<td class="plain" data-lane="Plain"><span class="empty">\(none\)</span></td><td class="render" data-lane="Rendered">Blue Stoneware Kettle \| Lekta Test Shop</td>`,
			`<tr id="field-h1" class="same">.*Blue stoneware kettle.*Blue stoneware kettle`,
			`id="text-share">\d+%</strong>`,
			`<code class="code">title.render_only</code>`,
		} {
			if !regexp.MustCompile(re).MatchString(page) {
				t.Errorf("report page does not match %s", re)
			}
		}
	})
	var apiID string
	t.Run("API create, poll, long-poll", func(t *testing.T) {
		resp, b := s.postAPI("http://api.example/index.html")
		apiID = servePendingID(t, resp, b)
		if resp.Header.Get("X-Robots-Tag") == "" {
			t.Error("202 without X-Robots-Tag")
		}
		resp, b = s.do("GET", "/api/v1/audits/"+apiID, "", nil)
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
			t.Fatalf("poll: %d %s", resp.StatusCode, b)
		}
		r := s.waitReport(apiID)
		if r.Status != audit.StatusComplete || r.Trigger != audit.TriggerAPI || r.Cached {
			t.Fatalf("report: status %s trigger %s cached %v (%s)", r.Status, r.Trigger, r.Cached, r.Reason)
		}
		if ua := r.Lanes.Render.UserAgent; !strings.Contains(ua, "Chrome/") || !strings.HasSuffix(ua, "LektaBot/0.1 (+https://lekta.dev/bot)") {
			t.Errorf("render lane user agent %q", ua)
		}
		if r.Lanes.Plain.Page == nil || r.Lanes.Plain.Page.Title != "Lekta Test Shop: Kettles and Teapots" {
			t.Errorf("plain lane page %+v", r.Lanes.Plain.Page)
		}
	})
	t.Run("repeat is answered from the cache", func(t *testing.T) {
		before := len(site.HitsOf("api.example", "/index.html"))
		resp, b := s.postAPI("http://api.example/index.html")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("repeat: %d %s", resp.StatusCode, b)
		}
		if !strings.Contains(string(b), `"cached":true`) || strings.Contains(string(b), apiID) {
			t.Errorf("repeat is not a cached answer with an id of its own (first audit %s): %.300s", apiID, b)
		}
		if resp.Header.Get("X-Robots-Tag") != "noindex, nofollow" {
			t.Errorf("cached report without X-Robots-Tag")
		}
		if after := len(site.HitsOf("api.example", "/index.html")); after != before {
			t.Errorf("the cached answer fetched the page again (%d, then %d hits)", before, after)
		}
	})
	t.Run("second URL of the host waits for the host's minute", func(t *testing.T) {
		first := site.HitsOf("api.example", "/robots.txt")
		resp, b := s.postAPI("http://api.example/js-title.html")
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("second URL: %d %s, want 202", resp.StatusCode, b)
		}
		var p struct {
			Status   string    `json:"status"`
			StartsAt time.Time `json:"starts_at"`
		}
		if err := json.Unmarshal(b, &p); err != nil || p.Status != "queued" || len(first) == 0 ||
			p.StartsAt.Before(first[0].Start.Add(59*time.Second)) {
			t.Errorf("second URL: %s; want queued to start a minute after the host's first audit (%v)", b, first)
		}
		// A third would start two minutes on, past the 90 s a submitter
		// waits with --timeout 30s: refused at once.
		resp, b = s.postAPI("http://api.example/other.html")
		if code := serveErrorCode(t, resp, b, http.StatusTooManyRequests, true); code != "rate_limited" {
			t.Errorf("third URL: code %q", code)
		}
		for _, path := range []string{"/js-title.html", "/other.html"} {
			if n := len(site.HitsOf("api.example", path)); n != 0 {
				t.Errorf("%s reached the site %d times before its start", path, n)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		json := map[string]string{"Content-Type": "application/json"}
		cases := []struct {
			name, body string
			status     int
			code       string
		}{
			{"invalid URL", `{"url":"javascript:alert(1)"}`, 400, "invalid_url"},
			{"bad JSON", `{"url": "http://shop.example/`, 400, "bad_request"},
			{"missing url", `{}`, 400, "bad_request"},
			{"loopback", `{"url":"http://127.0.0.1/"}`, 403, "target_refused"},
			{"metadata address", `{"url":"http://169.254.169.254/latest/meta-data/"}`, 403, "target_refused"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				resp, b := s.do("POST", "/api/v1/audits", tc.body, json)
				if code := serveErrorCode(t, resp, b, tc.status, false); code != tc.code {
					t.Errorf("code %q, want %q", code, tc.code)
				}
			})
		}
		resp, b := s.do("GET", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA", "", nil)
		if code := serveErrorCode(t, resp, b, http.StatusNotFound, false); code != "not_found" {
			t.Errorf("unknown id: code %q", code)
		}
	})
	t.Run("security headers and the Origin check", func(t *testing.T) {
		resp, b := s.postForm("http://form.example/index.html", map[string]string{"Origin": "https://attacker.example"})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), `data-code="forbidden"`) {
			t.Errorf("cross-site form post: %d", resp.StatusCode)
		}
		for _, p := range []string{"/", "/bot", "/api/v1/openapi.json"} {
			resp, _ := s.do("GET", p, "", nil)
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
				resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") == "" {
				t.Errorf("%s: security headers missing: %v", p, resp.Header)
			}
		}
	})
	t.Run("bot page shows the defaults and the browser's user agent", func(t *testing.T) {
		_, b := s.do("GET", "/bot", "", nil)
		page := html.UnescapeString(string(b))
		for _, want := range []string{
			"Mozilla/5.0 (compatible; LektaBot/0.1; +https://lekta.dev/bot)",
			"at most 1 audit at a time", "at most 1 started per 1 minute", "at most 5 started per 1 hour",
			`<span id="cache-ttl">15 minutes</span>`, `<span id="timeout-value">30 seconds</span>`,
			"of the lekta command line on its machine (they share one database)",
			`are deleted after <span id="report-ttl">30 days</span>`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("/bot lacks %q", want)
			}
		}
		if !regexp.MustCompile(`<code id="render-ua">Mozilla/5\.0 [^<]*Chrome/[^<]* LektaBot/0\.1 \(\+https://lekta\.dev/bot\)</code>`).MatchString(page) {
			t.Errorf("/bot does not show the browser's own user agent")
		}
	})
	t.Run("readiness", func(t *testing.T) {
		resp, b := s.do("GET", "/readyz", "", nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"browser":"ok"`) || !strings.Contains(string(b), `"store":"ok"`) {
			t.Errorf("/readyz: %d %s", resp.StatusCode, b)
		}
	})
	t.Run("metrics count what happened", func(t *testing.T) {
		_, b := s.do("GET", "/metrics", "", nil)
		m := string(b)
		for _, want := range []string{
			`lekta_audits_total{outcome="complete",trigger="form"} 2`,
			`lekta_audits_total{outcome="complete",trigger="api"} 1`,
			`lekta_submissions_total{outcome="queued",trigger="api"} 2`,
			`lekta_submissions_total{outcome="cached",trigger="api"} 1`,
			`lekta_submissions_total{outcome="rate_limited",trigger="api"} 1`,
			`lekta_submissions_total{outcome="invalid_url",trigger="api"} 1`,
			`lekta_submissions_total{outcome="target_refused",trigger="api"} 2`,
			`lekta_limiter_refusals_total{reason="1/1m"} 1`,
			`lekta_cache_hits_total 1`,
			`lekta_lane_duration_seconds_count{lane="render"} 3`,
			`lekta_render_stage_seconds_count{stage="navigate"} 3`,
			`lekta_render_stage_seconds_count{stage="load"} 3`,
			`lekta_outbound_requests_total{lane="plain",status="2xx"} 3`,
			`lekta_outbound_requests_total{lane="render",status="2xx"} 3`,
			`lekta_queue_depth 1`,
		} {
			if !strings.Contains(m, want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
	t.Run("one log line per audit, without page content", func(t *testing.T) {
		logs := s.stderr.String()
		if n := strings.Count(logs, "msg=audit "); n < 8 {
			t.Errorf("%d audit log lines, want one per submission (at least 8):\n%s", n, logs)
		}
		if !regexp.MustCompile(`msg=audit id=[A-Z2-7]{26} host=api.example trigger=api outcome=complete duration_ms=\d+ plain_ms=\d+ render_ms=\d+`).MatchString(logs) {
			t.Errorf("no complete audit line with lane timings:\n%s", logs)
		}
		if strings.Contains(logs, "Blue stoneware") || strings.Contains(logs, "Kettles and Teapots") {
			t.Error("the log contains page content")
		}
		if !regexp.MustCompile(`lekta: per-host limits, the result cache and reports are kept in /\S+/lekta\.db, shared by every lekta on this machine`).MatchString(logs) {
			t.Errorf("the start-up lines do not say where the state is kept:\n%s", logs)
		}
	})
}

// serveBrowserTest opens the form in a real Chromium, submits target, waits
// for the finished report and checks what a person reads on it.
func serveBrowserTest(t *testing.T, s *served, target string) {
	exec := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exec), chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTime()

	err := chromedp.Do(ctx,
		chromedp.Navigate(s.base+"/"),
		chromedp.WaitVisible(chromedp.ID("url")),
		chromedp.SendKeys(chromedp.ID("url"), target),
		chromedp.Submit(chromedp.ID("url")),
	)
	if err != nil {
		t.Fatalf("submit the form: %v", err)
	}
	// The report page refreshes itself until the audit is done.
	for {
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("verdict") !== null`))
		if err == nil && done {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the report never finished: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	read := func(js string) string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("read %s: %v", js, err)
		}
		return v
	}
	loc := read(`location.pathname`)
	plain := read(`document.querySelector("#field-title td.plain").innerText`)
	rendered := read(`document.querySelector("#field-title td.render").innerText`)
	rowClass := read(`document.getElementById("field-title").className`)
	verdict := read(`document.getElementById("verdict").innerText`)
	textShare := read(`document.getElementById("text-share").innerText`)

	if !regexp.MustCompile(`^/r/[A-Z2-7]{26}$`).MatchString(loc) {
		t.Errorf("report address %q", loc)
	}
	if plain != "(none)" || rendered != "Blue Stoneware Kettle | Lekta Test Shop" {
		t.Errorf("title side by side: plain %q, rendered %q", plain, rendered)
	}
	if !strings.Contains(rowClass, "differs") {
		t.Errorf("the title row is not highlighted: class %q", rowClass)
	}
	if !strings.Contains(verdict, "AI fetchers that do not run JavaScript get") || !regexp.MustCompile(`^\d{1,3}%$`).MatchString(textShare) {
		t.Errorf("verdict %q, text share %q", verdict, textShare)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := filepath.Join("..", "..", "testdata", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report screenshot: %s", filepath.Join(dir, "report.png"))
}
