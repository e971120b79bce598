package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderedPages are hand-written DOMs of the test site pages as a browser
// leaves them once scripts have run (what the render lane hands over: the
// serialized DOM, open shadow roots as declarative templates). Pages whose
// scripts change nothing are rendered as their source.
var renderedPages = map[string]string{
	"js-title.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<meta name="description" content="The blue stoneware kettle holds one and a half litres.">
<link rel="canonical" href="/js-title.html">
<script>document.title = "Blue Stoneware Kettle | Lekta Test Shop";</script><title>Blue Stoneware Kettle | Lekta Test Shop</title>
</head><body>
<h1>Blue stoneware kettle</h1>
<p>The page title of this page is set only by a script.</p>
</body></html>`,
	"js-meta-description.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Green Teapot | Lekta Test Shop</title>
<link rel="canonical" href="/js-meta-description.html">
<script>/* adds the description */</script><meta name="description" content="A green teapot for four cups, glazed inside and out.">
</head><body>
<h1>Green teapot</h1>
<p>The meta description of this page is added only by a script.</p>
</body></html>`,
	"js-canonical.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Red Kettle | Lekta Test Shop</title>
<meta name="description" content="A red enamel kettle for gas and induction stoves.">
<link rel="canonical" href="/products/red-kettle.html">
<script>/* changes the canonical */</script>
</head><body>
<h1>Red kettle</h1>
<p>A script changes the canonical address of this page.</p>
</body></html>`,
	"noindex-added.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Clearance | Lekta Test Shop</title>
<meta name="description" content="Last pieces of the season at reduced prices.">
<link rel="canonical" href="/noindex-added.html">
<script>/* adds noindex */</script><meta name="robots" content="noindex, nofollow">
</head><body>
<h1>Clearance</h1>
<p>A script marks this page noindex; the plain HTML does not.</p>
</body></html>`,
	"noindex-removed.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>New Collection | Lekta Test Shop</title>
<meta name="description" content="The new autumn collection of mugs and bowls.">

<link rel="canonical" href="/noindex-removed.html">
<script>/* removes noindex */</script>
</head><body>
<h1>New collection</h1>
<p>The plain HTML of this page says noindex; a script removes it.</p>
</body></html>`,
	"json-ld.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Copper Kettle | Lekta Test Shop</title>
<meta name="description" content="A polished copper kettle with a wooden handle.">
<link rel="canonical" href="/json-ld.html">
<script>/* injects JSON-LD */</script><script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Copper Kettle","sku":"CK-1","offers":{"@type":"Offer","price":"89.00","priceCurrency":"EUR"}}</script>
</head><body>
<h1>Copper kettle</h1>
<p>The structured data of this page is injected by a script.</p>
</body></html>`,
	"fetch-content.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>How We Fire Our Clay | Lekta Test Shop</title>
<meta name="description" content="A short article about firing clay in a wood kiln.">
<link rel="canonical" href="/fetch-content.html">
</head><body>
<h1>How we fire our clay</h1>
<article id="article"><h2>Three days in the wood kiln</h2><p>Our kiln burns beech wood for three days and nights, and the ash settles on the pots as a natural glaze.</p><p>Each firing holds about two hundred pieces; no two come out the same colour.</p><p>After cooling for two more days we sort, sand and test every piece by hand before it goes to the shop.</p></article>
<script>/* fetches the article */</script>
</body></html>`,
	"links-added.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>All Products | Lekta Test Shop</title>
<meta name="description" content="Every kettle, teapot and mug in the Lekta test shop.">
<link rel="canonical" href="/links-added.html">
</head><body>
<h1>All products</h1>
<p>The product links on this page are inserted by a script.</p>
<ul id="products"><li><a href="/products/kettle.html">Blue stoneware kettle</a></li><li><a href="/products/teapot.html">Green teapot</a></li><li><a href="/products/mug.html">Tall mug</a></li><li><a href="https://example.org/reviews">Independent reviews</a></li><li><a href="/products/bowl.html">Rice bowl</a></li></ul>
<p>Questions? <a href="/contact.html">Contact us</a>.</p>
<script>/* inserts the links */</script>
</body></html>`,
	"shadow.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Gift Cards | Lekta Test Shop</title>
<meta name="description" content="Gift cards for any amount, delivered by email.">
<link rel="canonical" href="/shadow.html">
</head><body>
<h1>Gift cards</h1>
<p>The offer below lives inside an open shadow root.</p>
<lekta-offer id="offer"><template shadowrootmode="open"><style>p { font-weight: bold; }</style><h2>Give a handmade present</h2><p>Choose any amount between ten and five hundred euros and we email the card the same day.</p><a href="/gift-cards/buy.html">Buy a gift card</a></template></lekta-offer>
<script>/* attaches the shadow root */</script>
</body></html>`,
	"spa.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Lekta Test Shop App</title>
<meta name="description" content="Browse the Lekta test shop in a single-page app.">
<link rel="canonical" href="/spa.html">
</head><body>
<noscript>This shop needs JavaScript to show its products.</noscript>
<div id="app"><h1>Mugs for every morning</h1><p>Our mugs are thrown on the wheel and hold a generous third of a litre of coffee or tea.</p><h2>Bestsellers</h2><a href="/products/mug.html">Tall mug</a> <a href="/products/espresso-cup.html">Espresso cup</a> <h2>Shipping</h2><p>Orders placed before noon leave the workshop on the same day.</p><a href="/shipping.html">Shipping details</a> </div>
<script src="/js/app.js"></script>
<script>/* renders the app */</script>
</body></html>`,
	"hash-router.html": `<!DOCTYPE html><html lang="en"><head>
<meta charset="utf-8">
<title>Docs | Lekta Test Shop</title>
<meta name="description" content="Documentation served by a hash router.">
<link rel="canonical" href="/hash-router.html">
</head><body>
<nav id="sidebar">
<a href="#/">Home</a>
<a href="#/guide">Guide</a>
<a href="#!/faq">FAQ</a>
<a href="/index.html">The shop</a>
</nav>
<main id="view"><h1>Glaze notes</h1><p>Every firing leaves its own ash glaze on the pots.</p><a href="#/glossary">Glossary</a></main>
<script>/* the hash router */</script>
</body></html>`,
}

