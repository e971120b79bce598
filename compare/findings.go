package compare

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// findingList collects findings during one Diff.
type findingList []Finding

// add appends a finding; the severity defaults to the code's own.
func (l *findingList) add(code string, lane Lane, format string, args ...any) {
	l.addSeverity(code, codeIndex[code].Severity, lane, format, args...)
}

// addSeverity appends a finding with an explicit severity.
func (l *findingList) addSeverity(code string, sev Severity, lane Lane, format string, args ...any) {
	msg := strings.ToValidUTF8(fmt.Sprintf(format, args...), "\uFFFD")
	*l = append(*l, Finding{Code: code, Severity: sev, Message: msg, Lane: lane})
}

// laneOf says which lanes a single-lane condition holds in: "" for both
// (or for the only lane there is), or nil when none.
func laneOf(inPlain, inRender bool) (Lane, bool) {
	switch {
	case inPlain && inRender:
		return "", true
	case inPlain:
		return LanePlain, true
	case inRender:
		return LaneRender, true
	}
	return "", false
}

// inLane phrases a lane for a message.
func inLane(l Lane) string {
	switch l {
	case LanePlain:
		return "in the server HTML"
	case LaneRender:
		return "in the rendered page"
	}
	return "in both the server HTML and the rendered page"
}

// q quotes a value for a message, shortened to 80 characters.
func q(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:79]) + "…"
	}
	return "“" + s + "”"
}

// plural returns n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// severityRank orders severities, most serious first.
func severityRank(s Severity) int {
	switch s {
	case SeverityCritical:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// sortFindings orders findings by severity, code, lane and message.
func sortFindings(l []Finding) {
	slices.SortStableFunc(l, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
			strings.Compare(a.Code, b.Code),
			strings.Compare(string(a.Lane), string(b.Lane)),
			strings.Compare(a.Message, b.Message),
		)
	})
}

// findings produces every finding of the Diff, sorted.
func (d *differ) findings() []Finding {
	l := findingList{}
	p, r := d.p.page, d.r.page
	switch {
	case p == nil && r == nil:
		return l
	case p == nil:
		l.add(CodePlainMissing, LanePlain, "The plain lane produced no document, so what AI crawlers receive could not be compared with the rendered page.")
	case r == nil:
		l.add(CodeRenderMissing, LaneRender, "The browser lane produced no document, so the server HTML could not be compared with the rendered page.")
	}
	d.snapshotFindings(&l)
	d.pageFindings(&l)
	if p != nil && r != nil {
		d.headFindings(&l)
		d.robotsFindings(&l)
		d.bodyFindings(&l)
	}
	sortFindings(l)
	return l
}

// snapshotFindings reports what the snapshots themselves say.
func (d *differ) snapshotFindings(l *findingList) {
	ps, rs := d.p.snap, d.r.snap
	if ps != nil && ps.Truncated {
		l.add(CodePlainTruncated, LanePlain, "The server HTML was cut off after %d bytes; findings cover only that part. Many crawlers also stop reading very large pages.", len(ps.Body))
	}
	if ps != nil && ps.ContentType != "" && !isHTML(ps.ContentType) {
		l.add(CodePlainNotHTML, LanePlain, "The URL answered with %s, not an HTML document, so there is no page content to compare.", q(ps.ContentType))
	}
	if rs != nil && rs.Truncated {
		l.add(CodeRenderTruncated, LaneRender, "The rendered document was cut off after %d bytes; findings cover only that part.", len(rs.Body))
	}
	notOK := func(s *Snapshot) bool { return s != nil && s.Status != 0 && (s.Status < 200 || s.Status > 299) }
	if lane, ok := laneOf(notOK(ps), notOK(rs)); ok {
		status := 0
		if ps != nil && notOK(ps) {
			status = ps.Status
		} else {
			status = rs.Status
		}
		l.add(CodeStatusNotOK, lane, "The page answered with HTTP status %d %s; crawlers do not index a page that does not answer 200.", status, inLane(lane))
	}
	if ps != nil && rs != nil && ps.Status != 0 && rs.Status != 0 && ps.Status != rs.Status {
		sev := SeverityWarning
		if notOK(ps) != notOK(rs) {
			sev = SeverityCritical
		}
		l.addSeverity(CodeStatusDiffers, sev, "", "The plain fetch got HTTP %d and the browser got HTTP %d for the same URL. The server answers bots and browsers differently; make sure AI crawlers get the page.", ps.Status, rs.Status)
	}
	navigated := rs != nil && rs.Render != nil && rs.Render.Navigations > 0
	if ps != nil && rs != nil && ps.FinalURL != "" && rs.FinalURL != "" && ps.FinalURL != rs.FinalURL && !navigated {
		l.add(CodeFinalURLDiffers, "", "The plain fetch ended at %s but the browser at %s. The server redirects bots and browsers differently.", q(ps.FinalURL), q(rs.FinalURL))
	}
	if rs == nil || rs.Render == nil {
		return
	}
	d.renderFindings(l, rs)
}

