package compare

import (
	"strings"
	"testing"
)

// crawlerSPA is the case: a page telling googlebot noindex whose
// title only a script sets, and a robots.txt with groups for GPTBot and
// "*" (and CCBot, kept out).
func crawlerSPA(tb testing.TB) (map[string]RobotsVerdict, *Observed, *Observed) {
	tb.Helper()
	head := `<meta name="googlebot" content="noindex"><meta name="description" content="Mugs for every morning, thrown on the wheel.">`
	plain := snap(LanePlain, `<!doctype html><html lang="en"><head>`+head+`</head><body><div id="app"></div><script src="/app.js"></script></body></html>`)
	render := snap(LaneRender, `<!doctype html><html lang="en"><head>`+head+`<title>Mugs | Shop</title></head><body><div id="app"><h1>Mugs</h1><p>`+manyWords+`</p></div></body></html>`)
	render.Render = &RenderDetails{Settled: true}
	robots := map[string]RobotsVerdict{}
	for _, c := range Crawlers() {
		robots[c.Token] = RobotsVerdict{Known: true, Allowed: true, Group: "User-agent: *"}
	}
	robots["GPTBot"] = RobotsVerdict{Known: true, Allowed: true, Group: "User-agent: GPTBot"}
	robots["CCBot"] = RobotsVerdict{Known: true, Allowed: false, Group: "User-agent: CCBot", Rule: "Disallow: /", Line: 5}
	return robots, observed(plain), observed(render)
}

func TestSeenByCrawlers(t *testing.T) {
	t.Parallel()
	robots, plain, render := crawlerSPA(t)
	rows := SeenByCrawlers(robots, plain, render)
	if len(rows) != len(Crawlers()) {
		t.Fatalf("%d rows, want one per crawler (%d)", len(rows), len(Crawlers()))
	}
	byToken := map[string]CrawlerRow{}
	for _, r := range rows {
		byToken[r.Token] = r
		if r.Source == "" {
			t.Errorf("%s has no source for its rendering claim", r.Token)
		}
	}
	tests := []struct {
		token    string
		view     Lane
		group    string
		title    string
		noindex  bool
		mayIndex bool
		share    float64
		dirs     []string
	}{
		{"Googlebot", LaneRender, "User-agent: *", "Mugs | Shop", true, false, 1, []string{"meta googlebot: noindex"}},
		{"Bingbot", LaneRender, "User-agent: *", "Mugs | Shop", false, true, 1, []string{}},
		{"Applebot", LaneRender, "User-agent: *", "Mugs | Shop", false, true, 1, []string{}},
		{"GPTBot", LanePlain, "User-agent: GPTBot", "", false, true, 0, []string{}},
		{"ClaudeBot", LanePlain, "User-agent: *", "", false, true, 0, []string{}},
		{"CCBot", LanePlain, "User-agent: CCBot", "", false, false, 0, []string{}},
		{"archive.org_bot", LanePlain, "User-agent: *", "", false, true, 0, []string{}},
	}
	for _, tc := range tests {
		r, ok := byToken[tc.token]
		if !ok {
			t.Errorf("no row for %s", tc.token)
			continue
		}
		eq(t, tc.token+" view", r.View, tc.view)
		eq(t, tc.token+" group", r.Robots.Group, tc.group)
		eq(t, tc.token+" title", r.Title, tc.title)
		eq(t, tc.token+" noindex", r.Noindex, tc.noindex)
		eq(t, tc.token+" may index", r.MayIndex, tc.mayIndex)
		eq(t, tc.token+" share", r.ContentShare, tc.share)
		eq(t, tc.token+" directives", r.Directives, tc.dirs)
	}
	if d := byToken["Bingbot"].Description; d != "Mugs for every morning, thrown on the wheel." {
		t.Errorf("Bingbot description %q", d)
	}
	if c := byToken["CCBot"]; c.Title != "" || c.Description != "" {
		t.Errorf("CCBot may not fetch the page but sees %+v", c)
	}
	got := CrawlerSummary(rows)
	want := "robots.txt keeps CCBot out; Googlebot is told noindex; GPTBot, OAI-SearchBot and 8 more see no title; Googlebot, Bingbot and Applebot see the rendered one."
	eq(t, "summary", got, want)
}

// TestSeenByCrawlersDirectives: X-Robots-Tag scoped to one crawler applies
// to it alone, generic directives to all, each from its own view's headers.
func TestSeenByCrawlersDirectives(t *testing.T) {
	t.Parallel()
	plain, render := snap(LanePlain, doc("", "")), snap(LaneRender, doc("", ""))
	plain.Header = Header{"X-Robots-Tag": {"gptbot: noindex", "nofollow"}}
	render.Header = Header{"X-Robots-Tag": {"nofollow"}}
	rows := SeenByCrawlers(nil, observed(plain), observed(render))
	for _, r := range rows {
		switch r.Token {
		case "GPTBot":
			eq(t, "GPTBot directives", r.Directives, []string{"X-Robots-Tag gptbot: noindex", "X-Robots-Tag: nofollow"})
			eq(t, "GPTBot may index", r.MayIndex, false)
		case "ClaudeBot", "Googlebot":
			eq(t, r.Token+" directives", r.Directives, []string{"X-Robots-Tag: nofollow"})
			eq(t, r.Token+" may index", r.MayIndex, true)
			eq(t, r.Token+" nofollow", r.Nofollow, true)
		}
	}
	if s := CrawlerSummary(rows); !strings.HasPrefix(s, "GPTBot is told noindex") {
		t.Errorf("summary %q", s)
	}
	// Same view for all and nothing different: no sentence.
	same := SeenByCrawlers(nil, observed(snap(LanePlain, doc("", ""))), observed(snap(LaneRender, doc("", ""))))
	eq(t, "summary of identical views", CrawlerSummary(same), "")
	// A missing render lane: renderers' rows say so.
	for _, r := range SeenByCrawlers(nil, observed(snap(LanePlain, doc("", ""))), nil) {
		if r.Renders != r.Missing {
			t.Errorf("%s: missing %v with the render lane missing", r.Token, r.Missing)
		}
	}
}
