package parity

// crawlableCases: is-crawlable-test.js, on https://example.com/ (and
// http://example.com/test/page.html for robots.txt). Its RobotsTxt: {}
// (no robots.txt read) is a 404 here; a robots.txt that cannot be read is
// its own case.
func crawlableCases() []lhCase {
	meta := func(content string, pass bool) lhCase {
		return lhCase{audit: isCrawlable, from: "is-crawlable-test: robots metatag " + content,
			page: page{url: "https://example.com/", html: titled(`<meta name="robots" content="`+content+`">`, "")}, pass: pass}
	}
	header := func(values []string, pass bool) lhCase {
		return lhCase{audit: isCrawlable, from: "is-crawlable-test: robots header",
			page: page{url: "https://example.com/", header: map[string][]string{"X-Robots-Tag": values}, html: titled("", "")}, pass: pass}
	}
	robots := func(from, content string, pass bool) lhCase {
		return lhCase{audit: isCrawlable, from: from,
			page: page{url: "http://example.com/test/page.html", html: titled("", ""), robots: &robotsFile{200, content}}, pass: pass}
	}
	var cases []lhCase
	for _, v := range []string{"noindex", "none", "foo, noindex, bar", "all, none, all", "     noindex      ",
		"all, unavailable_after: 25 Jun 2010 15:00:00 PST", " Unavailable_after: 25-Aug-2007 15:00:00 EST, all"} {
		cases = append(cases, meta(v, false))
	}
	cases = append(cases, meta("all, noarchive", true),
		lhCase{audit: isCrawlable, from: "is-crawlable-test: succeeds when there is no robots metatag", page: page{url: "https://example.com/", html: titled("", "")}, pass: true})
	for _, h := range [][]string{{"noindex"}, {"all", "none"}, {"all, none"}, {"    noindex    "},
		{"unavailable_after: 25 Jun 2010 15:00:00 PST, all"}, {"all, unavailable_after: 25-Jun-2010 15:00:00 PST"}} {
		cases = append(cases, header(h, false))
	}
	cases = append(cases,
		header([]string{"all, nofollow", "unavailable_after: 25 Jun 2045 15:00:00 PST"}, true),
		header([]string{"googlebot: unavailable_after: 25 Jun 2007 15:00:00 PST", "unavailable_after: 25 Jun 2045 15:00:00 PST"}, true),
		robots("is-crawlable-test: fails when page is blocked by robots.txt", "User-agent: *\n        Disallow: /", false),
		robots("is-crawlable-test: fails when page is blocked by robots.txt", "User-agent: *\n        Disallow: /test/page.html", false),
		robots("is-crawlable-test: fails when page is blocked by robots.txt", "User-agent: *\n        Disallow:\n\n        User-agent: *\n        Disallow: /", false),
		robots("is-crawlable-test: fails when page is blocked by robots.txt", "User-agent: *\n        Disallow: /one/\n        Disallow: /two/\n        Disallow: /test/\n        Allow: page.html\n        # Allow: /test/page.html\n        Allow: /test/page.html /someother/url.html", false),
		robots("is-crawlable-test: succeeds when page is allowed by robots.txt", "User-agent: SomeBot\n        Disallow: /", true),
		robots("is-crawlable-test: succeeds when page is allowed by robots.txt", "User-agent: *\n        Disallow: /_/\n        Disallow: /search?q=*\n        Disallow: /test/\n        Allow: /test/page.html", true),
		lhCase{audit: isCrawlable, from: "is-crawlable-test: returns all failing items", page: page{url: "http://example.com/test/page.html",
			header: map[string][]string{"X-Robots-Tag": {"none", "noindex"}}, html: titled(`<meta name="robots" content="noindex">`, ""),
			robots: &robotsFile{200, "User-agent: *\n      Disallow: /"}}, pass: false},
		robots("is-crawlable-test: warns when page allows some crawlers but not others", "\n        User-agent: googlebot\n        Allow: /\n\n        User-agent: *\n        Disallow: /\n        ", true),
		lhCase{audit: isCrawlable, from: "is-crawlable-test: warns when page allows some crawlers but not others", page: page{url: "http://example.com/test/page.html",
			header: map[string][]string{"X-Robots-Tag": {"bingbot: noindex"}}, html: titled("", ""),
			robots: &robotsFile{200, "User-agent: Googlebot\nDisallow: /\n\nUser-agent: bingbot\nAllow: /\n\nUser-agent: archive.org_bot\nAllow: /\n\nUser-agent: *\nDisallow: /\n"}}, pass: true},
		lhCase{audit: isCrawlable, from: "is-crawlable-test: warns when page allows some crawlers but not others", page: page{url: "http://example.com/test/page.html",
			html:   titled(`<meta name="archive.org_bot" content="noindex">`, ""),
			robots: &robotsFile{200, "User-agent: googlebot\nAllow: /\n\nUser-agent: bingbot\nAllow: /\n\nUser-agent: archive.org_bot\nAllow: /\n\nUser-agent: *\nDisallow: /\n"}}, pass: true},
		// is-crawlable.js reads no robots.txt it could not fetch; RFC 9309
		// says a 5xx means crawl nothing.
		lhCase{audit: isCrawlable, from: "is-crawlable.js: robots.txt answers 500", page: page{url: "https://example.com/", html: titled("", ""),
			robots: &robotsFile{500, "User-agent: *\nAllow: /\n"}}, pass: true, differ: "robots-500"},
	)
	return cases
}