// renderFindings reports what only the render lane knows.
func (d *differ) renderFindings(l *findingList, rs *Snapshot) {
	rd := rs.Render
	if n := len(rd.ConsoleErrors); n > 0 {
		l.add(CodeRenderConsoleErrors, LaneRender, "The page logged %s while rendering, the first: %s.", plural(n, "console error", "console errors"), q(rd.ConsoleErrors[0]))
	}
	if n := len(rd.Exceptions); n > 0 {
		l.add(CodeRenderExceptions, LaneRender, "Scripts threw %s while rendering, the first: %s. Content those scripts produce may be missing for browsers too.", plural(n, "uncaught exception", "uncaught exceptions"), q(rd.Exceptions[0]))
	}
	if n := rd.Blocked["robots"]; n > 0 {
		var examples []string
		for _, b := range rd.BlockedURLs {
			if b.Reason == "robots" && len(examples) < 3 {
				ex := q(b.URL)
				if b.Rule != "" {
					ex += " (" + b.Rule + ")"
				}
				examples = append(examples, ex)
			}
		}
		msg := fmt.Sprintf("robots.txt disallows %s the page requested while rendering", plural(n, "resource", "resources"))
		if len(examples) > 0 {
			msg += ", for example " + strings.Join(examples, ", ")
		}
		l.add(CodeRenderBlockedRobots, LaneRender, "%s. Rendering crawlers cannot load them either; allow the scripts and data the page needs.", msg)
	}
	if n := len(rd.FailedRequests); n > 0 {
		f := rd.FailedRequests[0]
		l.add(CodeRenderFailedRequests, LaneRender, "%s failed while rendering, the first: %s (%s).", plural(n, "request", "requests"), q(f.URL), f.Reason)
	}
	if !rd.Settled {
		l.add(CodeRenderNotSettled, LaneRender, "The page was still loading when the render lane stopped waiting, so the rendered view may be incomplete.")
	}
	if rd.Navigations > 0 {
		l.add(CodeRenderNavigated, LaneRender, "A script navigated the browser away from the page (to %s). Crawlers that do not run JavaScript stay on the first page; use a server redirect.", q(rs.FinalURL))
	}
}

