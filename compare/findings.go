package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
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

// cause sets the cause of the finding added last; nil leaves it without one.
func (l *findingList) cause(c *Cause) {
	if c == nil || len(*l) == 0 {
		return
	}
	(*l)[len(*l)-1].Cause = c
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

// inFetch phrases a lane as the request that saw something.
func inFetch(l Lane) string {
	switch l {
	case LanePlain:
		return "to the plain fetch"
	case LaneRender:
		return "to the browser"
	}
	return "to both the plain fetch and the browser"
}

// SlowTTFB is the time to first byte above which a page gets the finding
// page.slow. No AI crawler operator (OpenAI, Anthropic, Perplexity, Common
// Crawl) publishes a fetch timeout; the figures third parties report for
// GPTBot, ClaudeBot and PerplexityBot range from 2 to 8 seconds and are not
// backed by published measurements. 5 seconds is inside that range, so a
// page slower than this is likely abandoned by some of them; it is also six
// times web.dev's 0.8 s bar for a good TTFB, so no healthy page trips it.
const SlowTTFB = 5 * time.Second

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
	d.checkFindings(&l)
	d.headEndFindings(&l)
	var soft, diffs findingList
	d.soft404Findings(&soft)
	if p != nil && r != nil {
		d.headFindings(&diffs)
		d.robotsFindings(&diffs)
		d.bodyFindings(&diffs)
		d.consequences(l, soft, diffs)
	}
	l = append(append(l, soft...), diffs...)
	sortFindings(l)
	return l
}

// notOKStatus reports whether an HTTP status (0: none) is not a 2xx.
func notOKStatus(status int) bool { return status != 0 && (status < 200 || status > 299) }

// statusFindings reports an error status in either lane.
func (d *differ) statusFindings(l *findingList) {
	ps, rs := d.p.snap, d.r.snap
	notOK := func(s *Snapshot) bool { return s != nil && notOKStatus(s.Status) }
	// A page that sends the browser on to an address answering 404 or 410
	// handles its not-found route as Google recommends (soft_404.handled);
	// that 404 is the other address's, not the page's.
	renderNotOK := notOK(rs) && !redirectsToError(ps, rs)
	if lane, ok := laneOf(notOK(ps), renderNotOK); ok {
		status := 0
		if ps != nil && notOK(ps) {
			status = ps.Status
		} else {
			status = rs.Status
		}
		switch {
		case lane == "" && ps.Status == rs.Status:
			l.add(CodeStatusNotOK, lane, "The page answers %d to every visitor, the plain fetch and the browser alike; crawlers do not index a page that does not answer 200.", status)
		case lane == "":
			l.add(CodeStatusNotOK, lane, "The page answers an error to every visitor (%d to the plain fetch, %d to the browser); crawlers do not index a page that does not answer 200.", ps.Status, rs.Status)
		case lane == LanePlain:
			l.add(CodeStatusNotOK, lane, "The page answered %d to the plain fetch; crawlers that get it do not index the page.", status)
		default:
			l.add(CodeStatusNotOK, lane, "The page answered %d to the browser; rendering crawlers that get it do not index the page.", status)
		}
	}
}