// robotsTxtCases: robots-txt-test.js.
func robotsTxtCases() []lhCase {
	c := func(from string, status int, content string, pass bool) lhCase {
		return lhCase{audit: robotsTxt, from: from, page: page{robots: &robotsFile{status, content}}, pass: pass}
	}
	const errs = "robots-txt-test: fails when robots.txt file contains errors"
	const valid = "robots-txt-test: passes when robots.txt is valid"
	return []lhCase{
		c("robots-txt-test: fails and reports error when no robots.txt was provided", 0, "", false),
		c("robots-txt-test: fails when request for /robots.txt returns a HTTP500+ error", 500, "", false),
		c("robots-txt-test: fails when request for /robots.txt returns a HTTP500+ error", 503, "There is some content", false),
		c("robots-txt-test: fails when request for /robots.txt returns a HTTP500+ error", 599, "", false),
		c(errs, 200, "Allow: /", false),
		c(errs, 201, "syntax error", false),
		c(errs, 200, "unknown: directive", false),
		c(errs, 200, "sitemap: /cant/be/relative.xml", false),
		c(errs, 200, "sitemap:#can't be empty", false),
		c(errs, 200, "user-agent: *\nallow: https://cant.be/absolute", false),
		c(errs, 399, "user-agent: *\nallow: must/start/with/a/slash", false),
		c(errs, 200, "user-agent: *\nallow: /dolar/sign$in/the/middle", false),
		c(errs, 200, "user-agent: *\nallow: must/start/with/a/slash", false),
		c(errs, 200, "user-agent: *\nallow: /\ndisallow: /test\n\nuser agent: wrong\nalow: /wrong\ndisallow /wrong\n", false),
		c(errs, 200, "every\nsingle\nline\nis\nwrong\n", false),
		c("robots-txt-test: not applicable when there is no robots.txt or it's empty", 404, "invalid content", true),
		c("robots-txt-test: not applicable when there is no robots.txt or it's empty", 401, "invalid content", true),
		c("robots-txt-test: not applicable when there is no robots.txt or it's empty", 200, "", true),
		c(valid, 200, "#just a comment", true),
		c(valid, 201, "user-agent:*\ndisallow:", true),
		c(valid, 200, "USER-AGENT:  *\nALLOW:    /         \nDISALLOW:#comment", true),
		c(valid, 204, "User-agent: Twitterbot\nDisallow:\n\nUser-agent: BadBot\nDisallow: / # go away!\n\nSitemap: https://example.com/sitemap.xml\n\n"+
			"User-agent: Yandex\nHost: https://brainly.com\nclean-param: bla\n\nUser-agent: Bing\nDisallow: /*.swf$\ncrawl-delay: 10\n\n"+
			"User-agent: NotOfficial\nnoindex: /bla\nVisit-time: 0600-0845\nRequest-rate: 1/30m\n\n"+
			"User-agent: RespectfulAI\nContent-Signal: ai-train=yes, search=yes, ai-input=yes\n", true),
		c("robots-txt.js: a Content-Signal line is accepted", 200, "User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n", true),
	}
}
