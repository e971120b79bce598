package audit

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// WriteText prints the report for people in a terminal of 80 columns: the
// verdict first, then the fields side by side, the findings by severity,
// the crawlers, the lanes and robots.txt. Every value has a rendering in
// words (no JSON names, Go maps or structs); long values wrap, table cells
// are cut with "…" so columns stay aligned. Page data is escaped of every
// control character (cleanText), and safeWriter is the backstop.
func WriteText(w io.Writer, r *Report) error {
	p := &printer{w: &safeWriter{w: w}}
	if r.Status.NotRun() {
		p.notRun(r)
		return p.err
	}
	p.header(r)
	p.fields(r)
	p.findings(r)
	p.crawlers(r)
	p.lanes(r)
	p.robots(r)
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

// line prints one line as it is; callers made it fit.
func (p *printer) line(s string) {
	if p.err != nil {
		return
	}
	_, p.err = io.WriteString(p.w, strings.TrimRight(s, " ")+"\n")
}

// para prints text cleaned and wrapped to the width, the first line after
// first and the others after as many spaces as first takes.
func (p *printer) para(first, text string) {
	indent := strings.Repeat(" ", cells(first))
	for i, l := range wrap(cleanText(text), textWidth-cells(first)) {
		if i == 0 {
			p.line(first + l)
		} else {
			p.line(indent + l)
		}
	}
}

// triggerWords says who asked for an audit.
var triggerWords = map[Trigger]string{
	TriggerCLI: "the command line", TriggerForm: "the form", TriggerAPI: "the API",
	TriggerScheduled: "a scheduled re-audit", TriggerMember: "a member's run now",
}

// notRun prints the report of a run that did not happen: what was asked,
// why it did not run, and for a skipped run the robots.txt reading that
// decided it. Nothing about the page: there is nothing to say.
func (p *printer) notRun(r *Report) {
	p.para("LektaBot audit of ", r.URL)
	p.para("", "asked from "+triggerWords[r.Trigger]+" · report "+r.ID)
	p.line("")
	p.para("", NotRunSentence(r))
	if r.Robots != nil {
		p.robots(r)
	}
}

// NotRunSentence says why a run that did not happen (Status.NotRun) did
// not, when to retry, and what of the site was contacted:
// "Not run: rate limited — This host was audited less than a minute ago;
// try again in 42 s. The site was not contacted."
func NotRunSentence(r *Report) string {
	s := "Not run: " + r.Status.Words()
	if reason := strings.TrimSpace(r.Reason); reason != "" {
		s += " — " + reason
		if !strings.HasSuffix(reason, ".") {
			s += "."
		}
	} else {
		s += "."
	}
	if r.RetryAfterS > 0 && !strings.Contains(r.Reason, "try again") {
		s += " Retry after " + compare.Duration(secs(r.RetryAfterS)) + "."
	}
	switch {
	case r.Robots == nil:
		s += " The site was not contacted."
	case r.Robots.Outcome == policy.RobotsUnreachable:
		s += " robots.txt was requested and could not be read; the page was not fetched."
	default:
		s += " Only robots.txt was read; the page was not fetched."
	}
	return s
}

func (p *printer) header(r *Report) {
	p.para("LektaBot audit of ", r.URL)
	status := fmt.Sprintf("status %s · took %s · asked from %s", r.Status.Words(), compare.Millis(r.DurationMS), triggerWords[r.Trigger])
	p.para("", status+" · report "+r.ID)
	if r.Cached {
		p.para("", fmt.Sprintf("Answered from the result cache (%s old); the site was not contacted.", compare.Duration(secs(r.CacheAgeS))))
	}
	if r.Joined {
		p.para("", "Joined the audit of this URL that was already running; the site was contacted once for both.")
	}
	p.line("")
	v := r.Verdict
	counts := "no findings"
	if v != nil && (v.Critical > 0 || v.Warnings > 0) {
		counts = plural(v.Critical, "critical", "critical") + " · " + plural(v.Warnings, "warning", "warnings")
	} else if len(r.Findings) > 0 {
		counts = plural(len(r.Findings), "note", "notes")
	}
	sev := "OK"
	switch {
	case v != nil && v.Severity != compare.SeverityNone && v.Severity != "":
		sev = strings.ToUpper(string(v.Severity))
	case !r.Status.Ran():
		sev = "NOT RUN" // a refused audit has no finding, and no good news either
	}
	p.line(fmt.Sprintf("VERDICT  %s  (%s)", sev, counts))
	switch {
	case v != nil:
		p.para("  ", v.Summary)
		if v.TextShare != nil && v.LinkShare != nil {
			p.para("  ", fmt.Sprintf("The plain fetch has %s of the rendered text and %s of its links.",
				compare.Percent(*v.TextShare), compare.Percent(*v.LinkShare)))
		}
	case r.Reason != "":
		p.para("  ", r.Reason)
	}
	if v != nil && r.Reason != "" && !strings.Contains(v.Summary, r.Reason) && r.Status != StatusComplete {
		p.para("  ", "Why: "+r.Reason)
	}
}

// fields prints the diff rows: each differing field with both values, the
// fields equal in both lanes with their one value, and the empty ones in
// one line.
func (p *printer) fields(r *Report) {
	if len(r.Diff) == 0 {
		return
	}
	p.line("")
	p.line("SIDE BY SIDE  plain: the server HTML, what AI crawlers get · rendered: Chromium")
	var empty []string
	for _, d := range r.Diff {
		pi, pl := compare.DisplayValue(d.Plain)
		ri, rl := compare.DisplayValue(d.Render)
		label := compare.FieldLabel(d.Field)
		if d.Change == compare.ChangeSame {
			if len(pi) == 0 && len(ri) == 0 {
				empty = append(empty, compare.LowerFirst(label))
				continue
			}
			p.line("  " + label)
			p.value("both", pi, pl || rl)
			continue
		}
		p.line("  " + label + " — " + compare.ChangeLabel(d.Change))
		p.value("plain", pi, pl)
		p.value("rendered", ri, rl)
	}
	if len(empty) > 0 {
		p.para("  Empty in both: ", strings.Join(empty, ", ")+".")
	}
}

// maxTextItems is how many items of a list value the text report shows.
const maxTextItems = 8

// value prints one lane's value of a field, a list one item per line.
func (p *printer) value(lane string, items []string, list bool) {
	lead := "      " + fit(lane, 10)
	if len(items) == 0 {
		p.line(lead + "(none)")
		return
	}
	for i, it := range items {
		if i == maxTextItems {
			p.line(strings.Repeat(" ", cells(lead)) + fmt.Sprintf("… and %d more", len(items)-maxTextItems))
			break
		}
		s := cleanText(it)
		if !list {
			s = quoteValue(s)
		}
		for j, l := range wrap(s, textWidth-cells(lead)) {
			if i > 0 || j > 0 {
				lead = strings.Repeat(" ", cells(lead))
			}
			p.line(lead + l)
		}
	}
}

// quoteValue quotes a text value so spaces at its ends show; numbers and
// yes/no stay bare.
func quoteValue(s string) string {
	if s == "yes" || s == "no" || strings.Trim(s, "0123456789.") == "" {
		return s
	}
	return "“" + s + "”"
}

// crawlers prints report.crawlers as one table, a row per crawler.
func (p *printer) crawlers(r *Report) {
	if len(r.Crawlers) == 0 {
		return
	}
	p.line("")
	p.para("CRAWLERS  ", "what each is told and sees, computed from this audit (nothing was fetched as them)")
	const wTok, wView, wRobots, wIndex, wText = 16, 8, 10, 12, 5
	wTitle := textWidth - 2 - wTok - wView - wRobots - wIndex - wText - 5
	row := func(tok, view, robots, index, title, text string) {
		p.line("  " + fit(tok, wTok) + " " + fit(view, wView) + " " + fit(robots, wRobots) + " " +
			fit(index, wIndex) + " " + fit(text, wText) + " " + shorten(title, wTitle))
	}
	row("crawler", "view", "robots.txt", "may index", "text", "title")
	for _, c := range r.Crawlers {
		robots := "not read"
		switch {
		case c.Robots.Known && !c.Robots.Allowed:
			robots = "disallowed"
		case c.Robots.Known:
			robots = "allowed"
		}
		index := "yes"
		switch {
		case c.Missing:
			index = "no view"
		case c.Robots.Known && !c.Robots.Allowed:
			index = "no (robots)"
		case !c.MayIndex:
			index = "no (noindex)"
		}
		view := "plain"
		if c.View == compare.LaneRender {
			view = "rendered"
		}
		title := "(none)"
		if c.Title != "" {
			title = "“" + cleanText(c.Title) + "”"
		}
		row(cleanText(c.Token), view, robots, index, title, compare.Percent(c.ContentShare))
	}
}

// maxTextMessages is how many console errors and exceptions the text
// report lists.
const maxTextMessages = 5

func (p *printer) lanes(r *Report) {
	p.line("")
	p.line("LANES")
	p.lane("plain", &r.Lanes.Plain)
	p.lane("rendered", &r.Lanes.Render.LaneReport)
	rl := r.Lanes.Render
	const in = "           "
	if len(rl.BlockedRequests) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(rl.BlockedRequests)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, rl.BlockedRequests[k]))
		}
		p.para(in+"blocked: ", strings.Join(parts, ", "))
	}
	for _, l := range []struct {
		what string
		msgs []string
	}{{"console error", rl.ConsoleErrors}, {"exception", rl.Exceptions}} {
		for i, m := range l.msgs {
			if i == maxTextMessages {
				p.line(fmt.Sprintf("%s… and %d more", in, len(l.msgs)-maxTextMessages))
				break
			}
			p.line(in + shorten(l.what+": "+cleanText(m), textWidth-len(in)))
		}
	}
}