// snapshotFindings reports what the snapshots themselves say.
func (d *differ) snapshotFindings(l *findingList) {
	ps, rs := d.p.snap, d.r.snap
	if ps != nil && ps.Truncated {
		l.add(CodePlainTruncated, LanePlain, "The server HTML was cut off after %d bytes; findings cover only that part. Many crawlers also stop reading very large pages.", len(ps.Body))
	}
	if ps != nil && ps.ContentType != "" && !IsHTML(ps.ContentType) {
		l.add(CodePlainNotHTML, LanePlain, "The URL answered with %s, not an HTML document, so there is no page content to compare.", q(ps.ContentType))
	}
	d.sizeFindings(l)
	if rs != nil && rs.Truncated {
		l.add(CodeRenderTruncated, LaneRender, "The rendered document was cut off after %d bytes; findings cover only that part.", len(rs.Body))
	}
	d.statusFindings(l)
	slow := func(s *Snapshot) bool { return s != nil && s.Timings.TTFB > SlowTTFB }
	if lane, ok := laneOf(slow(ps), slow(rs)); ok {
		t := rs
		if lane != LaneRender && ps != nil {
			t = ps
		}
		if lane == "" && rs.Timings.TTFB > ps.Timings.TTFB {
			t = rs
		}
		l.add(CodePageSlow, lane, "The server took %s to send the first byte of the page %s; AI crawlers are likely to give up long before that.", Duration(t.Timings.TTFB), inFetch(lane))
	}
	// A browser the page moved on has the status and address of another
	// URL; the redirect findings say where it went.
	navigated := rs != nil && rs.Render != nil && (rs.Render.Navigations > 0 || len(rs.Render.ClientRedirects) > 0)
	if ps != nil && rs != nil && ps.Status != 0 && rs.Status != 0 && ps.Status != rs.Status && !navigated {
		notOK := func(s *Snapshot) bool { return notOKStatus(s.Status) }
		sev := SeverityWarning
		if notOK(ps) != notOK(rs) {
			sev = SeverityCritical
		}
		l.addSeverity(CodeStatusDiffers, sev, "", "The plain fetch got HTTP %d and the browser got HTTP %d for the same URL. The server answers bots and browsers differently; make sure AI crawlers get the page.", ps.Status, rs.Status)
	}
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
	refusalFindings(l, rd)
	if n := len(rd.FailedRequests); n > 0 {
		f := rd.FailedRequests[0]
		l.add(CodeRenderFailedRequests, LaneRender, "%s failed while rendering, the first: %s (%s).", plural(n, "request", "requests"), q(f.URL), f.Reason)
	}
	switch {
	case rd.SettledBy == "budget":
		l.add(CodeRenderBudget, LaneRender, "The page was still working when the render lane's budget of %s of page time ran out (an interval, an animation loop or a timer due later); content that appears later than %s of page time is not seen by renderers.", seconds(rd.Budget), seconds(rd.Budget))
	case !rd.Settled:
		msg := "The page was still loading when the render lane stopped waiting, so the rendered view may be incomplete."
		if rd.SettledBy == "request_budget" {
			msg = "The page made more requests (or moved more bytes) than the render lane allows one audit, so what it loaded after that is missing from the rendered view."
		}
		if n := len(rd.PendingRequests); n > 0 {
			msg += fmt.Sprintf(" %s never finished, the first: %s.", plural(n, "request", "requests"), q(rd.PendingRequests[0]))
		}
		l.add(CodeRenderNotSettled, LaneRender, "%s", msg)
	}
	d.clientRedirectFindings(l, rs)
}

// refusalFindings reports what the page tried that the render lane
// refused: resources robots.txt disallows, sending data, features Google's
// renderer lacks, WebSockets, cookies and credentials.
func refusalFindings(l *findingList, rd *RenderDetails) {
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
	if n := rd.Blocked["method"]; n > 0 {
		ex := ""
		for _, b := range rd.BlockedURLs {
			if b.Reason == "method" {
				ex = ", the first: " + b.Rule + " " + q(b.URL)
				break
			}
		}
		l.add(CodeRenderBlockedMethod, LaneRender, "The page tried to send data %s while rendering%s; LektaBot refused, as crawlers never submit forms or send data.", plural(n, "time", "times"), ex)
	}
	if fs := rd.RefusedFeatures; len(fs) > 0 {
		l.add(CodeRenderRefusedFeatures, LaneRender, "The page tried %s while rendering; Google's renderer offers none of them, so the render lane refused them too, and content that depends on them is missing for Googlebot as well.", strings.Join(fs, ", "))
	}
	if n := rd.Blocked["websocket"]; n > 0 {
		l.add(CodeRenderWebSocket, LaneRender, "The page tried to open %s while rendering; LektaBot refused, and content that needs a WebSocket is invisible to Googlebot as well.", plural(n, "WebSocket", "WebSockets"))
	}
	if c, cr := rd.CookiesRefused, rd.CredentialsRefused; c+cr > 0 {
		var parts []string
		if c > 0 {
			parts = append(parts, plural(c, "cookie", "cookies"))
		}
		if cr > 0 {
			parts = append(parts, plural(cr, "credential or authentication challenge", "credentials or authentication challenges"))
		}
		l.add(CodeRenderCookiesRefused, LaneRender, "The page tried to use %s while rendering; LektaBot sent none, as crawlers keep no cookies and log in nowhere.", strings.Join(parts, " and "))
	}
}

// seconds writes a budget for a sentence: "5 s", "2.5 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// htmlPage is the side's page when its document is HTML, else nil.
func (s side) htmlPage() *Page {
	if s.snap != nil && !IsHTML(s.snap.ContentType) {
		return nil
	}
	return s.page
}

// pageFindings reports conditions of each extracted page on its own.
func (d *differ) pageFindings(l *findingList) {
	// A PDF or an image has no title to miss: only HTML pages are judged.
	p, r := d.p.htmlPage(), d.r.htmlPage()
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
