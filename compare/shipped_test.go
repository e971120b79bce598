package compare

import (
	"strings"
	"testing"
)

// gtmHead is the server HTML of a page with Google Tag Manager's noscript
// snippet pasted into its head, as GTM's install guide says, before the
// description and the canonical.
const gtmHead = `<!DOCTYPE html>
<html lang="en">
<head>
<title>Kettle</title>
<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-XXXX"
height="0" width="0" style="display:none;visibility:hidden"></iframe></noscript>
<meta name="description" content="A blue kettle, boils a litre in four minutes.">
<link rel="canonical" href="http://shop.example/page">
</head>
<body><h1>Kettle</h1><p>A blue kettle.</p></body>
</html>`

// shippedCases are what real pages do (issue 32): snippets pasted into a
// head, a head-merging library's second title.
var shippedCases = []diffCase{
	{name: "GTM noscript iframe in the head: the parser's doing, not JavaScript's",
		in:   pair(gtmHead, gtmHead, nil),
		want: []finding{{code: CodeCanonicalRenderOnly}, {code: CodeMetaDescriptionRenderOnly}, {code: CodeHeadEndedEarly, lane: LanePlain}},
		some: true,
		check: all(
			wantCause(CodeCanonicalRenderOnly, Cause{Kind: CauseParser, Element: "iframe", SourceLine: 5}),
			wantCause(CodeMetaDescriptionRenderOnly, Cause{Kind: CauseParser, Element: "iframe", SourceLine: 5}),
			messageHas(CodeCanonicalRenderOnly, "in <head> for browsers but not for crawlers that parse the HTML without running scripts", "inside <noscript> on line 5", "not JavaScript's", "Move the <noscript> into <body>"),
			noMessageHas("added by JavaScript", "set by JavaScript"))},
	{name: "two titles in the server HTML",
		in: pair(`<!doctype html><html lang="en"><head><title>Kettle shop</title>`+baseDescription+`<title>Home</title></head><body><h1>Kettle</h1><p>A blue kettle.</p></body></html>`,
			`<!doctype html><html lang="en"><head><title>Kettle shop</title>`+baseDescription+`<title>Home</title></head><body><h1>Kettle</h1><p>A blue kettle.</p></body></html>`, nil),
		want:  []finding{{code: CodeTitleMultiple, lane: "", sev: SeverityWarning}},
		check: messageHas(CodeTitleMultiple, "2 <title> elements, the first “Kettle shop”, then “Home”", "in both the server HTML and the rendered page", "Browsers show the first")},
	{name: "a second title and description appended by a script",
		in: pair(doc("", ""), doc(`<meta name="description" content="Another description of the kettle page.">`, "")+`<title>Kettle | Shop</title>`, func(p, r *Snapshot) {
			r.Body = []byte(strings.Replace(string(r.Body), "</head>", `<title>Kettle | Shop</title><meta name="description" content="Another description of the kettle page."></head>`, 1))
		}),
		want:  []finding{{code: CodeTitleMultiple, lane: LaneRender}, {code: CodeMetaDescriptionMultiple, lane: LaneRender, sev: SeverityInfo}},
		some:  true,
		check: messageHas(CodeTitleMultiple, "the first “Kettle”, then “Kettle | Shop”", "in the rendered page")},
	{name: "server HTML over Googlebot's 2 MB",
		in:   func() lanePair { big := bigPage(); return pair(big, big, nil)() },
		want: []finding{{code: CodeHTMLOverGooglebotLimit, lane: LanePlain, sev: SeverityWarning}},
		some: true},
}

// noMessageHas checks that no finding's message says any of parts.
func noMessageHas(parts ...string) func(testing.TB, Result) {
	return func(tb testing.TB, res Result) {
		tb.Helper()
		for _, f := range res.Findings {
			for _, p := range parts {
				if strings.Contains(f.Message, p) {
					tb.Errorf("%s says %q: %s", f.Code, p, f.Message)
				}
			}
		}
	}
}

// TestShippedPages checks the findings of what real pages ship.
func TestShippedPages(t *testing.T) {
	t.Parallel()
	runDiffCases(t, shippedCases)
}

// bigPage is server HTML of about 2.5 MB whose bulk (an inline data block)
// stands before half its text, its product links and its Product JSON-LD.
func bigPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><title>Kettle</title>` + baseDescription + `</head><body><h1>Kettle</h1><p>` + manyWords + `</p>`)
	b.WriteString(`<script type="application/json" id="state">"` + strings.Repeat("x", 2500000) + `"</script>`)
	b.WriteString(`<p>` + strings.Repeat("copper spout handle lid ", 10) + `</p><a href="/a">A kettle</a><a href="/b">B kettle</a>`)
	b.WriteString(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Kettle"}</script></body></html>`)
	return b.String()
}

// TestGooglebotLimit: server HTML over 2 MB gets a finding naming what lies
// past the limit; a page under it none.
func TestGooglebotLimit(t *testing.T) {
	t.Parallel()
	big := bigPage()
	res := runDiffCase(pair(big, big, nil))
	var f *Finding
	for i := range res.Findings {
		if res.Findings[i].Code == CodeHTMLOverGooglebotLimit {
			f = &res.Findings[i]
		}
	}
	if f == nil || f.Lane != LanePlain || f.Severity != SeverityWarning {
		t.Fatalf("want a plain-lane warning %s; got %+v", CodeHTMLOverGooglebotLimit, res.Findings)
	}
	for _, want := range []string{"2.4 MB", "first 2 MB", "51% of the page's words", "100% of its links", "structured data of type Product"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	small := runDiffCase(pair(doc("", ""), doc("", ""), nil))
	for _, f := range small.Findings {
		if f.Code == CodeHTMLOverGooglebotLimit {
			t.Errorf("a small page got %s", f.Code)
		}
	}
}
