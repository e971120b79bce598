package render

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"lekta.dev/lekta/compare"
)

func TestRenderContent(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	url := "http://" + host + "/p/content.html"
	snap, err := renderPage(t, b, Request{URL: url}, 30*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for _, want := range []string{
		"<!DOCTYPE html>", `<html lang="en">`,
		"<title>JS title</title>", `content="JS description"`, "fetched-by-script",
		`<template shadowrootmode="open"><p>shadow-open-text</p>`,
		`<template shadowrootmode="open"><span>nested-shadow-text</span></template>`,
	} {
		if !bytes.Contains(snap.Body, []byte(want)) {
			t.Errorf("body lacks %q", want)
		}
	}
	if bytes.Contains(snap.Body, []byte(`shadowrootmode="closed"`)) {
		t.Errorf("body has the content of a closed shadow root")
	}

	// The page was fetched once, with the exact user agent; nothing else
	// but the data it fetches was asked of the site or the analytics hosts.
	hits := s.hitsFor(host)
	if got := paths(hits); !slices.Equal(got, []string{"/data.json", "/p/content.html"}) {
		t.Errorf("site got %v, want only the page and its data", got)
	}
	ua := b.UserAgent()
	if !strings.HasSuffix(ua, testSuffix) || !strings.Contains(ua, "Chrome/") {
		t.Errorf("user agent %q: want the browser's own plus %q", ua, testSuffix)
	}
	for _, h := range hits {
		if h.UA != ua {
			t.Errorf("%s sent user agent %q, want %q", h.Path, h.UA, ua)
		}
		// The browser's default languages, whichever binary runs.
		if h.Lang != "en-US,en;q=0.9" {
			t.Errorf("%s sent Accept-Language %q, want the browser's default en-US,en;q=0.9", h.Path, h.Lang)
		}
	}
	if !strings.Contains(ua, "HeadlessChrome/") || !regexp.MustCompile(`Chrome/[0-9]+\.0\.0\.0 `).MatchString(ua) {
		t.Errorf("user agent %q: want HeadlessChrome with the major version only, as the browser's headless mode sends", ua)
	}
	if trackers := s.hitsMatching(func(h hit) bool { return trackerHost(h.Host) || h.Host == "www.facebook.com" }); len(trackers) > 0 {
		t.Errorf("analytics hosts were contacted: %v", trackers)
	}

	want := map[string]int{ReasonAnalytics: 4, ReasonFont: 1, ReasonMedia: 2, ReasonBeacon: 1}
	for reason, n := range want {
		if got := snap.Render.Blocked[reason]; got != n {
			t.Errorf("blocked %s = %d, want %d (all: %v)", reason, got, n, snap.Render.Blocked)
		}
	}
	// img.png, picture (no extension), the <picture> source, bg.png, the icon.
	if got := snap.Render.Blocked[ReasonImage]; got < 4 {
		t.Errorf("blocked images = %d, want at least 4 (all: %v)", got, snap.Render.Blocked)
	}
	if !slices.ContainsFunc(snap.Render.BlockedURLs, func(r compare.BlockedRequest) bool {
		return r.Reason == ReasonImage && strings.HasSuffix(r.URL, "/picture")
	}) {
		t.Errorf("blocked URLs lack the image without an extension: %v", snap.Render.BlockedURLs)
	}

	checks := []struct {
		name string
		ok   bool
	}{
		{"lane", snap.Lane == compare.LaneRender},
		{"requested URL", snap.RequestedURL == url},
		{"final URL", snap.FinalURL == url},
		{"status", snap.Status == 200},
		{"header", snap.Header.Get("X-Test-Header") == "from-site"},
		{"content type", snap.ContentType == "text/html"},
		{"charset", snap.Charset == "utf-8"},
		{"user agent", snap.UserAgent == ua},
		{"settled", snap.Render.Settled},
		{"bytes", snap.Bytes == int64(len(snap.Body)) && !snap.Truncated},
		{"requests", snap.Render.Requests >= 2+total(snap.Render.Blocked)},
		{"timings", snap.Timings.TTFB > 0 && snap.Timings.Total >= snap.Timings.TTFB},
		{"no navigations", snap.Render.Navigations == 0},
		{"console error", slices.Equal(snap.Render.ConsoleErrors, []string{"boom-console 42"})},
		{"exception", len(snap.Render.Exceptions) == 1 && strings.Contains(snap.Render.Exceptions[0], "boom-exception")},
		{"no failed requests", len(snap.Render.FailedRequests) == 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: wrong in %+v", c.name, snapSummary(snap))
		}
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// snapSummary is a snapshot without its body, for messages.
func snapSummary(s *compare.Snapshot) compare.Snapshot {
	c := *s
	c.Body = nil
	return c
}

func TestRenderRobots(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	var asked []string
	allow := func(u *url.URL) (bool, string) {
		asked = append(asked, u.Path)
		if strings.HasPrefix(u.Path, "/private/") {
			return false, "Disallow: /private/"
		}
		return true, ""
	}
	snap, err := renderPage(t, b, Request{URL: "http://" + host + "/p/robots.html", AllowSameOrigin: allow}, 30*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if got := paths(s.hitsFor(host)); !slices.Equal(got, []string{"/p/robots.html", "/public/ok.js"}) {
		t.Errorf("site got %v, want the page and the allowed script only", got)
	}
	if !slices.Contains(asked, "/p/robots.html") || !slices.Contains(asked, "/private/secret.js") {
		t.Errorf("AllowSameOrigin was asked for %v, want the page and both scripts", asked)
	}
	if !bytes.Contains(snap.Body, []byte("public-script-ran")) || bytes.Contains(snap.Body, []byte("private-script-ran")) {
		t.Errorf("wrong scripts ran: %s", snap.Body)
	}
	if snap.Render.Blocked[ReasonRobots] != 1 {
		t.Errorf("blocked robots = %d, want 1", snap.Render.Blocked[ReasonRobots])
	}
	wantURL := compare.BlockedRequest{URL: "http://" + host + "/private/secret.js", Reason: ReasonRobots, Rule: "Disallow: /private/"}
	if !slices.Contains(snap.Render.BlockedURLs, wantURL) {
		t.Errorf("blocked URLs %v lack %v", snap.Render.BlockedURLs, wantURL)
	}
}

func TestRenderRedirects(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	final := "http://" + host + "/p/small.html"
	second := "http://" + host + "/redirect?code=301&to=" + url.QueryEscape(final)
	first := "http://" + host + "/redirect?code=302&to=" + url.QueryEscape(second)
	snap, err := renderPage(t, b, Request{URL: first}, 30*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	want := []compare.Redirect{{URL: first, Status: 302, Location: second}, {URL: second, Status: 301, Location: final}}
	if !slices.Equal(snap.Redirects, want) {
		t.Errorf("redirects = %+v, want %+v", snap.Redirects, want)
	}
	if snap.FinalURL != final || snap.Status != 200 || snap.RequestedURL != first {
		t.Errorf("requested %s final %s status %d", snap.RequestedURL, snap.FinalURL, snap.Status)
	}
	if n := len(s.hitsFor(host)); n != 3 {
		t.Errorf("site got %d requests, want 3 (two redirects and the page)", n)
	}
}

func TestRenderRefusedTargets(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	canary := "http://127.0.0.1:" + itoa(s.canary.Port()) + "/"
	tests := []struct {
		name string
		url  string
		want error
	}{
		{"loopback literal", canary, ErrURLRefused},
		{"file scheme", "file:///etc/passwd", ErrURLRefused},
		{"chrome scheme", "chrome://crash", ErrURLRefused},
		{"data scheme", "data:text/html,<p>x</p>", ErrURLRefused},
		{"redirect to loopback", "http://" + host + "/redirect?to=" + url.QueryEscape(canary), ErrURLRefused},
		// Chromium refuses this one itself (ERR_UNSAFE_REDIRECT).
		{"redirect to a file", "http://" + host + "/redirect?to=" + url.QueryEscape("file:///etc/passwd"), ErrNavigationFailed},
		{"redirect loop", "http://" + host + "/loop", ErrNavigationFailed},
		{"six redirects", "http://" + host + "/chain?n=6", ErrNavigationFailed},
		{"host the guard refuses", "http://unreachable.test/", ErrNavigationFailed},
		{"download", "http://" + host + "/download", ErrNavigationFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := renderPage(t, b, Request{URL: tc.url}, 20*time.Second)
			if !errors.Is(err, tc.want) {
				t.Fatalf("render %s: err = %v (snapshot %v), want %v", tc.url, err, snap != nil, tc.want)
			}
		})
	}
	if got := len(s.hitsMatching(func(h hit) bool { return h.Host == host && h.Path == "/chain" })); got != 6 {
		t.Errorf("the 6-hop chain was requested %d times, want 6 (the first and five redirects)", got)
	}
	s.canary.CheckZero(t)
	// A refusal by the guard is wrapped, so callers can tell it apart.
	_, err := renderPage(t, b, Request{URL: "http://unreachable.test/"}, 20*time.Second)
	if !errors.Is(err, errTestGuard) {
		t.Errorf("guard refusal: err = %v, want it to wrap the dial error", err)
	}
}

// TestRenderWebSocket: a WebSocket is refused by the proxy, never reaches
// the site and is counted; the render settles after the page saw it close.
func TestRenderWebSocket(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	snap, err := renderPage(t, b, Request{URL: "http://" + host + "/p/ws.html"}, 20*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if !bytes.Contains(snap.Body, []byte("waiting, ws closed")) || !snap.Render.Settled {
		t.Errorf("settled %v, body %s", snap.Render.Settled, snap.Body)
	}
	if got := paths(s.hitsFor(host)); !slices.Equal(got, []string{"/p/ws.html"}) {
		t.Errorf("site got %v, want the page only", got)
	}
	if n := snap.Render.Blocked[ReasonWebSocket]; n != 1 {
		t.Errorf("blocked %v, want 1 %s", snap.Render.Blocked, ReasonWebSocket)
	}
}

func TestRenderDialogs(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/p/dialogs.html"}, 20*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if !bytes.Contains(snap.Body, []byte("after-dialogs confirm=false prompt=null")) {
		t.Errorf("dialogs were not dismissed: %s", snap.Body)
	}
	if !snap.Render.Settled {
		t.Errorf("not settled")
	}
}

func TestRenderPopups(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	var pages int
	req := Request{URL: "http://" + host + "/p/popups.html", afterSettle: func(ctx context.Context, tb *tab) {
		pages = countPages(t, tb)
	}}
	snap, err := renderPage(t, b, req, 20*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if !bytes.Contains(snap.Body, []byte("opened=0")) {
		t.Errorf("window.open was not blocked: %s", snap.Body)
	}
	if pages != 1 {
		t.Errorf("the audit's browser context had %d pages, want 1", pages)
	}
	if got := paths(s.hitsFor(host)); !slices.Equal(got, []string{"/p/popups.html"}) {
		t.Errorf("site got %v", got)
	}
}

// TestRenderPopupsOpenNothing: anchors and forms with a target other
// than the page itself, clicked or submitted by script, and window.open
// with a user gesture, open no window that loads anything: the site logs
// no request of the popup page, and the render still ends.
func TestRenderPopupsOpenNothing(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	gesture := func(ctx context.Context, tb *tab) {
		cdp.Call(ctx, tb.target, runtime.Evaluate, runtime.EvaluateParams{
			Expression:  "window.open('/p/popup-target.html?way=gesture')",
			UserGesture: new(true),
		})
		// Give a popup time to load, had it been created.
		time.Sleep(500 * time.Millisecond)
	}
	snap, err := renderPage(t, b, Request{URL: "http://" + host + "/p/popups-anchor.html", afterSettle: gesture}, 20*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if !bytes.Contains(snap.Body, []byte("clicked")) {
		t.Errorf("the page's script did not run to its end: %s", snap.Body)
	}
	var popups []string
	for _, h := range s.hitsFor(host) {
		if strings.Contains(h.Path, "popup-target") {
			popups = append(popups, h.URI)
		}
	}
	if len(popups) > 0 {
		t.Errorf("the site got %d popup requests, want 0: %q", len(popups), popups)
	}
	// 10 clicks, a form, a created anchor and the gesture: each counted.
	if n := snap.Render.Blocked[ReasonPopup]; n != 13 {
		t.Errorf("blocked popups = %d, want 13 (%v)", n, snap.Render.Blocked)
	}
}

func TestRenderNavigationCap(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	for _, route := range []string{"nav", "metarefresh", "refreshheader"} {
		t.Run(route, func(t *testing.T) {
			host := hostFor(t)
			snap, err := renderPage(t, b, Request{URL: "http://" + host + "/" + route + "?i=0"}, 30*time.Second)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			want := []string{"/" + route + "?i=0", "/" + route + "?i=1", "/" + route + "?i=2", "/" + route + "?i=3"}
			if got := paths(s.hitsFor(host)); !slices.Equal(got, want) {
				t.Errorf("site got %v, want %v", got, want)
			}
			if snap.Render.Navigations != MaxNavigations || snap.Render.Blocked[ReasonNavigation] < 1 {
				t.Errorf("navigations %d, blocked %v", snap.Render.Navigations, snap.Render.Blocked)
			}
			if !strings.HasSuffix(snap.FinalURL, "?i=3") || !bytes.Contains(snap.Body, []byte("-3</p>")) {
				t.Errorf("final URL %s, body %s", snap.FinalURL, snap.Body)
			}
		})
	}
}

func TestRenderInternalAddresses(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	for _, path := range []string{"/p/internal.html", "/p/internal-refresh.html", "/refreshto"} {
		t.Run(path, func(t *testing.T) {
			host := hostFor(t)
			snap, err := renderPage(t, b, Request{URL: "http://" + host + path}, 30*time.Second)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if !bytes.Contains(snap.Body, []byte(`id="out"`)) {
				t.Errorf("the page itself is gone: %s", snap.Body)
			}
			if snap.Render.Blocked[ReasonNavigation] < 1 {
				t.Errorf("the navigation to loopback was not refused: %v", snap.Render.Blocked)
			}
			t.Logf("blocked %v; failed %d requests", snap.Render.Blocked, len(snap.Render.FailedRequests))
		})
	}
	s.canary.CheckZero(t)
}

func itoa(n int) string { return strconv.Itoa(n) }

// countPages counts the page targets of the tab's browser context.
func countPages(tb testing.TB, t *tab) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := cdp.Call(ctx, t.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		tb.Errorf("list targets: %v", err)
		return -1
	}
	n := 0
	for _, ti := range res.TargetInfos {
		if ti.Type == "page" && ti.BrowserContextID == t.contextID {
			n++
		}
	}
	return n
}

// TestRenderOwnStatusIsNoConsoleError: a page answering 404 has its status
// in the snapshot and no console error for it (the status finding says
// it); a missing script of the page is still a console error.
func TestRenderOwnStatusIsNoConsoleError(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/gone"}, 30*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if snap.Status != 404 {
		t.Errorf("status %d, want 404", snap.Status)
	}
	failed := 0
	for _, e := range snap.Render.ConsoleErrors {
		if strings.HasPrefix(e, "Failed to load resource") {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("console errors %q: %d failed resources, want one: the missing script's 404", snap.Render.ConsoleErrors, failed)
	}
}
