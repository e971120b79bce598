package compare

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// snap builds a snapshot of an inline document served at http://shop.example/page.
func snap(lane Lane, body string) *Snapshot {
	return &Snapshot{
		Lane:         lane,
		RequestedURL: "http://shop.example/page",
		FinalURL:     "http://shop.example/page",
		Status:       200,
		Header:       Header{},
		ContentType:  "text/html",
		Body:         []byte(body),
	}
}

// TestExtract checks each field of the extract on small documents.
func TestExtract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		lane  Lane
		body  string
		hdr   Header
		opts  Options
		check func(tb testing.TB, p *Page)
	}{
		{
			name: "title collapses whitespace and ignores svg titles",
			body: `<html><body><svg><title>icon</title></svg><title>
				Blue   Kettle
			</title><title>second</title>`,
			check: func(tb testing.TB, p *Page) { eq(tb, "title", p.Title, "Blue Kettle") },
		},
		{
			name:  "first meta description, name case-insensitive",
			body:  `<meta name="Description" content=" A kettle. "><meta name="description" content="other">`,
			check: func(tb testing.TB, p *Page) { eq(tb, "meta description", p.MetaDescription, "A kettle.") },
		},
		{
			name: "robots metas joined, none means noindex and nofollow",
			body: `<meta name="robots" content="max-snippet:20"><meta name="ROBOTS" content="none">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "meta robots", p.MetaRobots, "max-snippet:20, none")
				eq(tb, "noindex", p.Noindex, true)
				eq(tb, "nofollow", p.Nofollow, true)
			},
		},
		{
			name: "space-separated directives",
			body: `<meta name="robots" content="noindex nofollow">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "noindex", p.Noindex, true)
				eq(tb, "nofollow", p.Nofollow, true)
			},
		},
		{
			name: "bot-specific metas recorded, only the own token counts",
			body: `<meta name="googlebot" content="noindex"><meta name="GPTBot" content="nofollow">
				<meta name="google-extended" content="noindex"><meta name="viewport" content="width=device-width">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "bot robots", p.BotRobots, map[string]string{"googlebot": "noindex", "gptbot": "nofollow", "google-extended": "noindex"})
				eq(tb, "noindex", p.Noindex, false)
				eq(tb, "nofollow", p.Nofollow, false)
				eq(tb, "meta robots", p.MetaRobots, "")
			},
		},
		{
			name: "meta for the default token sets noindex",
			body: `<meta name="lektabot" content="noindex">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "noindex", p.Noindex, true)
				eq(tb, "meta robots", p.MetaRobots, "")
			},
		},
		{
			name: "meta for a configured token sets noindex",
			body: `<meta name="otherbot" content="noindex"><meta name="lektabot" content="nofollow">`,
			opts: Options{BotToken: "OtherBot"},
			check: func(tb testing.TB, p *Page) {
				eq(tb, "noindex", p.Noindex, true)
				eq(tb, "nofollow", p.Nofollow, false)
			},
		},
		{
			name: "X-Robots-Tag generic",
			hdr:  Header{"X-Robots-Tag": {"noindex"}},
			body: `<title>t</title>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "x-robots-tag", p.XRobotsTag, []string{"noindex"})
				eq(tb, "noindex", p.Noindex, true)
				eq(tb, "nofollow", p.Nofollow, false)
			},
		},
		{
			name: "X-Robots-Tag scoped to another bot is ignored",
			hdr:  Header{"X-Robots-Tag": {"googlebot: noindex, nofollow", "unavailable_after: 25 Jun 2010 15:00:00 PST"}},
			check: func(tb testing.TB, p *Page) {
				eq(tb, "x-robots-tag", p.XRobotsTag, []string{"googlebot: noindex, nofollow", "unavailable_after: 25 Jun 2010 15:00:00 PST"})
				eq(tb, "noindex", p.Noindex, false)
				eq(tb, "nofollow", p.Nofollow, false)
			},
		},
		{
			name: "X-Robots-Tag scoped to the own token applies to the rest of the value",
			hdr:  Header{"X-Robots-Tag": {"googlebot: nofollow, LektaBot: noindex, nofollow"}},
			check: func(tb testing.TB, p *Page) {
				eq(tb, "noindex", p.Noindex, true)
				eq(tb, "nofollow", p.Nofollow, true)
			},
		},
		{
			name: "canonical resolved against base and Link header against the final URL",
			hdr:  Header{"Link": {`<https://cdn.example/x>; rel=preload, </page>; rel="canonical"`}},
			body: `<base href="/shop/"><link rel="Canonical" href="kettle?id=1#top">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "canonical", p.Canonical, "http://shop.example/shop/kettle?id=1#top")
				eq(tb, "canonical header", p.CanonicalHeader, "http://shop.example/page")
				eq(tb, "conflict", p.CanonicalConflict, false)
			},
		},
		{
			name: "several different canonicals conflict",
			body: `<link rel="canonical" href="/a"><link rel="canonical" href="/b"><link rel="canonical" href="/a">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "canonical", p.Canonical, "http://shop.example/a")
				eq(tb, "conflict", p.CanonicalConflict, true)
			},
		},
		{
			name: "hreflang alternates and lang",
			body: `<html lang=" de-AT "><link rel="alternate" hreflang="en" href="/en/"><link rel="alternate" type="application/rss+xml" href="/feed">
				<link rel="alternate" hreflang="x-default" href="https://shop.example/">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "lang", p.Lang, "de-AT")
				eq(tb, "hreflang", p.Hreflang, []Alternate{{Lang: "en", Href: "http://shop.example/en/", HrefWritten: "/en/"}, {Lang: "x-default", Href: "https://shop.example/"}})
			},
		},
		{
			name: "h1 list and heading outline with nested inline text",
			body: `<h1>Blue <em>stoneware</em>
				kettle</h1><h2>Care</h2><div><h3>Daily</h3></div><h1>Second</h1><svg><title>not a heading</title></svg>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "h1", p.H1, []string{"Blue stoneware kettle", "Second"})
				eq(tb, "headings", p.Headings, []Heading{{1, "Blue stoneware kettle"}, {2, "Care"}, {3, "Daily"}, {1, "Second"}})
			},
		},
		{
			name: "links resolved, filtered and classified",
			body: `<a href="/a#x">A <b>one</b></a>
				<a href="#top">top</a><a href="javascript:void(0)">js</a><a href="mailto:x@shop.example">mail</a>
				<a href="HTTP://Shop.Example:80/b" rel="NoFollow Sponsored">B</a>
				<a href="https://example.org/c"><img src="/c.png" alt="Partner logo"></a>
				<a href="c2" aria-label="Cart"></a><a>no href</a>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "links", p.Links, []Link{
					{Href: "http://shop.example/a", Text: "A one", Internal: true},
					{Href: "http://shop.example/b", Rel: "nofollow sponsored", Text: "B", Internal: true},
					{Href: "https://example.org/c", Text: "Partner logo", Internal: false},
					{Href: "http://shop.example/c2", Text: "Cart", Internal: true},
				})
				eq(tb, "link count", p.LinkCount, 4)
			},
		},
		{
			name: "images without alt, empty alt is fine",
			body: `<img src="/a.png" alt="A"><img src="/b.png" alt=""><img src="/photo?id=1"><template><img src="/t.png"></template>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "images missing alt", p.ImagesMissingAlt, []string{"http://shop.example/photo?id=1"})
			},
		},
		{
			name: "JSON-LD types from objects, arrays and @graph",
			body: `<script type="application/ld+json">{"@type":"Product","offers":{"@type":"Offer"}}</script>
				<script type="application/ld+json">[{"@type":["Organization","Brand"]},{"@type":"WebSite"}]</script>
				<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"BreadcrumbList"},{"@type":"Product"}]}</script>
				<script type="Application/LD+JSON; charset=utf-8">//<![CDATA[
				{"@type":"FAQPage"}
				//]]></script>
				<script type="application/ld+json">{"@type": "Broken",}</script>
				<script type="application/json">{"@type":"NotLD"}</script>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "json-ld types", p.JSONLDTypes, []string{"Brand", "BreadcrumbList", "FAQPage", "Organization", "Product", "WebSite"})
				if len(p.JSONLD) != 5 {
					tb.Fatalf("got %d JSON-LD blocks, want 5", len(p.JSONLD))
				}
				eq(tb, "block 1 types", p.JSONLD[1].Types, []string{"Organization", "Brand", "WebSite"})
				eq(tb, "block 2 types", p.JSONLD[2].Types, []string{"BreadcrumbList", "Product"})
				if p.JSONLD[4].Error == "" || len(p.JSONLD[4].Types) != 0 {
					tb.Errorf("invalid block: got %+v, want a parse error and no types", p.JSONLD[4])
				}
				for i := range 4 {
					if p.JSONLD[i].Error != "" {
						tb.Errorf("block %d: unexpected error %q", i, p.JSONLD[i].Error)
					}
				}
			},
		},
		{
			name: "Open Graph",
			body: `<meta property="og:title" content="Kettle"><meta property="og:image" content="/k.png"><meta name="og:type" content="product">`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "open graph", p.OpenGraph, OpenGraph{Title: "Kettle", Image: "http://shop.example/k.png", Type: "product"})
			},
		},
		{
			name: "word count skips head, script, style, template and hidden",
			body: `<title>not counted</title><body>one two, three!
				<script>var not = "counted";</script><style>p{}</style><template>not counted</template>
				<div hidden>not counted <a href="/h">Hidden link</a></div><p hidden="until-found">four</p> — … five`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "word count", p.WordCount, 5)
				eq(tb, "hidden link kept", len(p.Links), 1)
			},
		},
		{
			name: "noscript counts in the plain lane",
			lane: LanePlain,
			body: `<body><p>one two</p><noscript><p>enable JavaScript <a href="/plain">here</a></p></noscript>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "word count", p.WordCount, 5)
				eq(tb, "links", len(p.Links), 1)
			},
		},
		{
			name: "noscript does not count in the render lane",
			lane: LaneRender,
			body: `<body><p>one two</p><noscript><p>enable JavaScript <a href="/plain">here</a></p></noscript>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "word count", p.WordCount, 2)
				eq(tb, "links", len(p.Links), 0)
			},
		},
		{
			name: "declarative shadow roots count",
			lane: LaneRender,
			body: `<body><x-card><template shadowrootmode="open"><h2>Inside</h2><a href="/in">shadow link</a></template></x-card>`,
			check: func(tb testing.TB, p *Page) {
				eq(tb, "word count", p.WordCount, 3)
				eq(tb, "headings", p.Headings, []Heading{{2, "Inside"}})
				eq(tb, "links", len(p.Links), 1)
			},
		},
		{
			name:  "ideographs count one word each",
			body:  `<p>日本語のページ Kettle</p>`,
			check: func(tb testing.TB, p *Page) { eq(tb, "word count", p.WordCount, 8) },
		},
		{
			name: "byte order mark is ignored",
			body: "\uFEFF<!doctype html><title>With BOM</title><p>one</p>",
			check: func(tb testing.TB, p *Page) {
				eq(tb, "title", p.Title, "With BOM")
				eq(tb, "word count", p.WordCount, 1)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lane := tc.lane
			if lane == "" {
				lane = LanePlain
			}
			s := snap(lane, tc.body)
			if tc.hdr != nil {
				s.Header = tc.hdr
			}
			tc.check(t, ExtractWith(s, tc.opts))
		})
	}
}

// eq fails the test when got and want differ.
func eq(tb testing.TB, what string, got, want any) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

// TestExtractEmpty checks that a nil snapshot and a non-HTML response give
// empty, JSON-friendly pages while header fields are still read.
func TestExtractEmpty(t *testing.T) {
	t.Parallel()
	for _, p := range []*Page{Extract(nil), Extract(&Snapshot{})} {
		if p.Links == nil || p.H1 == nil || p.Hreflang == nil || p.JSONLDTypes == nil || p.Headings == nil || p.ImagesMissingAlt == nil || p.JSONLD == nil {
			t.Errorf("empty page has nil lists: %+v", p)
		}
	}
	s := snap(LanePlain, `<title>not parsed</title>`)
	s.ContentType = "application/pdf"
	s.Header = Header{"X-Robots-Tag": {"noindex"}, "Link": {`<http://shop.example/doc.pdf>; rel="canonical"`}}
	p := Extract(s)
	eq(t, "title", p.Title, "")
	eq(t, "noindex", p.Noindex, true)
	eq(t, "canonical header", p.CanonicalHeader, "http://shop.example/doc.pdf")
}

