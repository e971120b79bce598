package parity

// The pages of Lighthouse's SEO smoke tests (cli/test/fixtures/seo and the
// smokehouse expectations seo-failing, seo-passing, seo-mixed-language),
// rewritten: the same elements, headers and scripts, in Lekta's words.

const seoBase = "http://localhost:10200/seo/"

// failurePage has every failure of seo-failure-cases.html; its headers
// add X-Robots-Tag: none and an hreflang and a canonical in Link.
var failurePage = page{
	url: seoBase + "seo-failure-cases.html",
	header: map[string][]string{
		"X-Robots-Tag": {"none"},
		"Link":         {`<http://example.com>;rel="alternate";hreflang="xx"`, `<https://example.com>; rel="canonical"`},
	},
	html: `<!doctype html><html><head><meta charset="utf-8">
<meta name="RoBots" content="nofollow, NOINDEX, all">
<link rel="alTeRnate" hreflang="xx" href="https://xx.example.com">
<link rel="alternate" hreflang="es">
<link rel="alternate" hreflang="es" href="/example.html">
<link rel="alternate" href="http://example.com/" hreflang=" x-default">
<link rel="canonical" href="https://example.com/other">
</head><body><h1>Failures</h1>
<a href="https://example.com">click this</a>
<a href="/test.html"> click this </a>
<a href="/test.html">CLICK THIS</a>
<a href="/test.html" lang="de">klicke hier</a>
<svg><a href="https://example.com/svg-link"><circle cx="5" cy="5" r="5"/><text x="0" y="0">click this</text></a></svg>
<a onclick="window.open('http://example.com')">Opens a window</a>
<a href="javascript:void(0)">Void</a>
<a class="listened" LISTENER>Mousedown</a>
<div class="parent"><a>Parent listener only</a></div>
</body></html>`,
}

// testerPage passes every audit but crawlable-anchors, as seo-tester.html.
var testerPage = page{
	url:    seoBase + "seo-tester.html",
	header: map[string][]string{"Link": {`<http://localhost:10200/seo/>; rel="canonical"`}},
	html: `<!doctype html><html lang="en"><head><title>SEO tester</title><meta charset="utf-8">
<meta name="Description" content="A page that passes the SEO audits it can pass">
<link rel="alternate" hreflang="es" href="https://lat.example.com">
<link rel="alternate" Hreflang="en-PH" href="https://ph.example.com">
<LINK REL="ALTERNATE" HREFLANG="ru-RU" HREF="https://ru.example.com">
<LINK REL="alternate" HREFLANG="zh-Hans-TW" HREF="https://zh.example.com">
<link rel="alternate" href="http://example.com/" hreflang="x-default">
<link rel="canonical" href="http://localhost:10200/seo/">
</head><body>
<link rel="alternate" hreflang="nonsense" href="https://nonsense.example.com">
<link rel="canonical" href="http://localhost:10200/seo/">
<h1>SEO</h1>
<a href="https://example.com">a descriptive link</a>
<a href="#non-descriptive-local">click this</a>
<a href="https://example.com/no-follow.html" rel="nofollow">click this</a>
<a href="javascript:;">click this</a>
<a href="/pass">Relative link</a>
<a class="listened" LISTENER>Click listener</a>
<a onclick="window.Location = '';">Onclick</a>
</body></html>`,
}

