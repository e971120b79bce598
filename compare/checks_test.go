package compare

import (
	"regexp"
	"strings"
	"testing"
)

// checkCase is one validity rule: a page that breaks it (bad), and what
// the page must say when both lanes have it (static) and when only the
// rendered page has it (scripts change the tag).
type checkCase struct {
	name string
	// head and body are added to the baseline document of the bad page.
	head, body string
	// hdr are response headers of the bad page.
	hdr Header
	// edit rewrites the bad page's document (for what the baseline has).
	edit func(string) string
	// code is the finding; scripted is the one when only the rendered page
	// is bad ("" = code), with scriptedLane (default LaneRender).
	code, scripted string
	scriptedLane   Lane
	// also are other check codes the bad page may produce.
	also []string
	// check inspects the bad page's extract.
	check func(tb testing.TB, p *Page)
}

// badDoc builds the bad page's document.
func (c checkCase) badDoc() string {
	d := doc(c.head, c.body)
	if c.edit != nil {
		d = c.edit(d)
	}
	return d
}

// dated gives a snapshot the Date header its unavailable_after dates are judged by.
func dated(s *Snapshot, extra Header) {
	s.Header = Header{"Date": {"Mon, 05 Jan 2026 10:00:00 GMT"}}
	for k, v := range extra {
		s.Header[k] = v
	}
}

