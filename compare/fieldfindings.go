package compare

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// textCodes are the three codes of a string field's difference.
type textCodes struct{ renderOnly, plainOnly, changed string }

// compareText reports a string field that scripts add, remove or change,
// with one message format per case (values are quoted in). cause is the
// rendered value's cause, for the added and changed cases (removals are
// not recorded).
func compareText(l *findingList, codes textCodes, plain, render string, cause *Cause, renderOnly, plainOnly, changed string) {
	switch {
	case plain == render:
	case plain == "":
		l.add(codes.renderOnly, "", renderOnly, q(render))
		l.cause(cause)
	case render == "":
		l.add(codes.plainOnly, "", plainOnly, q(plain))
	default:
		l.add(codes.changed, "", changed, q(plain), q(render))
		l.cause(cause)
	}
}

// headText is one string field of the head that headFindings compares.
type headText struct {
	codes textCodes
	field headField
	// tag is the head-only tag of the field, which the parser may move
	// into the body of the server HTML; -1 for none.
	tag                            headTag
	noun                           string
	get                            func(*Page) string
	renderOnly, plainOnly, changed string
}

// headTexts are the string fields of the head, in report order.
var headTexts = []headText{
	{textCodes{CodeTitleRenderOnly, CodeTitlePlainOnly, CodeTitleChanged}, fieldTitle, -1, "The title", func(p *Page) string { return p.Title },
		"The title %s is set by JavaScript; AI crawlers that do not render see a page without a title. Put it in the server HTML.",
		"Scripts remove the title %s; browsers and rendering search engines see no title.",
		"Scripts change the title from %s to %s. AI crawlers read the first, browsers and Google the second; serve the final title in the HTML."},
	{textCodes{CodeMetaDescriptionRenderOnly, CodeMetaDescriptionPlainOnly, CodeMetaDescriptionChanged}, fieldDescription, headDescription, "The meta description", func(p *Page) string { return p.MetaDescription },
		"The meta description %s is added by JavaScript; fetchers that do not render never see it. Put it in the server HTML.",
		"Scripts remove the meta description %s; browsers and rendering crawlers see none.",
		"Scripts change the meta description from %s to %s; AI crawlers read the first. Serve the final description in the HTML."},
	{textCodes{CodeCanonicalRenderOnly, CodeCanonicalPlainOnly, CodeCanonicalChanged}, fieldCanonical, headCanonical, "The canonical URL", func(p *Page) string { return p.Canonical },
		"The canonical URL %s is added by JavaScript; crawlers that do not render miss it. Put <link rel=\"canonical\"> in the server HTML.",
		"Scripts remove the canonical URL %s; rendering search engines see none.",
		"The server HTML names %s as canonical but the rendered page names %s. Search engines get conflicting signals and AI crawlers follow the first; make them the same."},
}

// headFindings compares title, description, canonical, language and the
// other head signals.
func (d *differ) headFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	w := d.writes()
	for _, f := range headTexts {
		pv, rv := f.get(p), f.get(r)
		if pv == "" && rv != "" && d.parserFinding(l, f.codes.renderOnly, f.tag, f.noun+" "+q(rv)+" is", w.head[f.field]) {
			continue
		}
		compareText(l, f.codes, pv, rv, d.fieldCause(w.head[f.field], rv, f.field == fieldCanonical), f.renderOnly, f.plainOnly, f.changed)
	}
	if !strings.EqualFold(p.Lang, r.Lang) {
		compareText(l, textCodes{CodeLangRenderOnly, CodeLangPlainOnly, CodeLangChanged}, p.Lang, r.Lang, d.writeCause(w.head[fieldLang]),
			"The page language %s is set by JavaScript; fetchers that do not render cannot tell the language. Put lang on <html> in the server HTML.",
			"Scripts remove the page language %s from <html>.",
			"Scripts change the page language from %s to %s; AI crawlers read the first.")
	}
	d.hreflangFindings(l, w)
	d.openGraphFindings(l, w)
}

