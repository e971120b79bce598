package parity

// htmlDoc is a small page with a title and a description, head and body
// added.
func htmlDoc(head, body string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8">` + head +
		`</head><body><h1>Kettles</h1><p>Stoneware kettles, made by hand.</p>` + body + `</body></html>`
}

// titled is htmlDoc with a title and a description.
func titled(head, body string) string {
	return htmlDoc(`<title>Kettles</title><meta name="description" content="Stoneware kettles, made by hand.">`+head, body)
}

// allCases are the cases of every audit.
func allCases() []lhCase {
	var cases []lhCase
	for _, f := range []func() []lhCase{titleCases, statusCases, descriptionCases, canonicalCases, hreflangCases,
		linkTextCases, anchorCases, crawlableCases, robotsTxtCases, fixtureCases} {
		cases = append(cases, f()...)
	}
	return cases
}

// titleCases: Lighthouse's document-title is axe's rule: a <title> with
// text (audits/accessibility/document-title-test.js gives axe's verdicts;
// these are the pages behind them).
func titleCases() []lhCase {
	c := func(from, head string, pass bool) lhCase {
		return lhCase{audit: documentTitle, from: from, page: page{html: htmlDoc(head, "")}, pass: pass}
	}
	return []lhCase{
		c("document-title: no <title>", "", false),
		c("document-title: empty <title>", "<title></title>", false),
		c("document-title: <title> of spaces", "<title>  \t </title>", false),
		c("document-title: <title> of no-break spaces", "<title>\u00a0</title>", false),
		c("document-title: a title", "<title>Kettles</title>", true),
	}
}

// statusCases: http-status-code-test.js.
func statusCases() []lhCase {
	c := func(status int, pass bool) lhCase {
		return lhCase{audit: httpStatusCode, from: "http-status-code-test: fails when status code is unsuccessful / passes", page: page{status: status, html: titled("", "")}, pass: pass}
	}
	return []lhCase{c(403, false), c(404, false), c(500, false), c(200, true), c(503, false)}
}

// descriptionCases: meta-description-test.js, and the gatherer's source
// (MetaElements reads "head meta" only).
func descriptionCases() []lhCase {
	c := func(from, head, body string, pass bool) lhCase {
		return lhCase{audit: metaDescription, from: from, page: page{html: htmlDoc("<title>Kettles</title>"+head, body)}, pass: pass}
	}
	return []lhCase{
		c("meta-description-test: fails when HTML does not contain a description meta tag", "", "", false),
		c("meta-description-test: fails when HTML contains an empty description meta tag", `<meta name="description" content="">`, "", false),
		c("meta-description-test: fails when description consists only of whitespace", "<meta name=\"description\" content=\"\t\u00a0\">", "", false),
		c("meta-description-test: passes when a description text is provided", `<meta name="description" content="description text">`, "", true),
		c("meta-description: the name is read case-insensitively", `<meta name="Description" content="description text">`, "", true),
		c("meta-elements gatherer: only metas in <head> count", "", `<meta name="description" content="description text">`, false),
	}
}

// canonicalCases: canonical-test.js, and the audit's source (URLs compared
// as URL.href writes them).
func canonicalCases() []lhCase {
	c := func(from, u, head string, header []string, pass bool) lhCase {
		h := map[string][]string{}
		for _, v := range header {
			h["Link"] = append(h["Link"], v)
		}
		return lhCase{audit: canonical, from: from, page: page{url: u, header: h, html: titled(head, "")}, pass: pass}
	}
	return []lhCase{
		c("canonical-test: succeeds when there are no canonical links", "https://example.com/", "", nil, true),
		c("canonical-test: fails when there are multiple canonical links", "http://www.example.com/",
			`<link rel="canonical" href="https://www.example.com">`, []string{`<https://example.com>; rel="canonical"`}, false),
		c("canonical-test: fails for a URL with a space in the host", "http://www.example.com",
			`<link rel="canonical" href="https:// example.com">`, nil, false),
		c("canonical-test: fails for a URL invalid, the parser returns null", "http://www.example.com",
			`<link rel="canonical" href="I am not a URL">`, nil, false),
		c("canonical-test: fails when canonical url is relative", "https://example.com/de/", "", []string{`</>; rel="canonical"`}, false),
		c("canonical-test: fails when canonical points to a different hreflang", "https://example.com/",
			`<link rel="canonical" href="https://example.com/fr"><link rel="alternate" hreflang="fr" href="https://example.com/fr">`,
			[]string{`<https://example.com/>; rel="alternate"; hreflang="xx"`}, false),
		c("canonical-test: passes when canonical points to the root while current URL is also the root", "https://example.com/",
			`<link rel="canonical" href="https://example.com">`, nil, true),
		c("canonical-test: fails when canonical points to the root while current URL is not the root", "https://example.com/articles/cats-and-you",
			`<link rel="canonical" href="https://example.com">`, nil, false),
		c("canonical-test: succeeds when there are multiple identical canonical links", "http://www.example.com/",
			`<link rel="canonical" href="https://example.com">`, []string{`<https://example.com>; rel="canonical"`}, true),
		c("canonical-test: succeeds when valid canonical is provided via meta tag", "http://example.com/articles/cats-and-you?utm_source=twitter",
			`<link rel="canonical" href="https://example.com/articles/cats-and-you">`, nil, true),
		c("canonical-test: succeeds when valid canonical is provided via header", "http://example.com/articles/cats?utm_source=twitter",
			"", []string{`<https://example.com/articles/cats>; rel="canonical"`}, true),
		{audit: canonical, from: "canonical-test: succeeds when invalid canonical is provided in body",
			page: page{url: "http://example.com/articles/cats-and-you?utm_source=twitter", html: titled("", `<link rel="canonical" href="https://foo.com">`)}, pass: true},
		c("canonical.js: the element and the Link header compared as URL.href (a root without slash)", "https://example.com/",
			`<link rel="canonical" href="https://example.com/">`, []string{`<https://example.com>; rel="canonical"`}, true),
		c("canonical.js: a relative canonical element", "https://example.com/a/b", `<link rel="canonical" href="/a/b">`, nil, false),
	}
}