var checkCases = []checkCase{
	{name: "canonical is not a URL", head: `<link rel="canonical" href="I am not a URL">`, code: CodeCanonicalInvalid,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "canonical", p.Canonical, "")
			eq(tb, "href", p.CanonicalHref, "I am not a URL")
		}},
	{name: "canonical with a space in the host", head: `<link rel="canonical" href="http://shop .example/page">`, code: CodeCanonicalInvalid},
	{name: "canonical of another scheme", head: `<link rel="canonical" href="ftp://shop.example/page">`, code: CodeCanonicalInvalid},
	{name: "canonical relative", head: `<link rel="canonical" href="/page">`, code: CodeCanonicalRelative,
		check: func(tb testing.TB, p *Page) { eq(tb, "canonical", p.Canonical, "http://shop.example/page") }},
	{name: "canonical relative in the Link header", hdr: Header{"Link": {`</page>; rel="canonical"`}}, code: CodeCanonicalRelative,
		check: func(tb testing.TB, p *Page) { eq(tb, "header href", p.CanonicalHeaderHref, "/page") }},
	{name: "meta description in body is ignored", body: `<meta name="description" content="A description in the body, which search engines do not read.">`,
		code: CodeMetaDescriptionInBody,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "description", p.MetaDescription, "A blue stoneware kettle, made by hand.")
			eq(tb, "in body", p.MetaDescriptionInBody, 1)
		}},
	{name: "canonical in body is ignored", head: `<link rel="canonical" href="http://shop.example/page">`,
		body: `<link rel="canonical" href="http://shop.example/other">`, code: CodeCanonicalInBody,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "canonical", p.Canonical, "http://shop.example/page")
			eq(tb, "conflict", p.CanonicalConflict, false)
			eq(tb, "in body", p.CanonicalInBody, 1)
		}},
	{name: "an img in the head moves the canonical after it", head: `<img src="/pixel.gif" alt=""><link rel="canonical" href="http://shop.example/page">`,
		code: CodeHeadEndedEarly, also: []string{CodeCanonicalInBody}, scripted: CodeCanonicalInBody, scriptedLane: LaneRender,
		check: func(tb testing.TB, p *Page) { eq(tb, "in body", p.CanonicalInBody, 1) }},
	{name: "canonical points to the root from a deeper page", head: `<link rel="canonical" href="http://shop.example/">`, code: CodeCanonicalRoot},
	{name: "canonical points to another hreflang alternate", head: alternates("de") + `<link rel="canonical" href="http://shop.example/de/">`,
		code: CodeCanonicalAlternate, scripted: CodeCanonicalRenderOnly, scriptedLane: ""},
	{name: "canonical on another domain", head: `<link rel="canonical" href="https://other.example/page">`, code: CodeCanonicalOtherDomain},
	{name: "hreflang xx1", head: alternates("de") + `<link rel="alternate" hreflang="xx1" href="http://shop.example/x/">`, code: CodeHreflangInvalid},
	{name: "hreflang @@", head: alternates("de") + `<link rel="alternate" hreflang="@@" href="http://shop.example/x/">`, code: CodeHreflangInvalid},
	{name: "hreflang XX-be-Hans", head: alternates("de") + `<link rel="alternate" hreflang="XX-be-Hans" href="http://shop.example/x/">`, code: CodeHreflangInvalid},
	{name: "hreflang with an underscore", head: alternates("de") + `<link rel="alternate" hreflang="de_AT" href="http://shop.example/x/">`, code: CodeHreflangInvalid},
	{name: "hreflang with spaces is reported, not trimmed", head: alternates("de") + `<link rel="alternate" hreflang=" fr " href="http://shop.example/fr/">`,
		code: CodeHreflangSpaces, check: func(tb testing.TB, p *Page) { eq(tb, "lang", p.Hreflang[3].Lang, " fr ") }},
	{name: "hreflang relative href", head: alternates("de") + `<link rel="alternate" hreflang="fr" href="/fr/">`, code: CodeHreflangRelative,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "alternate", p.Hreflang[3], Alternate{Lang: "fr", Href: "http://shop.example/fr/", HrefWritten: "/fr/"})
		}},
	{name: "hreflang without href", head: alternates("de") + `<link rel="alternate" hreflang="fr">`, code: CodeHreflangMissingHref},
	{name: "hreflang in the Link header is read", head: alternates("de"),
		hdr: Header{"Link": {`<http://shop.example/x/>; rel="alternate"; hreflang="@@"`}}, code: CodeHreflangInvalid,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "header alternate", p.Hreflang[0], Alternate{Lang: "@@", Href: "http://shop.example/x/", Header: true})
		}},
	{name: "hreflang in body is ignored", body: alternates("de"), code: CodeHreflangInBody,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "alternates", len(p.Hreflang), 0)
			eq(tb, "in body", p.HreflangInBody, 3)
		}},
	{name: "hreflang without the page itself",
		head: `<link rel="alternate" hreflang="de" href="http://shop.example/de/"><link rel="alternate" hreflang="x-default" href="http://shop.example/de/">`,
		code: CodeHreflangNoSelf},
	{name: "hreflang without x-default",
		head: `<link rel="alternate" hreflang="en" href="http://shop.example/page"><link rel="alternate" hreflang="de" href="http://shop.example/de/">`,
		code: CodeHreflangNoXDefault},
	{name: "meta description missing", edit: noDescription, code: CodeMetaDescriptionMissing,
		scripted: CodeMetaDescriptionPlainOnly, scriptedLane: ""},
	{name: "meta description empty", head: `<meta name="description" content="">`, code: CodeMetaDescriptionMissing,
		scripted: CodeMetaDescriptionPlainOnly, scriptedLane: ""},
	{name: "meta description of Unicode spaces", head: "<meta name=\"description\" content=\"\u00a0\u2003 \u3000\">", code: CodeMetaDescriptionMissing,
		scripted: CodeMetaDescriptionPlainOnly, scriptedLane: "", check: func(tb testing.TB, p *Page) { eq(tb, "description", p.MetaDescription, "") }},
	{name: "meta description too short", head: `<meta name="description" content="Kettle.">`, code: CodeMetaDescriptionLength,
		scripted: CodeMetaDescriptionChanged, scriptedLane: "", also: []string{CodeMetaDescriptionLength}},
	{name: "meta description too long", head: `<meta name="description" content="` + strings.Repeat("A kettle. ", 20) + `">`, code: CodeMetaDescriptionLength,
		scripted: CodeMetaDescriptionChanged, scriptedLane: "", also: []string{CodeMetaDescriptionLength}},
	{name: "title of Unicode spaces", edit: func(d string) string {
		return strings.Replace(d, "<title>Kettle</title>", "<title>\u00a0\u2003</title>", 1)
	},
		code: CodeTitleMissing, scripted: CodeTitlePlainOnly, scriptedLane: ""},
	{name: "title very long", edit: func(d string) string {
		return strings.Replace(d, "<title>Kettle</title>", "<title>"+strings.Repeat("Kettle ", 12)+"</title>", 1)
	}, code: CodeTitleLong, also: []string{CodeTitleChanged}},
	{name: "unavailable_after in the past in meta robots", head: `<meta name="robots" content="unavailable_after: 2001-01-01">`,
		code: CodeRobotsUnavailableAfter, also: []string{CodeRobotsNoindex, CodeRobotsNoindexRenderOnly, CodeRobotsChanged},
		check: func(tb testing.TB, p *Page) { eq(tb, "noindex", p.Noindex, true); eq(tb, "expired", p.Expired, true) }},
	{name: "unavailable_after in the past in X-Robots-Tag, RFC 850 date", hdr: Header{"X-Robots-Tag": {"unavailable_after: Friday, 25-Jun-10 15:00:00 GMT"}},
		code: CodeRobotsUnavailableAfter, also: []string{CodeRobotsNoindex, CodeRobotsNoindexRenderOnly, CodeXRobotsTagChanged}},
	{name: "unavailable_after in the future is no noindex", head: `<meta name="robots" content="unavailable_after: 2099-12-31">`,
		also: []string{CodeRobotsChanged}, check: func(tb testing.TB, p *Page) { eq(tb, "noindex", p.Noindex, false) }},
	{name: "none is noindex and nofollow", head: `<meta name="robots" content="none">`,
		code: CodeRobotsNoindex, scripted: CodeRobotsNoindexRenderOnly, scriptedLane: "", also: []string{CodeRobotsNofollow, CodeRobotsNofollowRenderOnly}},
	{name: "googlebot noindex is kept apart", head: `<meta name="googlebot" content="noindex">`, code: CodeRobotsBotNoindex,
		also: []string{CodeRobotsBotMetaChanged}, check: func(tb testing.TB, p *Page) { eq(tb, "noindex", p.Noindex, false) }},
	{name: "bingbot noindex in X-Robots-Tag", hdr: Header{"X-Robots-Tag": {"bingbot: noindex"}}, code: CodeRobotsBotNoindex,
		also: []string{CodeXRobotsTagChanged}},
	{name: "googlebot unavailable_after in the past", head: `<meta name="googlebot" content="unavailable_after: 2001-01-01">`,
		code: CodeRobotsBotNoindex, also: []string{CodeRobotsBotMetaChanged}},
	{name: "link text click here", body: `<a href="/kettles">click here</a>`, code: CodeLinksNonDescriptive,
		also: []string{CodeLinksRenderOnly}},
	{name: "link text read more with an arrow", body: `<a href="/kettles">Read more »</a>`, code: CodeLinksNonDescriptive,
		also: []string{CodeLinksRenderOnly}},
	{name: "link text mehr in a German block", body: `<p lang="de"><a href="/kettles">Mehr</a></p>`, code: CodeLinksNonDescriptive,
		also: []string{CodeLinksRenderOnly}},
	{name: "English phrase in a German link is not judged by the English list", body: `<p lang="de"><a href="/kettles">here</a></p>`,
		also: []string{CodeLinksRenderOnly}, check: func(tb testing.TB, p *Page) { eq(tb, "non-descriptive", p.Links[0].NonDescriptive, false) }},
	{name: "link text in the page's language", edit: func(d string) string {
		return strings.Replace(d, `lang="en"`, `lang="ja"`, 1)
	}, body: `<a href="/kettles">続きを読む</a>`, code: CodeLinksNonDescriptive, also: []string{CodeLinksRenderOnly, CodeLangChanged}},
	{name: "javascript link", body: `<a href="javascript:void(0)">Buy</a>`, code: CodeLinksUncrawlable,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "uncrawlable", p.UncrawlableLinks, []UncrawlableLink{{Href: "javascript:void(0)", Text: "Buy", Reason: "javascript"}})
			eq(tb, "links", len(p.Links), 0)
		}},
	{name: "anchor with a click handler and no href", body: `<a onclick="go()">Buy</a>`, code: CodeLinksUncrawlable,
		check: func(tb testing.TB, p *Page) { eq(tb, "reason", p.UncrawlableLinks[0].Reason, "no_href") }},
	{name: "anchor with role link and no href", body: `<a role="link">Buy</a>`, code: CodeLinksUncrawlable},
	{name: "file link", body: `<a href="file:///C:/price-list.pdf">Prices</a>`, code: CodeLinksUncrawlable},
	{name: "hash link that a script navigates", body: `<a href="#" onclick="location='/buy'">Buy</a>`, code: CodeLinksUncrawlable,
		check: func(tb testing.TB, p *Page) { eq(tb, "reason", p.UncrawlableLinks[0].Reason, "script_fragment") }},
	{name: "hash route without a listener", body: `<a href="#/guide">Guide</a>`, code: CodeLinksUncrawlable,
		check: func(tb testing.TB, p *Page) {
			eq(tb, "uncrawlable", p.UncrawlableLinks, []UncrawlableLink{{Href: "#/guide", Text: "Guide", Reason: "hash_route"}})
		}},
	{name: "links inside SVG are links", body: `<svg><a href="/svg-target"><text>Kettle map</text></a><a xlink:href="/old-svg"><text>Old map</text></a></svg>`,
		also: []string{CodeLinksRenderOnly}, check: func(tb testing.TB, p *Page) {
			eq(tb, "links", p.Links, []Link{{Href: "http://shop.example/svg-target", Text: "Kettle map", Internal: true},
				{Href: "http://shop.example/old-svg", Text: "Old map", Internal: true}})
		}},
}