// parserFinding reports a head field the rendered page has but the server
// HTML's does not because the HTML parser moved it into the body: the
// server HTML ends its head early for a crawler's parse (an <iframe> in a
// <noscript> ends it only when scripts do not run), and no script wrote the
// rendered value. It reports whether it did.
func (d *differ) parserFinding(l *findingList, code string, tag headTag, subject string, write int) bool {
	h := d.headEnd()
	if tag < 0 || h == nil || h.element == "" || h.moved.n[tag] == 0 || d.scriptWrote(write) {
		return false
	}
	who := "every crawler"
	if h.inNoscript {
		who = "crawlers that parse the HTML without running scripts"
	}
	l.add(code, "", "%s in <head> for browsers but not for %s: for them, %s ends the head early, so they find it in <body>, where it does not count. This is the HTML parser's doing, not JavaScript's. %s",
		subject, who, LowerFirst(h.subject()), h.fix())
	l.cause(h.cause())
	return true
}

// scriptWrote reports whether write i is a recorded script write.
func (d *differ) scriptWrote(i int) bool {
	rs := d.r.snap
	return rs != nil && rs.Render != nil && i >= 0 && i < len(rs.Render.Writes)
}

// hreflangFindings compares the hreflang alternates.
func (d *differ) hreflangFindings(l *findingList, w *pageWrites) {
	p, r := d.p.page, d.r.page
	pa, ra := alternateKeys(p), alternateKeys(r)
	switch {
	case slices.Equal(pa, ra):
	case len(pa) == 0 && d.parserFinding(l, CodeHreflangRenderOnly, headHreflang, plural(len(ra), "hreflang alternate is", "hreflang alternates are"), w.head[fieldHreflang]):
	case len(pa) == 0:
		l.add(CodeHreflangRenderOnly, "", "%s are added by JavaScript; fetchers that do not render do not learn about the other language versions. Put them in the server HTML.", plural(len(ra), "hreflang alternate", "hreflang alternates"))
		l.cause(d.writeCause(w.head[fieldHreflang]))
	case len(ra) == 0:
		l.add(CodeHreflangPlainOnly, "", "Scripts remove %s of the server HTML.", plural(len(pa), "hreflang alternate", "hreflang alternates"))
	default:
		l.add(CodeHreflangChanged, "", "The hreflang alternates differ: %d in the server HTML, %d in the rendered page, not the same set. Serve one consistent set.", len(pa), len(ra))
		l.cause(d.writeCause(w.head[fieldHreflang]))
	}
}

// openGraphFindings compares the Open Graph tags.
func (d *differ) openGraphFindings(l *findingList, w *pageWrites) {
	og, rog := d.p.page.OpenGraph, d.r.page.OpenGraph
	switch {
	case og == rog:
	case og == OpenGraph{}:
		l.add(CodeOpenGraphRenderOnly, "", "Open Graph tags (og:title %s) are added by JavaScript; link previews in chat apps and social networks do not run scripts. Put them in the server HTML.", q(rog.Title))
		l.cause(d.writeCause(w.head[fieldOpenGraph]))
	case rog == OpenGraph{}:
		l.add(CodeOpenGraphPlainOnly, "", "Scripts remove the Open Graph tags of the server HTML.")
	default:
		l.add(CodeOpenGraphChanged, "", "Scripts change Open Graph tags; link previews use the server's (og:title %s, rendered %s).", q(og.Title), q(rog.Title))
		l.cause(d.writeCause(w.head[fieldOpenGraph]))
	}
}

