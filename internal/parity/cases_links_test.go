package parity

import "strings"

// linkTextCases: link-text-test.js, one page per anchor element (its href,
// rel, text and textLang), on https://example.com/page.html.
func linkTextCases() []lhCase {
	a := func(from, attrs, text string, pass bool) lhCase {
		return lhCase{audit: linkText, from: from, page: page{html: titled("", "<a "+attrs+">"+text+"</a>")}, pass: pass}
	}
	// Without a textLang the page declares no language.
	noLang := func(c lhCase) lhCase {
		c.page.html = strings.Replace(c.page.html, `<html lang="en">`, "<html>", 1)
		return c
	}
	const (
		fails   = "link-text-test: fails when link with non descriptive text is found"
		unknown = "link-text-test: considers all non descriptive link texts with unknown language"
		main    = "link-text-test: ignores links pointing to the main document"
		passes  = "link-text-test: passes when all links have descriptive texts"
		other   = `href="https://example.com/otherpage.html"`
	)
	return []lhCase{
		a(fails, other+` lang="en"`, "legit link text", true),
		a(fails, other+` lang="en"`, "click here", false),
		a(fails, other+` lang="de"`, "klicke hier", false),
		a(fails, other+` lang="es"`, "click aquí", false),
		a(fails, other+` lang="de"`, "legitimer Link-Text", true),
		a(fails, other+` lang="en-US"`, "click here", false),
		a(fails, other+` lang="de-DE"`, "klicke hier", false),
		noLang(a(unknown, other, "legit link text", true)),
		noLang(a(unknown, other, "click here", false)),
		noLang(a(unknown, other, "klicke hier", false)),
		noLang(a(unknown, other, "click aquí", false)),
		a(main, `href="https://example.com/page.html"`, "click here", true),
		a(main, `href="https://example.com/page.html#test"`, "click here", true),
		a(main, other, "legit link text", true),
		a("link-text-test: ignores javascript: links", `href="javascript:alert(1)"`, "click here", true),
		a("link-text-test: ignores javascript: links", `href='JavaScript:window.location="/otherpage.html"'`, "click here", true),
		a("link-text-test: ignores javascript: links", `href="JAVASCRIPT:void(0)"`, "click here", true),
		a("link-text-test: ignores mailto: links", `href="mailto:info@example.com"`, "click here", true),
		a("link-text-test: ignores mailto: links", `href="mailto:mailmaster@localhost"`, "click here", true),
		a("link-text-test: ignores links with no href", ``, "click here", true),
		a("link-text-test: ignores links with nofollow", `rel="noopener nofollow"`, "click here", true),
		a("link-text.js: ignores links with nofollow (with an href)", other+` rel="nofollow"`, "click here", true),
		a(passes, other+` lang="en"`, "legit link text", true),
		a(passes, other+` lang="de"`, "legitimer Link-Text", true),
		a(passes, `href="http://example.com/page.html?test=test" lang="en"`, "legit link text", true),
		a(passes, `href="file://Users/user/Desktop/file.png" lang="en"`, "legit link text", true),
	}
}