// TestChecks runs every validity rule on a static page (both lanes bad:
// one finding without a lane) and on a page whose scripts change the tag
// (only the rendered page bad: a render-lane finding, or the diff code).
func TestChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := tc.badDoc()
			static := pair(bad, bad, func(p, r *Snapshot) { dated(p, tc.hdr); dated(r, tc.hdr) })
			res := runDiffCase(static)
			wantCheck(t, "static", res, tc.code, "", tc.also)
			if tc.check != nil {
				tc.check(t, Extract(static().plain))
				tc.check(t, Extract(static().render))
			}
			scripted := pair(doc("", ""), bad, func(p, r *Snapshot) { dated(p, nil); dated(r, tc.hdr) })
			code, lane := tc.code, LaneRender
			if tc.scripted != "" {
				code, lane = tc.scripted, tc.scriptedLane
			}
			wantCheck(t, "scripted", runDiffCase(scripted), code, lane, append([]string{tc.code}, tc.also...))
			fixed := pair(bad, doc("", ""), func(p, r *Snapshot) { dated(p, tc.hdr); dated(r, nil) })
			if tc.scripted == "" && tc.code != "" {
				wantCheck(t, "fixed by scripts", runDiffCase(fixed), code, LanePlain, tc.also)
			}
		})
	}
}