// siteDiffCases are the expected differences of each test site page: the
// rows that are not "same" and the exact set of finding codes.
var siteDiffCases = []struct {
	page     string
	rows     map[string]Change
	codes    []string
	critical bool // the verdict names critical differences
}{
	{page: "index.html", codes: []string{CodeHreflangRelative}},
	{page: "images-analytics.html", codes: []string{CodeImagesMissingAlt}},
	{page: "js-title.html",
		rows:     map[string]Change{"title": ChangeRenderOnly},
		codes:    []string{CodeTitleRenderOnly},
		critical: true},
	{page: "js-meta-description.html",
		rows:  map[string]Change{"meta_description": ChangeRenderOnly},
		codes: []string{CodeMetaDescriptionRenderOnly}},
	{page: "js-canonical.html",
		rows:     map[string]Change{"canonical": ChangeChanged},
		codes:    []string{CodeCanonicalChanged},
		critical: true},
	{page: "noindex-added.html",
		rows:     map[string]Change{"meta_robots": ChangeRenderOnly, "noindex": ChangeRenderOnly, "nofollow": ChangeRenderOnly},
		codes:    []string{CodeRobotsNoindexRenderOnly, CodeRobotsNofollowRenderOnly},
		critical: true},
	{page: "noindex-removed.html",
		rows:     map[string]Change{"meta_robots": ChangePlainOnly, "noindex": ChangePlainOnly},
		codes:    []string{CodeRobotsNoindexPlainOnly},
		critical: true},
	{page: "json-ld.html",
		rows:  map[string]Change{"json_ld_types": ChangeRenderOnly},
		codes: []string{CodeJSONLDRenderOnly}},
	{page: "fetch-content.html",
		rows:     map[string]Change{"headings": ChangeChanged, "word_count": ChangeChanged},
		codes:    []string{CodeHeadingsRenderOnly, CodeContentRenderOnly},
		critical: true},
	{page: "links-added.html",
		rows:     map[string]Change{"links": ChangeChanged, "word_count": ChangeChanged},
		codes:    []string{CodeLinksRenderOnly, CodeContentRenderOnly},
		critical: true},
	{page: "shadow.html",
		rows:     map[string]Change{"headings": ChangeChanged, "links": ChangeRenderOnly, "word_count": ChangeChanged},
		codes:    []string{CodeHeadingsRenderOnly, CodeLinksRenderOnly, CodeContentRenderOnly},
		critical: true},
	{page: "hash-router.html",
		rows:     map[string]Change{"h1": ChangeRenderOnly, "headings": ChangeRenderOnly, "word_count": ChangeChanged},
		codes:    []string{CodeH1RenderOnly, CodeContentRenderOnly, CodeLinksUncrawlable},
		critical: true},
	{page: "spa.html",
		rows:     map[string]Change{"h1": ChangeRenderOnly, "headings": ChangeRenderOnly, "links": ChangeRenderOnly, "word_count": ChangeChanged},
		codes:    []string{CodeH1RenderOnly, CodeHeadingsRenderOnly, CodeLinksRenderOnly, CodeContentRenderOnly},
		critical: true},
}