// TestExtractCharset checks that multi-byte text survives and that invalid
// UTF-8 (a body a lane failed to decode) never reaches the Page.
func TestExtractCharset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		body      string
		wantTitle string
		wantWords int
	}{
		{"utf-8 text", "<title>Café – Übersicht</title><p>Grüße aus Köln</p>", "Café – Übersicht", 3},
		{"latin-1 bytes left undecoded", "<title>Caf\xe9 \xfcber</title><p>Gr\xfc\xdfe aus K\xf6ln</p>", "Caf\uFFFD \uFFFDber", 3},
		{"truncated multi-byte sequence", "<title>Tea \xe6\x97</title>", "Tea \uFFFD", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := Extract(snap(LanePlain, tc.body))
			eq(t, "title", p.Title, tc.wantTitle)
			eq(t, "word count", p.WordCount, tc.wantWords)
			assertValidUTF8(t, p)
		})
	}
}

// TestExtractDeepNesting checks that 100,000 nested elements, far beyond the
// parser's limit of 512, still give an extract.
func TestExtractDeepNesting(t *testing.T) {
	t.Parallel()
	const depth = 100_000
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><title>Deep</title></head><body><h1>Top</h1>`)
	for range depth {
		b.WriteString("<div>")
	}
	b.WriteString(`deep words here <a href="/inner">inner</a>`)
	for range depth {
		b.WriteString("</div>")
	}
	b.WriteString(`<p>after the nesting</p><a href="/after">after</a></body></html>`)
	for _, lane := range []Lane{LanePlain, LaneRender} {
		p := Extract(snap(lane, b.String()))
		eq(t, string(lane)+" deep nesting", p.DeepNesting, true)
		eq(t, string(lane)+" title", p.Title, "Deep")
		eq(t, string(lane)+" h1", p.H1, []string{"Top"})
		eq(t, string(lane)+" word count", p.WordCount, 1+4+3+1)
		var hrefs []string
		for _, l := range p.Links {
			hrefs = append(hrefs, l.Href)
		}
		eq(t, string(lane)+" links", hrefs, []string{"http://shop.example/inner", "http://shop.example/after"})
	}
}

// TestExtractCaps checks that huge values and long lists are capped and
// that the Page says so.
func TestExtractCaps(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	huge := strings.Repeat("x", 1<<20)
	fmt.Fprintf(&b, `<title>%s</title><meta name="description" content="%s">`, huge, huge)
	fmt.Fprintf(&b, `<a href="/%s">long</a>`, huge)
	for i := range 3000 {
		fmt.Fprintf(&b, `<a href="/p%d">p</a><h2>h</h2><img src="/i%d.png">`, i, i)
	}
	p := Extract(snap(LanePlain, b.String()))
	if len(p.Title) > maxText || len(p.MetaDescription) > maxText {
		t.Errorf("title %d bytes, description %d bytes; want at most %d", len(p.Title), len(p.MetaDescription), maxText)
	}
	if len(p.Links[0].Href) > maxURL {
		t.Errorf("long href kept with %d bytes, want at most %d", len(p.Links[0].Href), maxURL)
	}
	eq(t, "links kept", len(p.Links), maxLinks)
	eq(t, "link count", p.LinkCount, 3001)
	eq(t, "headings kept", len(p.Headings), maxHeadings)
	eq(t, "images kept", len(p.ImagesMissingAlt), maxImages)
	eq(t, "truncated", p.Truncated, []string{"headings", "images_missing_alt", "links", "meta_description", "title"})
}

// assertValidUTF8 fails when any string reachable from v is not valid UTF-8.
func assertValidUTF8(tb testing.TB, v any) {
	tb.Helper()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if !utf8.ValidString(v.String()) {
				tb.Errorf("%s: invalid UTF-8 %q", path, v.String())
			}
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(path+"."+v.Type().Field(i).Name, v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		case reflect.Map:
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			for _, k := range keys {
				walk(path+"[key]", k)
				walk(path+"["+k.String()+"]", v.MapIndex(k))
			}
		}
	}
	walk("page", reflect.ValueOf(v))
}

// TestCollapse checks whitespace collapsing, including the no-copy path.
func TestCollapse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":               "",
		"a b":            "a b",
		"  a  b ":        "a b",
		"a\tb\n":         "a b",
		"\r\n":           "",
		"a\u00a0 b":      "a\u00a0 b",
		"one two  three": "one two three",
	} {
		if got := collapse(in); got != want {
			t.Errorf("collapse(%q) = %q, want %q", in, got, want)
		}
	}
}
