package audit

import (
	"net/http"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
)

// crawlerRobots has groups for GPTBot, CCBot (kept out) and "*".
const crawlerRobots = `User-agent: GPTBot
Disallow: /private/

User-agent: CCBot
Disallow: /

User-agent: *
Disallow: /admin/
`

// crawlerPage tells googlebot noindex, and only its script sets the title.
const crawlerPage = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="googlebot" content="noindex">
<meta name="description" content="Mugs for every morning, thrown on the wheel in our workshop.">
</head><body><div id="app"></div>
<script>document.title = "Mugs | Lekta Test Shop"; document.getElementById("app").innerHTML = "<h1>Mugs</h1><p>Thrown on the wheel, glazed by hand, fired in a wood kiln for three days.</p>";</script>
</body></html>`

// TestAuditCrawlers audits the case through real Chromium and
// checks each crawler's row, the verdict sentence, and from the site's log
// that nothing was fetched as another crawler.
func TestAuditCrawlers(t *testing.T) {
	e := mustEnv(t, nil)
	e.site.SetRobots("shop.example", http.StatusOK, crawlerRobots)
	e.site.Handle("/crawlers.html", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(crawlerPage))
	}))
	r := e.audit(t, "http://shop.example/crawlers.html", TriggerCLI)
	if r.Status != StatusComplete {
		t.Fatalf("status %s (%s)", r.Status, r.Reason)
	}
	rows := map[string]compare.CrawlerRow{}
	for _, c := range r.Crawlers {
		rows[c.Token] = c
	}
	if len(rows) != len(compare.Crawlers()) {
		t.Errorf("%d crawler rows, want %d", len(rows), len(compare.Crawlers()))
	}
	const title = "Mugs | Lekta Test Shop"
	tests := []struct {
		token, group, title string
		view                compare.Lane
		allowed, mayIndex   bool
		directives          string
	}{
		{"Googlebot", "User-agent: *", title, compare.LaneRender, true, false, "meta googlebot: noindex"},
		{"Bingbot", "User-agent: *", title, compare.LaneRender, true, true, ""},
		{"Applebot", "User-agent: *", title, compare.LaneRender, true, true, ""},
		{"GPTBot", "User-agent: GPTBot", "", compare.LanePlain, true, true, ""},
		{"ClaudeBot", "User-agent: *", "", compare.LanePlain, true, true, ""},
		{"PerplexityBot", "User-agent: *", "", compare.LanePlain, true, true, ""},
		{"CCBot", "User-agent: CCBot", "", compare.LanePlain, false, false, ""},
		{"archive.org_bot", "User-agent: *", "", compare.LanePlain, true, true, ""},
	}
	for _, tc := range tests {
		c, ok := rows[tc.token]
		switch {
		case !ok:
			t.Errorf("no row for %s", tc.token)
		case c.Robots.Group != tc.group || c.Robots.Allowed != tc.allowed || !c.Robots.Known:
			t.Errorf("%s robots %+v, want group %q allowed %v", tc.token, c.Robots, tc.group, tc.allowed)
		case c.View != tc.view || c.Title != tc.title || c.MayIndex != tc.mayIndex:
			t.Errorf("%s: view %s, title %q, may index %v; want %s, %q, %v", tc.token, c.View, c.Title, c.MayIndex, tc.view, tc.title, tc.mayIndex)
		case strings.Join(c.Directives, "; ") != tc.directives:
			t.Errorf("%s directives %q, want %q", tc.token, c.Directives, tc.directives)
		}
	}
	if c := rows["CCBot"]; c.Robots.Rule != "Disallow: /" || c.Robots.Line != 5 {
		t.Errorf("CCBot rule %q line %d, want Disallow: / on line 5", c.Robots.Rule, c.Robots.Line)
	}
	if r.Verdict == nil || !strings.Contains(r.Verdict.Summary, "see no title; Googlebot, Bingbot and Applebot see the rendered one.") ||
		!strings.Contains(r.Verdict.Summary, "Googlebot is told noindex") || !strings.Contains(r.Verdict.Summary, "robots.txt keeps CCBot out") {
		t.Errorf("verdict %+v does not say what the crawlers see", r.Verdict)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "CRAWLERS  ") || !strings.Contains(text.String(), "GPTBot") {
		t.Errorf("text report has no crawlers table:\n%s", text.String())
	}
	// The rows come from LektaBot's own fetches: one robots.txt read, the
	// page once per lane with LektaBot's user agents, no crawler's.
	wantOncePerLane(t, e.site, "shop.example", "/crawlers.html")
	if n := len(e.site.HitsOf("shop.example", "/robots.txt")); n != 1 {
		t.Errorf("robots.txt read %d times, want 1", n)
	}
	for _, h := range e.site.Hits() {
		for _, c := range compare.Crawlers() {
			if strings.Contains(strings.ToLower(h.UserAgent), strings.ToLower(c.Token)) {
				t.Errorf("%s fetched with %s's token in the user agent: %q", h.Path, c.Token, h.UserAgent)
			}
		}
	}
}