// wantCheck checks that res has code in lane (none when code is "") and no
// other check finding but those in also.
func wantCheck(tb testing.TB, variant string, res Result, code string, lane Lane, also []string) {
	tb.Helper()
	found := false
	for _, f := range res.Findings {
		switch {
		case f.Code == code && f.Lane == lane:
			found = true
		case f.Code == code:
			tb.Errorf("%s: %s in lane %q, want %q", variant, code, f.Lane, lane)
		case (checkCodes[f.Code] || f.Code == CodeTitleMissing) && !containsCode(also, f.Code):
			tb.Errorf("%s: unexpected finding %s %s: %s", variant, f.Code, f.Lane, f.Message)
		}
	}
	if code != "" && !found {
		tb.Errorf("%s: no finding %s; got %s", variant, code, codesOf(res))
	}
}

func containsCode(codes []string, c string) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}

// TestValidHreflang pins the accepted language codes.
func TestValidHreflang(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]bool{
		"en": true, "de-AT": true, "zh-Hans-CN": true, "zh-Hant": true, "es-419": true, "x-default": true, "X-Default": true,
		"EN-gb": true, "xx1": false, "@@": false, "XX-be-Hans": false, "xx": false, "de_AT": false, " de": false,
		"": false, "und": false, "de-DE-1996": false, "en-US-x-private": false, "e": false,
	} {
		if got := validHreflang(code); got != want {
			t.Errorf("validHreflang(%q) = %v, want %v", code, got, want)
		}
	}
}

// snakeName is a JSON or Go name: lower-case words joined by underscores.
var snakeName = regexp.MustCompile(`(^|[\s(,;:])[a-z][a-z0-9]*(_[a-z][a-z0-9]*)+([\s),;:.]|$)`)

// TestFindingTextsInWords runs every check case, static and scripted, and
// reads each finding's message: no JSON or Go name (uncrawlable_links,
// script_fragment) outside the quoted values of the page.
func TestFindingTextsInWords(t *testing.T) {
	t.Parallel()
	quoted := regexp.MustCompile(`“[^”]*”|<[^>]*>`)
	for _, tc := range append(checkCases, checkCase{name: "fragment link with a listener",
		body: `<a href="#" onclick="go()">Buy</a>`, code: CodeLinksUncrawlable}) {
		bad := tc.badDoc()
		for variant, c := range map[string]func() lanePair{
			"static":   pair(bad, bad, func(p, r *Snapshot) { dated(p, tc.hdr); dated(r, tc.hdr) }),
			"scripted": pair(doc("", ""), bad, func(p, r *Snapshot) { dated(p, nil); dated(r, tc.hdr) }),
		} {
			for _, f := range runDiffCase(c).Findings {
				if m := snakeName.FindString(quoted.ReplaceAllString(f.Message, "")); m != "" {
					t.Errorf("%s, %s: %s says %q: %s", tc.name, variant, f.Code, strings.TrimSpace(m), f.Message)
				}
			}
		}
	}
}
