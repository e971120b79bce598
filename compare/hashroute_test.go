package compare

import (
	"strings"
	"testing"
)

// TestHashRouteAnchors: an href whose fragment is a route (#/..., #!...)
// of this page is uncrawlable as hash_route, with a listener or without,
// in either lane; a plain #section stays an in-page target, not a link.
func TestHashRouteAnchors(t *testing.T) {
	t.Parallel()
	const mark = "data-lekta-listener-0123abcd"
	tests := []struct {
		name, body string
		lane       Lane
		reason     string // "" = no uncrawlable anchor
		links      int
	}{
		{"slash_route", `<a href="#/guide">Guide</a>`, LanePlain, "hash_route", 0},
		{"slash_route_rendered", `<a href="#/guide">Guide</a>`, LaneRender, "hash_route", 0},
		{"hashbang_route", `<a href="#!/guide">Guide</a>`, LanePlain, "hash_route", 0},
		{"hashbang_without_slash", `<a href="#!guide">Guide</a>`, LanePlain, "hash_route", 0},
		{"root_route", `<a href="#/">Home</a>`, LanePlain, "hash_route", 0},
		{"route_with_onclick", `<a href="#/guide" onclick="go()">Guide</a>`, LanePlain, "hash_route", 0},
		{"route_with_listener_mark", `<a href="#/guide" ` + mark + `>Guide</a>`, LaneRender, "hash_route", 0},
		{"route_of_this_page_url", `<a href="http://shop.example/page#/guide">Guide</a>`, LanePlain, "hash_route", 0},
		{"route_of_this_page_path", `<a href="/page#!/guide">Guide</a>`, LanePlain, "hash_route", 0},
		{"route_on_another_page_is_a_link", `<a href="/docs#/guide">Guide</a>`, LanePlain, "", 1},
		{"role_button_route_exempt", `<a role="button" href="#/menu">Menu</a>`, LanePlain, "", 0},
		{"section_dropped", `<a href="#section">Section</a>`, LanePlain, "", 0},
		{"section_of_this_page_is_a_link", `<a href="/page#section">Section</a>`, LanePlain, "", 1},
		{"bare_hash_dropped", `<a href="#">Top</a>`, LanePlain, "", 0},
		{"bare_hash_with_onclick", `<a href="#" onclick="go()">Buy</a>`, LanePlain, "script_fragment", 0},
		{"section_with_onclick", `<a href="#buy" onclick="go()">Buy</a>`, LanePlain, "script_fragment", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := snap(tc.lane, doc("", tc.body))
			if tc.lane == LaneRender {
				s.Render = &RenderDetails{ListenerMark: mark}
			}
			p := Extract(s)
			got := ""
			if len(p.UncrawlableLinks) > 0 {
				got = p.UncrawlableLinks[0].Reason
			}
			if got != tc.reason || p.UncrawlableCount != len(p.UncrawlableLinks) || len(p.Links) != tc.links {
				t.Errorf("reason %q (%d uncrawlable: %+v), %d links; want %q, %d links",
					got, p.UncrawlableCount, p.UncrawlableLinks, len(p.Links), tc.reason, tc.links)
			}
		})
	}
}

// TestHashRouteMessage: the links.uncrawlable warning names the hash-route
// pattern with an example href, quoted and clipped as page text is, and
// keeps the old words for the other reasons.
func TestHashRouteMessage(t *testing.T) {
	t.Parallel()
	routes := `<a href="#/guide">Guide</a><a href="#/api">API</a><a href="#!/faq">FAQ</a>`
	long := "#/" + strings.Repeat("a", 100)
	tests := []struct {
		name, plain, render string
		lane                Lane
		want, not           []string
	}{
		{name: "routes in both lanes", plain: routes, render: routes,
			want: []string{"3 anchors (for example “#/guide”) in both the server HTML and the rendered page are hash routes that crawlers do not follow: the fragment after # never reaches the server",
				"Give each route a real URL (history API routing)"},
			not: []string{"javascript:"}},
		{name: "one route written by scripts", plain: "", render: `<a href="#/guide">Guide</a>`, lane: LaneRender,
			want: []string{"1 anchor (for example “#/guide”) in the rendered page is a hash route that crawlers do not follow"}},
		{name: "routes among other anchors", plain: routes + `<a href="javascript:go()">Go</a>`, render: routes + `<a href="javascript:go()">Go</a>`,
			want: []string{"4 anchors (for example “javascript:go()”, a javascript: address) in both the server HTML and the rendered page cannot be followed by crawlers",
				"3 of them are hash routes (for example “#/guide”): the fragment after # never reaches the server",
				"history API routing"}},
		{name: "routes in one lane, other anchors in the other", plain: `<a href="javascript:go()">Go</a>`, render: routes,
			want: []string{"1 anchor (for example “javascript:go()”, a javascript: address) in the server HTML and 3 anchors (for example “#/guide”) in the rendered page cannot be followed",
				"some of them are hash routes (for example “#/guide”)"}},
		{name: "long route clipped", plain: `<a href="` + long + `">Long</a>`, render: `<a href="` + long + `">Long</a>`,
			want: []string{"(for example “#/" + strings.Repeat("a", 77) + "…”)", "is a hash route"}},
		{name: "no routes keep the old words", plain: `<a href="javascript:go()">Go</a>`, render: `<a href="javascript:go()">Go</a>`,
			want: []string{"1 anchor (for example “javascript:go()”, a javascript: address) in both the server HTML and the rendered page cannot be followed by crawlers (javascript:, file: or ftp: hrefs, anchors without href driven by an event listener). Use <a href> with a real URL."},
			not:  []string{"hash route", "history API"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runDiffCase(pair(doc("", tc.plain), doc("", tc.render), nil))
			var msg string
			for _, f := range res.Findings {
				if f.Code == CodeLinksUncrawlable && f.Lane == tc.lane {
					msg = f.Message
				}
			}
			if msg == "" {
				t.Fatalf("no %s finding in lane %q; got %s", CodeLinksUncrawlable, tc.lane, codesOf(res))
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q\ndoes not say %q", msg, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(msg, w) {
					t.Errorf("message %q\nsays %q", msg, w)
				}
			}
		})
	}
}
