package compare

// soft404Part is the part of a lane's page that says not found (see
// notFoundPart) when the lane answered 200 with HTML, else "".
func (s side) soft404Part() string {
	p := s.htmlPage()
	if p == nil || s.snap == nil || s.snap.Status != 200 {
		return ""
	}
	return notFoundPart(p)
}

// soft404Findings reports pages that answer 200 but say they were not
// found, and recognises the two ways Google recommends apps that render in
// the browser handle a not-found route: a noindex added by script, or a
// script redirect to an address that answers 404 or 410.
func (d *differ) soft404Findings(l *findingList) {
	if d.redirectedToError(l) {
		return
	}
	pp, rp := d.p.soft404Part(), d.r.soft404Part()
	p, r := d.p.page, d.r.page
	switch {
	case pp != "" && rp != "":
		if p.Noindex && r.Noindex {
			return
		}
		l.add(CodeSoft404, "", "The page answers 200 but says it was not found in both the server HTML and the rendered page (%s) with little other content. Google treats it as a soft 404, and other crawlers may index the error page as content; answer with 404 or 410 instead.", notFoundQuote(p, pp))
		l.cause(&Cause{Kind: CauseSoft404, Mechanism: "both", Element: pp})
	case rp != "" && p != nil:
		switch {
		case r.Noindex && p.Noindex:
			return
		case r.Noindex:
			l.add(CodeSoft404Handled, LaneRender, "The rendered page is the app's not-found page (%s) and a script adds a noindex to it, as Google recommends for apps that render in the browser, so Google does not index the address: this is handled correctly. Crawlers that do not render still get the server's 200 page without the noindex.", notFoundQuote(r, rp))
		case p.WordCount > maxNotFoundWords:
			// Server HTML with content of its own is no empty shell.
			l.add(CodeSoft404RenderOnly, LaneRender, "The server answers 200 with a page of %d words, but the rendered page is the app's not-found page (%s). Google will likely classify the address as a soft 404, while AI crawlers that do not render index the server's page. Make the app show that page, or answer 404 if the address is not meant to exist.", p.WordCount, notFoundQuote(r, rp))
		default:
			l.add(CodeSoft404RenderOnly, LaneRender, "The server answers 200 with HTML that does not say the page is missing, but the rendered page is the app's not-found page (%s). Google will likely classify the address as a soft 404, and AI crawlers that do not render index the empty shell as if it were a page. Answer 404 for addresses the app does not know, or add a noindex on the not-found route.", notFoundQuote(r, rp))
		}
		l.cause(&Cause{Kind: CauseSoft404, Mechanism: "render", Element: rp})
	case rp != "":
		if !r.Noindex {
			l.add(CodeSoft404, LaneRender, "The page answers 200 but the rendered page says it was not found (%s) with little other content. Google treats it as a soft 404; answer with 404 or 410 instead.", notFoundQuote(r, rp))
			l.cause(&Cause{Kind: CauseSoft404, Mechanism: "render", Element: rp})
		}
	case pp != "":
		if !p.Noindex {
			l.add(CodeSoft404, LanePlain, "The page answers 200 but the server HTML says it was not found (%s) with little other content. Crawlers that do not render may index the error page as content, and Google treats such pages as soft 404s; answer with 404 or 410 instead.", notFoundQuote(p, pp))
			l.cause(&Cause{Kind: CauseSoft404, Mechanism: "plain", Element: pp})
		}
	}
}

// redirectedToError recognises a 200 server page whose script or meta
// refresh sent the browser to an address that answers 404 or 410, and
// reports it as handled.
func (d *differ) redirectedToError(l *findingList) bool {
	ps, rs := d.p.snap, d.r.snap
	if !redirectsToError(ps, rs) {
		return false
	}
	target := rs.FinalURL
	if target == "" {
		target = rs.Render.ClientRedirects[len(rs.Render.ClientRedirects)-1].To
	}
	l.add(CodeSoft404Handled, LaneRender, "The server answers 200 and the page then sends the browser to %s, which answers %d: the pattern Google recommends for apps that render in the browser, so Google does not index the address. This is handled correctly. Crawlers that do not render still get the server's 200 page.", q(target), rs.Status)
	l.cause(&Cause{Kind: CauseSoft404, Mechanism: "render", Target: target})
	return true
}

// redirectsToError reports whether the server answered the plain fetch 200
// and the page then moved the browser, by a client redirect, to an address
// that answers 404 or 410: the browser's status is that address's.
func redirectsToError(ps, rs *Snapshot) bool {
	if ps == nil || rs == nil || rs.Render == nil || ps.Status != 200 || len(rs.Render.ClientRedirects) == 0 {
		return false
	}
	return rs.Status == 404 || rs.Status == 410
}
