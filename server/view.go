package server

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
)

// maxItems caps the list items a report page shows per cell.
const maxItems = 40

// reportView is what report.html renders for a finished audit.
type reportView struct {
	R *audit.Report
	// Since is the change log of a re-audit since the previous one of its
	// site (memberpages.go); nil for other audits.
	Since []string
	// Severity colours the verdict box: critical, warning, info or none.
	Severity          string
	Critical          int
	Warnings          int
	Compared          bool
	TextPct, LinkPct  string
	Trigger           string
	FinalURL          string
	RobotsLine        string
	Rows              []diffRow
	Groups            []findingGroup
	Lanes             []laneRow
	Redirects         [2][]compare.Redirect
	Blocked           []blockedRow
	RenderOnlyLinks   []compare.Link
	MoreRenderOnly    int
	StartedAt         string
	Duration          string
	ConsoleErrors     int
	Exceptions        int
	FailedSubrequests int
	Crawlers          []crawlerView
}

// crawlerView is one row of the crawlers table.
type crawlerView struct {
	Token, View, Robots, Directives, Index, Title, Description, Canonical, Source string
	Share                                                                         string
	Blocked, MayIndex                                                             bool
}

// crawlerViews formats report.crawlers for the page.
func crawlerViews(rows []compare.CrawlerRow) []crawlerView {
	out := make([]crawlerView, 0, len(rows))
	for _, c := range rows {
		v := crawlerView{Token: c.Token, View: string(c.View), Title: c.Title, Description: c.Description,
			Canonical: c.Canonical, Source: c.Source, Share: compare.Percent(c.ContentShare), MayIndex: c.MayIndex,
			Directives: strings.Join(c.Directives, "; ")}
		switch {
		case !c.Robots.Known:
			v.Robots = "not read"
		case !c.Robots.Allowed:
			v.Robots, v.Blocked = "disallowed by "+c.Robots.Rule, true
		case c.Robots.Rule != "":
			v.Robots = "allowed by " + c.Robots.Rule
		default:
			v.Robots = "allowed"
		}
		if c.Robots.Group != "" {
			v.Robots += " (" + c.Robots.Group + ")"
		}
		switch {
		case c.Missing:
			v.Index = "no view (lane failed)"
		case c.MayIndex:
			v.Index = "yes"
		case v.Blocked:
			v.Index = "no (robots.txt)"
		default:
			v.Index = "no (noindex)"
		}
		out = append(out, v)
	}
	return out
}

// diffRow is one field of the side-by-side table.
type diffRow struct {
	Field  string
	Label  string
	Change string
	// ChangeWords says the change for people ("only after JavaScript").
	ChangeWords string
	Differs     bool
	Plain       cell
	Render      cell
}

// cell is one lane's value of a field: text, or a list of items.
type cell struct {
	Empty bool
	Text  string
	List  bool
	Items []item
	More  int
}

// item is one list entry; Only marks entries the other lane lacks.
type item struct {
	Text string
	Only bool
}

// laneRow is one row of the lane details table.
type laneRow struct {
	Label         string
	Plain, Render string
	// Long marks values that are one long token (a URL, a user agent):
	// they may break anywhere rather than widen the page.
	Long bool
}

// blockedRow counts the render lane's blocked requests of one reason.
type blockedRow struct {
	Reason string
	Count  int
}

// triggerWords says who asked for an audit.
var triggerWords = map[audit.Trigger]string{
	audit.TriggerCLI: "the command line", audit.TriggerForm: "the form", audit.TriggerAPI: "the API",
	audit.TriggerScheduled: "a scheduled re-audit", audit.TriggerMember: "a member's run now",
}

