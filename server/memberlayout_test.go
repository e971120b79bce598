package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// pageLayoutScript measures a page as laid out: a word of prose broken
// across lines (more than one line of client rects), a table header cell
// on more than one line, and the page's width. Addresses, code and URL-like
// tokens may break; words may not.
const pageLayoutScript = `(() => {
  const lines = (node, start, end) => {
    const r = document.createRange();
    r.setStart(node, start);
    r.setEnd(node, end);
    return new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top))).size;
  };
  const broken = [], wrappedHeaders = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(".url, code, pre, script, style, svg")) continue;
    // Only where the style lets a word break can one be broken; elsewhere
    // a word too wide shows as sideways scroll, measured below.
    const cs = getComputedStyle(el);
    if (cs.overflowWrap === "normal" && cs.wordBreak !== "break-all" && cs.wordBreak !== "break-word") continue;
    if (lines(n, 0, n.data.length) < 2) continue;
    const re = /[^\s\-\u2010]+/g;
    let m;
    while ((m = re.exec(n.data)) !== null) {
      if (/:\/\/|^\/|@/.test(m[0]) || m[0].length > 30) continue;
      if (lines(n, m.index, m.index + m[0].length) > 1) broken.push(m[0]);
    }
  }
  for (const th of document.querySelectorAll("thead th")) {
    const r = document.createRange();
    r.selectNodeContents(th);
    const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
    if (tops.size > 1) wrappedHeaders.push(th.textContent.trim());
  }
  return {broken, wrappedHeaders, scrollWidth: document.documentElement.scrollWidth, headers: document.querySelectorAll("thead th").length};
})()`

type pageLayout struct {
	Broken         []string `json:"broken"`
	WrappedHeaders []string `json:"wrappedHeaders"`
	ScrollWidth    int      `json:"scrollWidth"`
	Headers        int      `json:"headers"`
}

// TestMemberPagesLayout lays out the sign-in page, the dashboard, the site
// page with its history, /bot, /api and /bot/verify in real Chromium at a
// 390 px phone and a 1280 px desktop: no sideways scroll, no word broken
// inside, and at desktop width every table header on one line.
func TestMemberPagesLayout(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	m, auth := h.member("ana.long.address.for.a.phone@example.com")
	var siteID string
	for i, u := range []string{"https://shop.example/products/garden/outdoor-furniture-collection-2026?colour=green", "https://a.example/", "https://b.example/blog/"} {
		s, err := h.db.AddSite(t.Context(), records.Site{MemberID: m.ID, URL: u, Schedule: []string{"daily", "6h", "weekly"}[i]}, 10, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		lane := func(title string, words int) schedule.LaneSummary {
			return schedule.LaneSummary{Title: title, H1: []string{}, JSONLDTypes: []string{}, WordCount: words, LinkCount: 4, Present: true}
		}
		runs := []schedule.Summary{
			{Status: "complete", TextShare: share(0.9), LinkShare: share(1), Plain: lane("Garden furniture", 100), Render: lane("Garden furniture", 110), Findings: []schedule.FindingKey{}},
			{Status: "complete", TextShare: share(0.42), LinkShare: share(0.8), Plain: lane("Garden furniture", 300), Render: lane("Garden furniture for every outdoor space, now in stock", 1320),
				Findings: []schedule.FindingKey{{Code: "robots.noindex_render_only", Severity: "critical"}, {Code: "canonical.render_only", Severity: "critical", Lane: "render"}}},
			{Status: "skipped", Findings: []schedule.FindingKey{{Code: "robots.disallowed", Severity: "critical"}}},
			{Status: "complete", TextShare: share(0.97), LinkShare: share(1), Plain: lane("Garden", 300), Render: lane("Garden", 310), Findings: []schedule.FindingKey{}},
		}
		h.addRuns(s.ID, time.Now().Add(-6*time.Hour), runs, []string{"complete", "complete", "skipped", "complete"})
		if i == 0 {
			siteID = s.ID
		}
	}

	bctx := mustBrowser(t, 1280, 900)
	ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()
	for _, width := range []int{390, 1280} {
		t.Run(fmt.Sprintf("sign-in at %d px", width), func(t *testing.T) {
			measure(bctx, t, width, h.ts.URL+"/members", "#key")
		})
	}
	// Sign in as a person does: the key typed into the form.
	key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
	if err := chromedp.Do(ctx, chromedp.Navigate(h.ts.URL+"/members"), chromedp.WaitVisible("#key"),
		chromedp.SendKeys("#key", key), chromedp.Submit("#key"), chromedp.WaitVisible("table.sites")); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	pages := []struct{ name, path, ready string }{
		{"dashboard", "/members/sites", "table.sites"},
		{"site page and history", "/members/sites/" + siteID, "table.history"},
		{"API keys", "/members/keys", "h1"},
		{"remove confirmation", "/members/sites/" + siteID + "/delete", "h1"},
		{"bot", "/bot", "h1"},
		{"api", "/api", "h1"},
		{"verify", "/bot/verify", "h1"},
	}
	for _, width := range []int{390, 1280} {
		for _, p := range pages {
			t.Run(fmt.Sprintf("%s at %d px", p.name, width), func(t *testing.T) {
				measure(bctx, t, width, h.ts.URL+p.path, p.ready)
			})
		}
	}
	// The webhook secret shown once after a save, on a phone: saved in
	// the browser, so the page it lands on is the one measured.
	t.Run("webhook secret at 390 px", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 900), chromedp.Navigate(h.ts.URL+"/members/sites"),
			chromedp.WaitVisible("#url"), chromedp.SendKeys("#url", "https://shop.example/secret-page"),
			chromedp.SendKeys("#webhook_url", "https://hooks.example/lekta/incoming/very-long-endpoint-name"),
			chromedp.Submit("#url"), chromedp.WaitVisible("p.note code")); err != nil {
			t.Fatalf("save a site with a webhook: %v", err)
		}
		measureHere(ctx, t, 390, h.ts.URL+"/members/sites/secret")
	})
}

// measureHere measures the page the browser is on, at url: no word
// broken inside, no sideways scroll, and at desktop width every table
// header on one line. With LEKTA_SCREENSHOTS set it keeps a screenshot.
func measureHere(ctx context.Context, t *testing.T, width int, url string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pageLayout](pageLayoutScript))
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	if len(got.Broken) > 0 {
		t.Errorf("words broken across lines: %q", got.Broken)
	}
	if got.ScrollWidth > width {
		t.Errorf("the page is %d px wide at a %d px viewport", got.ScrollWidth, width)
	}
	if width >= 1280 && len(got.WrappedHeaders) > 0 {
		t.Errorf("table headers on more than one line: %q", got.WrappedHeaders)
	}
	if dir := os.Getenv("LEKTA_SCREENSHOTS"); dir != "" {
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			name := strings.NewReplacer("/", "_", ":", "_").Replace(url[strings.LastIndex(url, "/")+1:])
			os.WriteFile(fmt.Sprintf("%s/%s-%d.png", dir, name, width), png, 0o644)
		}
	}
}

func measure(ctx context.Context, t *testing.T, width int, url, ready string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 900), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(ready))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	measureHere(ctx, t, width, url)
}