// anchorCases: crawlable-anchors-test.js, one anchor per case as its
// runAudit helper builds it (rawHref, role, name, id, onclick, listeners),
// on http://example.com. The test's "empty href and no other meaningful
// attributes" case (an href attribute whose resolved href is "") cannot
// come from a document, where href="" resolves to the page's URL (its
// "empty attribute that links to current page" case), so it is left out.
func anchorCases() []lhCase {
	a := func(from, attrs string, pass bool) lhCase {
		return lhCase{audit: crawlableAnchors, from: from, page: page{url: "http://example.com", html: titled("", "<a"+attrs+">Some link</a>")}, pass: pass}
	}
	const allows = "crawlable-anchors-test: allows crawlable anchors"
	cases := []lhCase{
		a(allows, ` href="#top"`, true),
		a(allows, ` href="mailto:name@example.com"`, true),
		a(allows, ` href="https://example.com"`, true),
		a(allows, ` href="foo"`, true),
		a(allows, ` href="/foo"`, true),
		a(allows, ` href="#:~:text=string"`, true),
		{audit: crawlableAnchors, from: allows + " (an FTP hyperlink)", page: page{url: "http://example.com",
			html: titled("", `<a href="ftp://myname@host.dom">Some link</a>`)}, pass: true, differ: "ftp-href"},
		a(allows, ` href="http://172.217.20.78"`, true),
		a(allows, ` href="//example.com"`, true),
		a(allows, ` href="tel:5555555"`, true),
		a(allows, ` href="#"`, true),
		a(allows+" (placeholder anchor element)", ``, true),
		a(allows, ` href="?query=string"`, true),
		a(allows+" (invalid FTP links fails)", ` href="ftp://"`, false),
		a(allows+" (empty attribute that links to current page)", ` href=""`, true),
		a("crawlable-anchors-test: allows anchors acting as an ID anchor", ` id="example"`, true),
		a("crawlable-anchors-test: allows anchors which use a name attribute", ` name="name"`, true),
		a("crawlable-anchors-test: handles anchors with a role attribute", ` role="some-role" href="javascript:void(0)"`, true),
		a("crawlable-anchors-test: handles anchors with a role attribute", ` role="a"`, true),
		a("crawlable-anchors-test: handles anchors with a role attribute (a space fails)", ` role=" " rel=""`, false),
		a("crawlable-anchors-test: handles anchor elements which use event listeners", ` href="/validPath" LISTENER`, true),
		a("crawlable-anchors-test: handles anchor elements which use event listeners", ` href="javascript:void(0)" LISTENER`, false),
		a("crawlable-anchors-test: handles anchor elements which use event listeners", ` LISTENER`, false),
		a("crawlable-anchors-test: handles anchor elements which use event listeners", ` href="/validPath"`, true),
		a("crawlable-anchors-test: disallows uncrawlable anchors (only a target attribute)", ` target="_blank"`, false),
		a("crawlable-anchors-test: disallows uncrawlable anchors (a file: URI)", ` href="file:///image.png"`, false),
		a("crawlable-anchors-test: disallows uncrawlable anchors (name of spaces)", ` name=" " rel=""`, false),
		a("crawlable-anchors-test: disallows uncrawlable anchors (href of spaces)", ` href=" "`, true),
		a("crawlable-anchors-test: disallows uncrawlable anchors (onclick of spaces)", ` href=" " onclick=" "`, true),
		a("crawlable-anchors-test: handles window.open in an onclick attribute and mailto: in a href attribute", ` href="mailto:name@example.com" onclick="window.open()"`, true),
		// crawlable-anchors.js exempts any role; Lekta keeps role=link.
		{audit: crawlableAnchors, from: "crawlable-anchors.js: a role=link anchor with only a click handler", page: page{url: "http://example.com",
			html: titled("", `<a role="link" LISTENER>Some link</a>`)}, pass: true, differ: "role-link-anchor"},
		a("crawlable-anchors.js: role=button with a click handler is exempt", ` role="button" LISTENER`, true),
	}
	for _, v := range []string{"javascript:void(0)", "javascript: void(0)", "javascript : void(0)", "javascript : void ( 0 )",
		"javascript: void 0", "javascript:void 0", "javascript:void0"} {
		cases = append(cases, a("crawlable-anchors-test: handles javascript:void expressions", ` href="`+v+`"`, false))
	}
	for _, v := range []string{"window.location=", "window.location =", "window.open()", "window.open('')", "window.open(`http://example.com`)",
		"window.open ( )", "window.open('foo', 'name', 'resizable)", "windowAlocation", "window.location.href", "window.Location =", "windowLopen()"} {
		cases = append(cases, a("crawlable-anchors-test: handles window.location and window.open assignments in an onclick attribute",
			` href="/validPath" onclick="`+v+`"`, true))
	}
	return cases
}