// pageFindings reports conditions of each extracted page on its own.
func (d *differ) pageFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	has := func(pg *Page, f func(*Page) bool) bool { return pg != nil && f(pg) }
	pick := func(lane Lane) *Page {
		if lane == LaneRender {
			return r
		}
		if p != nil {
			return p
		}
		return r
	}
	noTitle := func(x *Page) bool { return x.Title == "" }
	if lane, ok := laneOf(has(p, noTitle), has(r, noTitle)); ok && (lane == "" || p == nil || r == nil) {
		// With both lanes, a title in one only is title.render_only or
		// title.plain_only instead.
		l.add(CodeTitleMissing, lane, "The page has no <title> %s. Add a short title that says what the page is about.", inLane(lane))
	}
	if lane, ok := laneOf(has(p, func(x *Page) bool { return x.DeepNesting }), has(r, func(x *Page) bool { return x.DeepNesting })); ok {
		l.add(CodeHTMLTooDeep, lane, "Elements nest more than 512 deep %s; parsers flatten such markup and some fetchers give up. Simplify it.", inLane(lane))
	}
	if lane, ok := laneOf(has(p, func(x *Page) bool { return len(x.Truncated) > 0 }), has(r, func(x *Page) bool { return len(x.Truncated) > 0 })); ok {
		l.add(CodeExtractTruncated, lane, "The page has more than a report keeps %s; these fields list only the first entries: %s.", inLane(lane), strings.Join(pick(lane).Truncated, ", "))
	}
	invalid := func(x *Page) bool {
		return slices.ContainsFunc(x.JSONLD, func(b JSONLD) bool { return b.Error != "" })
	}
	if lane, ok := laneOf(has(p, invalid), has(r, invalid)); ok {
		pg := pick(lane)
		i := slices.IndexFunc(pg.JSONLD, func(b JSONLD) bool { return b.Error != "" })
		l.add(CodeJSONLDInvalid, lane, "A JSON-LD block %s is not valid JSON (%s), so search engines and AI crawlers ignore it. Fix its syntax.", inLane(lane), pg.JSONLD[i].Error)
	}
	if lane, ok := laneOf(has(p, func(x *Page) bool { return x.CanonicalConflict }), has(r, func(x *Page) bool { return x.CanonicalConflict })); ok {
		l.add(CodeCanonicalConflicting, lane, "The document has several canonical links with different URLs %s; search engines ignore them all. Keep one.", inLane(lane))
	}
	mismatch := func(x *Page) bool {
		return x.CanonicalHeader != "" && x.Canonical != "" && x.CanonicalHeader != x.Canonical
	}
	if lane, ok := laneOf(has(p, mismatch), has(r, mismatch)); ok {
		pg := pick(lane)
		l.add(CodeCanonicalHeaderMismatch, lane, "The Link header names %s as canonical but the HTML %s names %s. Send one canonical URL.", q(pg.CanonicalHeader), inLane(lane), q(pg.Canonical))
	}
	missingAlt := func(x *Page) bool { return len(x.ImagesMissingAlt) > 0 }
	if lane, ok := laneOf(has(p, missingAlt), has(r, missingAlt)); ok {
		pg := pick(lane)
		if lane == "" && len(r.ImagesMissingAlt) > len(p.ImagesMissingAlt) {
			pg = r
		}
		l.add(CodeImagesMissingAlt, lane, "%s no alt attribute %s, for example %s. Describe what they show (alt=\"\" for decoration).", plural(len(pg.ImagesMissingAlt), "image has", "images have"), inLane(lane), q(pg.ImagesMissingAlt[0]))
	}
}

// compareText reports a string field that scripts add, remove or change.
type textCodes struct{ renderOnly, plainOnly, changed string }

func compareText(l *findingList, codes textCodes, plain, render string, renderOnly, plainOnly, changed string) {
	switch {
	case plain == render:
	case plain == "":
		l.add(codes.renderOnly, "", renderOnly, q(render))
	case render == "":
		l.add(codes.plainOnly, "", plainOnly, q(plain))
	default:
		l.add(codes.changed, "", changed, q(plain), q(render))
	}
}