// robotsFindings compares noindex, nofollow and the robots directives.
func (d *differ) robotsFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	w := d.writes()
	switch {
	case p.Noindex && r.Noindex:
		l.add(CodeRobotsNoindex, "", "Both the server HTML and the rendered page say noindex (%s), so the page asks not to be indexed. Fine if intended.", q(robotsSource(p)))
	case r.Noindex:
		l.add(CodeRobotsNoindexRenderOnly, "", "Scripts add noindex (%s). Google renders the page and drops it from its index, while AI crawlers that do not render index it. Serve the directive you mean in the HTML.", q(robotsSource(r)))
		l.cause(d.writeCause(w.head[fieldRobots]))
	case p.Noindex:
		l.add(CodeRobotsNoindexPlainOnly, "", "The server HTML says noindex (%s) and scripts remove it. AI crawlers obey the noindex and Google may never render the page, so it is likely indexed nowhere. Remove noindex from the server HTML if the page should be found.", q(robotsSource(p)))
	}
	switch {
	case p.Nofollow && r.Nofollow:
		l.add(CodeRobotsNofollow, "", "Both the server HTML and the rendered page say nofollow, so robots are asked not to follow the page's links. Fine if intended.")
	case r.Nofollow:
		l.add(CodeRobotsNofollowRenderOnly, "", "Scripts add nofollow: rendering crawlers stop following the page's links while crawlers that do not render follow them.")
		l.cause(d.writeCause(w.head[fieldRobots]))
	case p.Nofollow:
		l.add(CodeRobotsNofollowPlainOnly, "", "The server HTML says nofollow and scripts remove it; crawlers that do not render will not follow the page's links.")
	}
	if p.Noindex == r.Noindex && p.Nofollow == r.Nofollow && normalizeRobots(p.MetaRobots) != normalizeRobots(r.MetaRobots) {
		l.add(CodeRobotsChanged, "", "Scripts change the robots meta from %s to %s; crawlers that do not render read the first.", q(p.MetaRobots), q(r.MetaRobots))
		l.cause(d.writeCause(w.head[fieldRobots]))
	}
	if !maps.Equal(p.BotRobots, r.BotRobots) {
		var names []string
		for name := range mergeKeys(p.BotRobots, r.BotRobots) {
			if p.BotRobots[name] != r.BotRobots[name] {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		l.add(CodeRobotsBotMetaChanged, "", "Robots metas for %s differ between the server HTML and the rendered page, so those crawlers may be told something else than a browser shows.", strings.Join(names, ", "))
		l.cause(d.writeCause(w.head[fieldRobots]))
	}
	if !slices.Equal(p.XRobotsTag, r.XRobotsTag) {
		l.add(CodeXRobotsTagChanged, "", "The X-Robots-Tag header was %s for the plain fetch and %s for the browser; the server answers bots differently.", q(strings.Join(p.XRobotsTag, "; ")), q(strings.Join(r.XRobotsTag, "; ")))
	}
}

// robotsSource says where a page's robots directives come from.
func robotsSource(p *Page) string {
	parts := []string{}
	if p.MetaRobots != "" {
		parts = append(parts, "meta robots: "+p.MetaRobots)
	}
	if len(p.XRobotsTag) > 0 {
		parts = append(parts, "X-Robots-Tag: "+strings.Join(p.XRobotsTag, "; "))
	}
	if len(parts) == 0 {
		return "a robots meta for this bot"
	}
	return strings.Join(parts, "; ")
}

// normalizeRobots makes robots meta contents comparable.
func normalizeRobots(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ',' || r == ' ' }), ",")
}

// mergeKeys returns the union of two maps' keys.
func mergeKeys(a, b map[string]string) map[string]struct{} {
	out := map[string]struct{}{}
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}

// bodyFindings compares headings, structured data, links and text.
func (d *differ) bodyFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	w := d.writes()
	switch {
	case slices.Equal(p.H1, r.H1):
	case len(p.H1) == 0:
		l.add(CodeH1RenderOnly, "", "The main heading %s exists only after JavaScript runs; AI crawlers see no <h1>. Render it on the server.", q(r.H1[0]))
		l.cause(d.fieldCause(at(w.h1, 0), r.H1[0], false))
	case len(r.H1) == 0:
		l.add(CodeH1PlainOnly, "", "Scripts remove the main heading %s; the rendered page has no <h1>.", q(p.H1[0]))
	default:
		l.add(CodeH1Changed, "", "Scripts change the main heading from %s to %s; AI crawlers read the first.", q(p.H1[0]), q(r.H1[0]))
		l.cause(d.fieldCause(at(w.h1, 0), r.H1[0], false))
	}
	if only, first := headingsMissing(p, r); len(only) > 0 {
		l.add(CodeHeadingsRenderOnly, "", "%s only after JavaScript runs, for example %s; the outline AI crawlers see is incomplete.", plural(len(only), "subheading exists", "subheadings exist"), q(only[0]))
		l.cause(d.fieldCause(at(w.headings, first), only[0], false))
	}
	if only, _ := headingsMissing(r, p); len(only) > 0 {
		l.add(CodeHeadingsPlainOnly, "", "Scripts remove %s of the server HTML, for example %s.", plural(len(only), "subheading", "subheadings"), q(only[0]))
	}
	if only := missingStrings(p.JSONLDTypes, r.JSONLDTypes); len(only) > 0 {
		l.add(CodeJSONLDRenderOnly, "", "Structured data of type %s is injected by JavaScript; fetchers that do not render never see it. Put the JSON-LD in the server HTML.", strings.Join(only, ", "))
		l.cause(d.fieldCause(at(w.jsonld, jsonLDWith(r, only[0])), only[0], false))
	}
	if only := missingStrings(r.JSONLDTypes, p.JSONLDTypes); len(only) > 0 {
		l.add(CodeJSONLDPlainOnly, "", "Structured data of type %s in the server HTML is gone after scripts run.", strings.Join(only, ", "))
	}
	d.linkFindings(l)
	d.contentFindings(l)
}