// mustRenderedPage returns a render-lane snapshot of a test site page.
func mustRenderedPage(tb testing.TB, name string) *Snapshot {
	tb.Helper()
	dom, ok := renderedPages[name]
	if !ok {
		src, err := os.ReadFile(filepath.Join(siteDir, name))
		if err != nil {
			tb.Fatalf("read test page: %v", err)
		}
		dom = string(src)
	}
	s := mustSitePage(tb, name)
	s.Lane = LaneRender
	s.Body = []byte(dom)
	s.Render = &RenderDetails{Settled: true, Blocked: map[string]int{}}
	return s
}

// siteDiff diffs a test page's source against its rendered DOM.
func siteDiff(tb testing.TB, page string) Result {
	tb.Helper()
	plain, render := mustSitePage(tb, page), mustRenderedPage(tb, page)
	return Diff(&Observed{Snapshot: plain, Page: Extract(plain)}, &Observed{Snapshot: render, Page: Extract(render)})
}

// TestDiffSitePages checks the rows and findings of every test page's
// difference, and that every page of the site has a case.
func TestDiffSitePages(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, tc := range siteDiffCases {
		covered[tc.page] = true
		t.Run(tc.page, func(t *testing.T) {
			t.Parallel()
			res := siteDiff(t, tc.page)
			assertRows(t, res, tc.rows)
			// Every test page writes its canonical as a relative URL.
			assertCodes(t, res, append([]string{CodeCanonicalRelative}, tc.codes...))
			named := !strings.Contains(res.Verdict.Summary, "see what a browser shows") && !strings.Contains(res.Verdict.Summary, "smaller difference")
			if named != tc.critical {
				t.Errorf("verdict %q: names critical differences = %v, want %v", res.Verdict.Summary, named, tc.critical)
			}
		})
	}
	for _, page := range sitePages(t) {
		if !covered[page] {
			t.Errorf("test page %s has no diff case", page)
		}
	}
}

// assertRows checks that the listed rows have the wanted change and every
// other row is "same".
func assertRows(tb testing.TB, res Result, want map[string]Change) {
	tb.Helper()
	if len(res.Diff) != len(fields) {
		tb.Errorf("got %d rows, want %d", len(res.Diff), len(fields))
	}
	for _, row := range res.Diff {
		w, ok := want[row.Field]
		if !ok {
			w = ChangeSame
		}
		if row.Change != w {
			tb.Errorf("row %s: got %s (plain %#v, render %#v), want %s", row.Field, row.Change, row.Plain, row.Render, w)
		}
	}
}

// assertCodes checks that the findings carry exactly the wanted codes.
func assertCodes(tb testing.TB, res Result, want []string) {
	tb.Helper()
	got := map[string]bool{}
	for _, f := range res.Findings {
		got[f.Code] = true
		if _, ok := LookupCode(f.Code); !ok {
			tb.Errorf("finding code %q is not in the code table", f.Code)
		}
		if f.Message == "" {
			tb.Errorf("finding %s has no message", f.Code)
		}
	}
	for _, c := range want {
		if !got[c] {
			tb.Errorf("missing finding %s; got %s", c, codesOf(res))
		}
		delete(got, c)
	}
	for c := range got {
		tb.Errorf("unexpected finding %s; all: %s", c, codesOf(res))
	}
}

// codesOf lists a result's finding codes for failure messages.
func codesOf(res Result) string {
	var s []string
	for _, f := range res.Findings {
		s = append(s, string(f.Severity)+" "+f.Code+" "+string(f.Lane)+": "+f.Message)
	}
	return "\n  " + strings.Join(s, "\n  ")
}