// headFindings compares title, description, canonical, language and the
// other head signals.
func (d *differ) headFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	compareText(l, textCodes{CodeTitleRenderOnly, CodeTitlePlainOnly, CodeTitleChanged}, p.Title, r.Title,
		"The title %s is set by JavaScript; AI crawlers that do not render see a page without a title. Put it in the server HTML.",
		"Scripts remove the title %s; browsers and rendering search engines see no title.",
		"Scripts change the title from %s to %s. AI crawlers read the first, browsers and Google the second; serve the final title in the HTML.")
	compareText(l, textCodes{CodeMetaDescriptionRenderOnly, CodeMetaDescriptionPlainOnly, CodeMetaDescriptionChanged}, p.MetaDescription, r.MetaDescription,
		"The meta description %s is added by JavaScript; fetchers that do not render never see it. Put it in the server HTML.",
		"Scripts remove the meta description %s; browsers and rendering crawlers see none.",
		"Scripts change the meta description from %s to %s; AI crawlers read the first. Serve the final description in the HTML.")
	compareText(l, textCodes{CodeCanonicalRenderOnly, CodeCanonicalPlainOnly, CodeCanonicalChanged}, p.Canonical, r.Canonical,
		"The canonical URL %s is added by JavaScript; crawlers that do not render miss it. Put <link rel=\"canonical\"> in the server HTML.",
		"Scripts remove the canonical URL %s; rendering search engines see none.",
		"The server HTML names %s as canonical but the rendered page names %s. Search engines get conflicting signals and AI crawlers follow the first; make them the same.")
	if !strings.EqualFold(p.Lang, r.Lang) {
		compareText(l, textCodes{CodeLangRenderOnly, CodeLangPlainOnly, CodeLangChanged}, p.Lang, r.Lang,
			"The page language %s is set by JavaScript; fetchers that do not render cannot tell the language. Put lang on <html> in the server HTML.",
			"Scripts remove the page language %s from <html>.",
			"Scripts change the page language from %s to %s; AI crawlers read the first.")
	}
	pa, ra := alternateKeys(p), alternateKeys(r)
	switch {
	case slices.Equal(pa, ra):
	case len(pa) == 0:
		l.add(CodeHreflangRenderOnly, "", "%s are added by JavaScript; fetchers that do not render do not learn about the other language versions. Put them in the server HTML.", plural(len(ra), "hreflang alternate", "hreflang alternates"))
	case len(ra) == 0:
		l.add(CodeHreflangPlainOnly, "", "Scripts remove %s of the server HTML.", plural(len(pa), "hreflang alternate", "hreflang alternates"))
	default:
		l.add(CodeHreflangChanged, "", "The hreflang alternates differ: %d in the server HTML, %d in the rendered page, not the same set. Serve one consistent set.", len(pa), len(ra))
	}
	og, rog := p.OpenGraph, r.OpenGraph
	switch {
	case og == rog:
	case og == OpenGraph{}:
		l.add(CodeOpenGraphRenderOnly, "", "Open Graph tags (og:title %s) are added by JavaScript; link previews in chat apps and social networks do not run scripts. Put them in the server HTML.", q(rog.Title))
	case rog == OpenGraph{}:
		l.add(CodeOpenGraphPlainOnly, "", "Scripts remove the Open Graph tags of the server HTML.")
	default:
		l.add(CodeOpenGraphChanged, "", "Scripts change Open Graph tags; link previews use the server's (og:title %s, rendered %s).", q(og.Title), q(rog.Title))
	}
}