// mixedLanguage are the anchors of seo-mixed-language.html (an English
// page), with what the smoke test expects of each: pass is false for the
// 15 links it reports.
var mixedLanguage = []struct {
	anchor string
	pass   bool
}{
	{`<a href="/en/nav" title="English"><span>English</span></a>`, true},
	{`<a href="/de/nav" title="German" lang="en" rel="alternate" hreflang="de"><span lang="de">Deutsch</span></a>`, true},
	{`<a href="/de/nav-en" title="Deutsch" lang="de" rel="alternate" hreflang="de"><span lang="en">German</span></a>`, true},
	{`<a href="/seo/seo-mixed-language.html" lang="de-DE">klicke hier</a>`, true},
	{`<a href="" lang="de-DE">klicke hier</a>`, true},
	{`<a href="/region-en-us" lang="en-US">Start</a>`, false},
	{`<a href="/region-de-de" lang="de-DE">Start</a>`, true},
	{`<a href="/region-de-ch"><span lang="de-CH">Start</span></a>`, true},
	{`<a href="/mixed"><span lang="de-DE">click</span> <span lang="fr">here</span></a>`, false},
	{`<a href="/icon-no-alt"><img src="" alt=""> here</a>`, false},
	{`<a href="/icon-alt"><img src="" alt="click"> here</a>`, false},
	{`<a href="/icon-alt-span"><img src="" alt="click"> <span>here</span></a>`, false},
	{`<a href="/icon-alt-nested"><img src="" alt="click"> <span>click <span>here</span></span></a>`, false},
	{`<a href="/nested-div"><div>click <img src="" alt="click"><span>here</span></div></a>`, false},
	{`<a href="/german-img"><img src="" lang="de"> here</a>`, false},
	{`<a href="/german-img-alt"><img src="" alt="click" lang="de"> here</a>`, false},
	{`<a href="/german-img-span"><img src="" alt="click" lang="de"> <span>click <span>here</span></span></a>`, false},
	{`<a href="/german-img-nested"><span>click<img src="" alt="click" lang="de"> <span>here</span></span></a>`, false},
	{`<svg width="200" height="18"><a href="/svg-circle"><circle cx="2" cy="11" r="2"/><text x="5" y="18">here</text></a></svg>`, false},
	{`<svg width="200" height="18"><a href="/svg-text"><text x="40" y="18">here</text></a></svg>`, false},
	{`<svg width="200" height="18"><a href="/svg-de" lang="de"><text x="80" y="18">hier</text></a></svg>`, false},
}

// fixtureCases are the smoke tests' expectations per page and audit.
func fixtureCases() []lhCase {
	var cases []lhCase
	for a, pass := range map[audit]bool{documentTitle: false, metaDescription: false, httpStatusCode: true, crawlableAnchors: false,
		linkText: false, isCrawlable: false, hreflang: false, canonical: false} {
		cases = append(cases, lhCase{audit: a, from: "seo-failing smoke test", page: failurePage, pass: pass})
	}
	for a, pass := range map[audit]bool{documentTitle: true, metaDescription: true, httpStatusCode: true, crawlableAnchors: false,
		linkText: true, isCrawlable: true, hreflang: true, canonical: true, robotsTxt: true} {
		cases = append(cases, lhCase{audit: a, from: "seo-passing smoke test", page: testerPage, pass: pass})
	}
	all := ""
	for _, m := range mixedLanguage {
		all += m.anchor + "\n"
		cases = append(cases, lhCase{audit: linkText, from: "seo-mixed-language smoke test: " + m.anchor,
			page: page{url: seoBase + "seo-mixed-language.html", html: `<!doctype html><html lang="en"><head><title>Mixed</title></head><body>` + m.anchor + `</body></html>`}, pass: m.pass})
	}
	// Lighthouse finds the text's language with closest('[lang]'), which
	// does not see xml:lang on SVG elements; the HTML standard gives it to
	// them, and Lekta reads it.
	cases = append(cases, lhCase{audit: linkText, from: "seo-mixed-language smoke test: SVG text with xml:lang",
		page: page{url: seoBase + "seo-mixed-language.html", html: `<!doctype html><html lang="en"><head><title>Mixed</title></head><body>` +
			`<svg width="200" height="18"><a href="/svg-xml-lang"><text x="120" y="18" xml:lang="de-DE">start</text></a></svg></body></html>`},
		pass: false, differ: "svg-xml-lang"},
		lhCase{audit: linkText, from: "seo-mixed-language smoke test (whole page)",
			page: page{url: seoBase + "seo-mixed-language.html", html: `<!doctype html><html lang="en"><head><title>Mixed</title></head><body>` + all + `</body></html>`}, pass: false})
	return cases
}