// linkFindings reports links that only one lane has.
func (d *differ) linkFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	if n := d.renderOnlyLinks; n > 0 {
		sev := SeverityWarning
		if d.linkShare < 0.5 && n >= 3 {
			sev = SeverityCritical
		}
		l.addSeverity(CodeLinksRenderOnly, sev, "", "%s only after JavaScript runs (%s of the rendered page's %s), for example %s. Crawlers that do not render cannot discover those pages; put them in the server HTML as <a href>.",
			plural(n, "link appears", "links appear"), Percent(1-d.linkShare), plural(len(linkSet(r)), "distinct link", "distinct links"), exampleLinks(r, p))
		l.cause(d.linkCause())
	}
	if n := d.plainOnlyLinks; n > 0 {
		l.add(CodeLinksPlainOnly, "", "Scripts remove %s of the server HTML, for example %s; browsers and rendering crawlers do not see them.", plural(n, "link", "links"), exampleLinks(p, r))
	}
}

// contentFindings reports text that only one lane has.
func (d *differ) contentFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	if missing := r.WordCount - d.sharedWords; missing >= minMissingWords && d.textShare < 0.9 {
		sev := SeverityWarning
		if d.textShare < 0.5 {
			sev = SeverityCritical
		}
		l.addSeverity(CodeContentRenderOnly, sev, "", "The server HTML has %s of the rendered text: %d of %d words appear only after JavaScript runs, and AI crawlers that do not render never read them. Serve this content in the HTML (server-side rendering or pre-rendering).",
			onlyShare(d.textShare), missing, r.WordCount)
		l.cause(d.textCause())
	}
	if missing := p.WordCount - d.sharedWords; missing >= minMissingWords && ratio(d.sharedWords, p.WordCount) < 0.9 {
		l.add(CodeContentPlainOnly, "", "%d words of the server HTML do not appear in the rendered page (for example <noscript> text or text scripts replace). AI crawlers read them; browsers do not show them.", missing)
	}
}

// minMissingWords is the least number of words one lane must lack before
// the text difference is reported, so a "Loading…" placeholder is no finding.
const minMissingWords = 10

// onlyShare says a share below 1 as "only 7%" or "none".
func onlyShare(share float64) string {
	if p := Percent(share); p != "0%" {
		return "only " + p
	}
	return "none"
}

// headingsMissing returns the h2–h6 headings of has that lacks does not
// have, as "h2 text", counting repeated headings, and the index in
// has.Headings of the first of them (-1 for none).
func headingsMissing(lacks, has *Page) ([]string, int) {
	count := map[Heading]int{}
	for _, h := range lacks.Headings {
		count[h]++
	}
	var out []string
	first := -1
	for i, h := range has.Headings {
		if h.Level == 1 {
			continue
		}
		if count[h] > 0 {
			count[h]--
			continue
		}
		if first < 0 {
			first = i
		}
		out = append(out, fmt.Sprintf("h%d %s", h.Level, h.Text))
	}
	return out, first
}

// missingStrings returns the sorted strings of has that lacks does not have.
func missingStrings(lacks, has []string) []string {
	var out []string
	for _, s := range has {
		if !slices.Contains(lacks, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// exampleLinks quotes up to three hrefs of has that lacks does not have.
func exampleLinks(has, lacks *Page) string {
	keys := linkSet(lacks)
	seen := map[string]bool{}
	var ex []string
	for _, link := range has.Links {
		if _, ok := keys[hashString(link.Href)]; ok || seen[link.Href] {
			continue
		}
		seen[link.Href] = true
		ex = append(ex, q(link.Href))
		if len(ex) == 3 {
			break
		}
	}
	if len(ex) == 0 {
		return "links beyond the first ones the report keeps"
	}
	return strings.Join(ex, ", ")
}