// newReportView prepares a finished report for the page.
func newReportView(r *audit.Report) reportView {
	v := reportView{R: r, StartedAt: r.StartedAt.UTC().Format(time.RFC1123),
		Duration: compare.Millis(r.DurationMS), Severity: string(compare.SeverityNone), Trigger: triggerWords[r.Trigger]}
	if c := r.Verdict; c != nil {
		if c.Severity != "" {
			v.Severity = string(c.Severity)
		}
		v.Critical, v.Warnings = c.Critical, c.Warnings
		if c.TextShare != nil && c.LinkShare != nil {
			v.Compared = true
			v.TextPct, v.LinkPct = compare.Percent(*c.TextShare), compare.Percent(*c.LinkShare)
		}
	}
	for _, l := range []string{r.Lanes.Plain.FinalURL, r.Lanes.Render.FinalURL} {
		if l != "" && l != r.URL && v.FinalURL == "" {
			v.FinalURL = l
		}
	}
	v.RobotsLine = robotsLine(r)
	for _, d := range r.Diff {
		v.Rows = append(v.Rows, newDiffRow(d))
	}
	v.Groups = groupFindings(r.Findings, r.URL)
	v.Lanes = laneRows(r)
	v.Redirects = [2][]compare.Redirect{r.Lanes.Plain.Redirects, r.Lanes.Render.Redirects}
	for _, reason := range slices.Sorted(maps.Keys(r.Lanes.Render.BlockedRequests)) {
		v.Blocked = append(v.Blocked, blockedRow{reason, r.Lanes.Render.BlockedRequests[reason]})
	}
	v.RenderOnlyLinks = renderOnlyLinks(r)
	if len(v.RenderOnlyLinks) > maxItems {
		v.MoreRenderOnly = len(v.RenderOnlyLinks) - maxItems
		v.RenderOnlyLinks = v.RenderOnlyLinks[:maxItems]
	}
	v.ConsoleErrors, v.Exceptions = len(r.Lanes.Render.ConsoleErrors), len(r.Lanes.Render.Exceptions)
	v.FailedSubrequests = len(r.Lanes.Render.FailedRequests)
	v.Crawlers = crawlerViews(r.Crawlers)
	return v
}

// robotsLine says what robots.txt decided about the page, and claims no
// decision that was not made.
func robotsLine(r *audit.Report) string {
	rb := r.Robots
	switch {
	case rb == nil:
		return "not read: the site could not be reached, so nothing was decided"
	case rb.Outcome == "unreachable":
		return "no decision: robots.txt could not be read (" + rb.Reason + "), so nothing else was fetched"
	case rb.Allowed:
		return "allowed for " + r.Agent
	case r.Status.Ran():
		return "disallowed for " + r.Agent + "; the audit ran once because a person asked for it"
	}
	return "disallowed for " + r.Agent + "; nothing was fetched"
}

func newDiffRow(d compare.FieldDiff) diffRow {
	row := diffRow{Field: d.Field, Label: compare.FieldLabel(d.Field), Change: string(d.Change),
		ChangeWords: compare.ChangeLabel(d.Change), Differs: d.Change != compare.ChangeSame,
		Plain: newCell(d.Plain), Render: newCell(d.Render)}
	if row.Plain.List && row.Render.List {
		markOnly(&row.Plain, row.Render)
		markOnly(&row.Render, row.Plain)
	}
	return row
}

// markOnly marks the items of c that other does not have.
func markOnly(c *cell, other cell) {
	have := map[string]bool{}
	for _, it := range other.Items {
		have[it.Text] = true
	}
	for i := range c.Items {
		c.Items[i].Only = !have[c.Items[i].Text]
	}
}

// newCell formats a diff value in words (compare.DisplayValue, which the
// text report uses too): a report fresh from the auditor and one decoded
// from the store read the same.
func newCell(v any) cell {
	items, list := compare.DisplayValue(v)
	if !list {
		if len(items) == 0 {
			return cell{Empty: true}
		}
		return cell{Text: items[0]}
	}
	c := cell{List: true, Empty: len(items) == 0}
	for i, it := range items {
		if i == maxItems {
			c.More = len(items) - maxItems
			break
		}
		c.Items = append(c.Items, item{Text: it})
	}
	return c
}