// hreflangCases: hreflang-test.js, one page per link element, and the
// audit's source.
func hreflangCases() []lhCase {
	alt := func(from, lang, href string, header, pass bool) lhCase {
		p := page{html: titled("", "")}
		if header {
			p.header = map[string][]string{"Link": {"<" + href + `>; rel="alternate"; hreflang="` + lang + `"`}}
		} else {
			p.html = titled(`<link rel="alternate" hreflang="`+lang+`" href="`+href+`">`, "")
		}
		return lhCase{audit: hreflang, from: from, page: p, pass: pass}
	}
	var cases []lhCase
	const invalid = "hreflang-test: fails when the language code provided in hreflang via link element is invalid"
	cases = append(cases,
		alt(invalid, "xx1", "http://example.com/", true, false),
		alt(invalid, "XX-be", "http://example.com/", true, false),
		alt(invalid, "XX-be-Hans", "http://example.com/", false, false),
		alt(invalid, "  es", "http://example.com/", false, false),
		alt(invalid, "  es", "http://example.com/", true, false))
	for _, lang := range []string{"xx", "XX-be", "XX-be-Hans", "", "  es"} {
		cases = append(cases, lhCase{audit: hreflang, from: "hreflang-test: succeeds when the language code provided in hreflang via body is invalid",
			page: page{html: titled("", `<link rel="alternate" hreflang="`+lang+`" href="https://example.com">`)}, pass: true})
	}
	for i, lang := range []string{"pl", "nl-be", "zh-Hans", "x-default", "FR-BE"} {
		cases = append(cases, alt("hreflang-test: succeeds when language code provided via head/headers is valid", lang, "https://example.com", i%2 == 0, true))
	}
	cases = append(cases, lhCase{audit: hreflang, from: "hreflang-test: succeeds when there are no rel=alternate link elements nor headers", page: page{html: titled("", "")}, pass: true})
	for i, lang := range []string{"xx1", "xx2", "xx3", "xx4"} {
		cases = append(cases, alt("hreflang-test: returns all failing items", lang, "http://"+lang+".example.com/", i < 2, false))
	}
	cases = append(cases,
		alt("hreflang-test: fails when the hreflang url is not fully-qualified", "es", "example.com", false, false),
		alt("hreflang-test: fails when the hreflang url is not fully-qualified", "es", "//example.com", true, false),
		alt("hreflang-test: fails with an invalid language code and a href which is not fully-qualified", " es", "example.com", false, false),
		alt("hreflang-test: fails with an invalid language code and a href which is not fully-qualified", "xx1", "//example.com", true, false),
		alt("hreflang-test: outputs the reasons for which a hreflang failed", "@@", "example.com", false, false),
		alt("hreflang-test: outputs the reasons for which a hreflang failed", "fr", "example.com", false, false),
		alt("hreflang-test: outputs the reasons for which a hreflang failed", "@@", "https://example.com", false, false),
		alt("hreflang-test: outputs the reasons for which a hreflang failed", "fr", "https://example.com", false, true),
		lhCase{audit: hreflang, from: "hreflang.js: a link without href is not fully qualified",
			page: page{html: titled(`<link rel="alternate" hreflang="es">`, "")}, pass: false},
	)
	// hreflang.js skips an empty hreflang; Lekta reports it.
	c := alt("hreflang.js: an empty hreflang is not audited", "", "https://example.com/es", false, true)
	c.differ = "empty-hreflang"
	return append(cases, c)
}