func (p *printer) lane(name string, l *LaneReport) {
	parts := []string{string(l.Outcome)}
	if l.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", l.HTTPStatus), orDash(l.ContentType), compare.Size(l.Bytes),
			"first byte "+compare.Millis(l.TTFBMS))
	}
	if l.CutByDeadline {
		parts = append(parts, "stopped by the deadline after "+compare.Millis(l.DurationMS))
	} else if l.Outcome != OutcomeSkipped {
		parts = append(parts, "total "+compare.Millis(l.DurationMS))
	}
	p.para("  "+fit(name, 9), strings.Join(parts, " · "))
	const in = "           "
	for _, h := range l.Redirects {
		p.para(in, fmt.Sprintf("redirect %d %s → %s", h.Status, h.URL, h.Location))
	}
	if l.NotModified {
		p.para(in, "not modified (304): the previous extract was reused")
	}
	if l.Error != "" {
		p.para(in+"error: ", l.Error)
	}
	p.para(in+"user agent: ", l.UserAgent)
}

func (p *printer) robots(r *Report) {
	p.line("")
	rb := r.Robots
	if rb == nil {
		p.line("ROBOTS.TXT  not read: the site could not be reached, so nothing was decided")
		return
	}
	what := fmt.Sprintf("%s: %s", rb.URL, rb.Outcome.Words())
	if rb.HTTPStatus != 0 {
		what += fmt.Sprintf(" (HTTP %d)", rb.HTTPStatus)
	}
	p.para("ROBOTS.TXT  ", what)
	const in = "            "
	switch {
	case rb.Outcome == "unreachable":
		p.para(in, "no decision: robots.txt could not be read ("+rb.Reason+"), so nothing else was fetched")
	case rb.Allowed:
		s := "allowed for " + r.Agent
		if rb.Rule != "" {
			s += fmt.Sprintf(" by “%s” (line %d, group “%s”)", rb.Rule, rb.RuleLine, rb.Group)
		}
		p.para(in, s)
	default:
		s := fmt.Sprintf("DISALLOWED for %s by “%s” (line %d, group “%s”)", r.Agent, rb.Rule, rb.RuleLine, rb.Group)
		if r.Status.Ran() {
			s += "; the audit ran because a person asked for it"
		} else {
			s += "; nothing was fetched"
		}
		p.para(in, s)
	}
	for _, n := range rb.Notes() {
		p.para(in, n)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// plural is "1 warning" or "3 warnings".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