func laneRows(r *audit.Report) []laneRow {
	p, q := &r.Lanes.Plain, &r.Lanes.Render.LaneReport
	status := func(l *audit.LaneReport) string {
		if l.HTTPStatus == 0 {
			return "no response"
		}
		if l.NotModified {
			return strconv.Itoa(l.HTTPStatus) + " (not modified: the previous extract was reused)"
		}
		return strconv.Itoa(l.HTTPStatus)
	}
	outcome := func(l *audit.LaneReport) string {
		if l.Error != "" {
			return string(l.Outcome) + ": " + l.Error
		}
		return string(l.Outcome)
	}
	took := func(l *audit.LaneReport) string {
		if l.CutByDeadline {
			return "stopped by the deadline after " + compare.Millis(l.DurationMS)
		}
		if l.Outcome == audit.OutcomeSkipped {
			return "not run"
		}
		return compare.Millis(l.DurationMS)
	}
	rows := []laneRow{
		{"outcome", outcome(p), outcome(q), false},
		{"HTTP status", status(p), status(q), false},
		{"final URL", p.FinalURL, q.FinalURL, true},
		{"user agent", p.UserAgent, q.UserAgent, true},
		{"content type", p.ContentType, q.ContentType, true},
		{"size", noAnswer(p, compare.Size(p.Bytes)), noAnswer(q, compare.Size(q.Bytes)), false},
		{"time to first byte", noAnswer(p, compare.Millis(p.TTFBMS)), noAnswer(q, compare.Millis(q.TTFBMS)), false},
		{"lane duration", took(p), took(q), false},
		{"redirects", strconv.Itoa(len(p.Redirects)), strconv.Itoa(len(q.Redirects)), false},
		{"requests made", plainRequests(p), renderRequests(q, r.Lanes.Render.Requests), false},
	}
	return append(rows, laneRow{"network settled", "n/a", settledWords(q, r.Lanes.Render.Settled), false})
}

// noAnswer is a lane's value, or "n/a" when the lane got no response.
func noAnswer(l *audit.LaneReport, v string) string {
	if l.HTTPStatus == 0 {
		return "n/a"
	}
	return v
}

// plainRequests says what the plain lane asked the site for: one GET and
// its redirects, none when it did not run.
func plainRequests(l *audit.LaneReport) string {
	switch {
	case l.Outcome == audit.OutcomeSkipped:
		return "none (it did not run)"
	case l.HTTPStatus == 0:
		return "1, unanswered"
	case len(l.Redirects) > 0:
		return strconv.Itoa(1+len(l.Redirects)) + " (" + compare.Plural(len(l.Redirects), "redirect", "redirects") + " followed)"
	}
	return "1"
}

// renderRequests says how many requests the render lane made.
func renderRequests(l *audit.LaneReport, n int) string {
	if l.Outcome == audit.OutcomeSkipped || n == 0 && l.HTTPStatus == 0 {
		return "none (it did not run)"
	}
	return strconv.Itoa(n)
}

// settledWords says whether the rendered page stopped loading: not
// asked when no page loaded.
func settledWords(l *audit.LaneReport, settled bool) string {
	switch {
	case l.Outcome == audit.OutcomeSkipped || l.HTTPStatus == 0:
		return "n/a (no page loaded)"
	case settled:
		return "yes"
	}
	return "no (the page kept loading until the cap)"
}

// renderOnlyLinks lists the rendered page's links the plain lane lacks.
func renderOnlyLinks(r *audit.Report) []compare.Link {
	pp, rp := r.Lanes.Plain.Page, r.Lanes.Render.Page
	if pp == nil || rp == nil {
		return nil
	}
	have := make(map[string]bool, len(pp.Links))
	for _, l := range pp.Links {
		have[l.Href] = true
	}
	var out []compare.Link
	seen := map[string]bool{}
	for _, l := range rp.Links {
		if !have[l.Href] && !seen[l.Href] {
			seen[l.Href] = true
			out = append(out, l)
		}
	}
	return out
}

// progressView is what progress.html renders while an audit is queued or running.
type progressView struct {
	ID      string
	URL     string
	State   string
	Elapsed string
	// StartsIn says when a queued audit is due to start ("in 42 s"), empty
	// once its time has come.
	StartsIn string
	// Note says why a queued audit is overdue (pending.Note).
	Note string
	// Steps are the audit's steps, the running one marked; empty while
	// queued or when the audit runs in another process (a join).
	Steps []stepView
	// Typical says how long audits take here, in a sentence, for the
	// waiting reader (durations.estimate).
	Typical string
}

// stepView is one step of a running audit.
type stepView struct {
	Words       string
	Done, Doing bool
}