// robotsFindings compares noindex, nofollow and the robots directives.
func (d *differ) robotsFindings(l *findingList) {
	p, r := d.p.page, d.r.page
	switch {
	case p.Noindex && r.Noindex:
		l.add(CodeRobotsNoindex, "", "Both the server HTML and the rendered page say noindex (%s), so the page asks not to be indexed. Fine if intended.", q(robotsSource(p)))
	case r.Noindex:
		l.add(CodeRobotsNoindexRenderOnly, "", "Scripts add noindex (%s). Google renders the page and drops it from its index, while AI crawlers that do not render index it. Serve the directive you mean in the HTML.", q(robotsSource(r)))
	case p.Noindex:
		l.add(CodeRobotsNoindexPlainOnly, "", "The server HTML says noindex (%s) and scripts remove it. AI crawlers obey the noindex and Google may never render the page, so it is likely indexed nowhere. Remove noindex from the server HTML if the page should be found.", q(robotsSource(p)))
	}
	switch {
	case p.Nofollow && r.Nofollow:
		l.add(CodeRobotsNofollow, "", "Both the server HTML and the rendered page say nofollow, so robots are asked not to follow the page's links. Fine if intended.")
	case r.Nofollow:
		l.add(CodeRobotsNofollowRenderOnly, "", "Scripts add nofollow: rendering crawlers stop following the page's links while crawlers that do not render follow them.")
	case p.Nofollow:
		l.add(CodeRobotsNofollowPlainOnly, "", "The server HTML says nofollow and scripts remove it; crawlers that do not render will not follow the page's links.")
	}
	if p.Noindex == r.Noindex && p.Nofollow == r.Nofollow && normalizeRobots(p.MetaRobots) != normalizeRobots(r.MetaRobots) {
		l.add(CodeRobotsChanged, "", "Scripts change the robots meta from %s to %s; crawlers that do not render read the first.", q(p.MetaRobots), q(r.MetaRobots))
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
	switch {
	case slices.Equal(p.H1, r.H1):
	case len(p.H1) == 0:
		l.add(CodeH1RenderOnly, "", "The main heading %s exists only after JavaScript runs; AI crawlers see no <h1>. Render it on the server.", q(r.H1[0]))
	case len(r.H1) == 0:
		l.add(CodeH1PlainOnly, "", "Scripts remove the main heading %s; the rendered page has no <h1>.", q(p.H1[0]))
	default:
		l.add(CodeH1Changed, "", "Scripts change the main heading from %s to %s; AI crawlers read the first.", q(p.H1[0]), q(r.H1[0]))
	}
	if only := headingsMissing(p, r); len(only) > 0 {
		l.add(CodeHeadingsRenderOnly, "", "%s only after JavaScript runs, for example %s; the outline AI crawlers see is incomplete.", plural(len(only), "subheading exists", "subheadings exist"), q(only[0]))
	}
	if only := headingsMissing(r, p); len(only) > 0 {
		l.add(CodeHeadingsPlainOnly, "", "Scripts remove %s of the server HTML, for example %s.", plural(len(only), "subheading", "subheadings"), q(only[0]))
	}
	if only := missingStrings(p.JSONLDTypes, r.JSONLDTypes); len(only) > 0 {
		l.add(CodeJSONLDRenderOnly, "", "Structured data of type %s is injected by JavaScript; fetchers that do not render never see it. Put the JSON-LD in the server HTML.", strings.Join(only, ", "))
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
		l.addSeverity(CodeLinksRenderOnly, sev, "", "%s only after JavaScript runs (%s of the rendered page's links), for example %s. Crawlers that do not render cannot discover those pages; put them in the server HTML as <a href>.",
			plural(n, "link appears", "links appear"), percent(1-d.linkShare), exampleLinks(r, p))
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
	if p := percent(share); p != "0%" {
		return "only " + p
	}
	return "none"
}

// percent formats a share as a whole percentage, rounded down so that a
// share just under 1 never reads as 100%.
func percent(share float64) string {
	return fmt.Sprintf("%d%%", int(share*100+1e-9))
}

// headingsMissing returns the h2–h6 headings of has that lacks does not
// have, as "h2 text", counting repeated headings.
func headingsMissing(lacks, has *Page) []string {
	count := map[Heading]int{}
	for _, h := range lacks.Headings {
		count[h]++
	}
	var out []string
	for _, h := range has.Headings {
		if h.Level == 1 {
			continue
		}
		if count[h] > 0 {
			count[h]--
			continue
		}
		out = append(out, fmt.Sprintf("h%d %s", h.Level, h.Text))
	}
	return out
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
