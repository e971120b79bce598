package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
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
	R                 *audit.Report
	TextPct, LinkPct  int
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
	Share                                                                         int
	Blocked, MayIndex                                                             bool
}

// crawlerViews formats report.crawlers for the page.
func crawlerViews(rows []compare.CrawlerRow) []crawlerView {
	out := make([]crawlerView, 0, len(rows))
	for _, c := range rows {
		v := crawlerView{Token: c.Token, View: string(c.View), Title: c.Title, Description: c.Description,
			Canonical: c.Canonical, Source: c.Source, Share: pct(c.ContentShare), MayIndex: c.MayIndex,
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
	Field   string
	Change  string
	Differs bool
	Plain   cell
	Render  cell
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

// findingGroup holds the findings of one severity.
type findingGroup struct {
	Severity string
	Findings []findingView
}

// findingView is a finding with its code's explanation.
type findingView struct {
	compare.Finding
	Explanation string
}

// laneRow is one row of the lane details table.
type laneRow struct {
	Label         string
	Plain, Render string
}

// blockedRow counts the render lane's blocked requests of one reason.
type blockedRow struct {
	Reason string
	Count  int
}

// newReportView prepares a finished report for the page.
func newReportView(r *audit.Report) reportView {
	v := reportView{R: r, StartedAt: r.StartedAt.UTC().Format(time.RFC1123),
		Duration: ms(r.DurationMS)}
	if r.Verdict != nil {
		v.TextPct = pct(r.Verdict.TextShare)
		v.LinkPct = pct(r.Verdict.LinkShare)
	}
	for _, d := range r.Diff {
		v.Rows = append(v.Rows, newDiffRow(d))
	}
	v.Groups = groupFindings(r.Findings)
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

// pct is a share as a whole percentage, rounded down so 99.6% never shows as 100%.
func pct(share float64) int {
	return int(math.Floor(100*share + 1e-9))
}

func ms(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d ms", n)
	}
	return fmt.Sprintf("%.1f s", float64(n)/1000)
}

func newDiffRow(d compare.FieldDiff) diffRow {
	row := diffRow{Field: d.Field, Change: string(d.Change), Differs: d.Change != compare.ChangeSame,
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

// newCell formats a diff value: string, number, bool, list or object. A
// report fresh from the auditor holds Go values; they are brought into the
// shape of a decoded report first, so both read the same.
func newCell(v any) cell {
	v = asJSON(v)
	switch x := v.(type) {
	case nil:
		return cell{Empty: true}
	case []any:
		c := cell{List: true, Empty: len(x) == 0}
		for i, e := range x {
			if i == maxItems {
				c.More = len(x) - maxItems
				break
			}
			c.Items = append(c.Items, item{Text: scalar(e)})
		}
		return c
	case map[string]any:
		c := cell{List: true, Empty: len(x) == 0}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			c.Items = append(c.Items, item{Text: k + ": " + scalar(x[k])})
		}
		return c
	case string:
		return cell{Empty: x == "", Text: x}
	}
	return cell{Text: scalar(v)}
}

// asJSON returns v as encoding/json would decode it into an interface.
func asJSON(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, []any, map[string]any:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprint(v)
	}
	return out
}

// scalar formats one value on one line.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case map[string]any:
		// Known shapes first: a link-like {href, …}, a heading {level, text}, hreflang {lang, href}.
		if lang, ok := x["lang"].(string); ok {
			return lang + " → " + scalar(x["href"])
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+": "+scalar(x[k]))
		}
		return strings.Join(parts, ", ")
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, scalar(e))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// severityOrder ranks severities, most serious first.
var severityOrder = []compare.Severity{compare.SeverityCritical, compare.SeverityWarning, compare.SeverityInfo}

func groupFindings(fs []compare.Finding) []findingGroup {
	var out []findingGroup
	rank := func(s compare.Severity) int {
		if i := slices.Index(severityOrder, s); i >= 0 {
			return i
		}
		return len(severityOrder)
	}
	sorted := slices.SortedStableFunc(slices.Values(fs), func(a, b compare.Finding) int {
		return cmp.Compare(rank(a.Severity), rank(b.Severity))
	})
	for _, f := range sorted {
		if len(out) == 0 || out[len(out)-1].Severity != string(f.Severity) {
			out = append(out, findingGroup{Severity: string(f.Severity)})
		}
		fv := findingView{Finding: f}
		if info, ok := compare.LookupCode(f.Code); ok {
			fv.Explanation = info.Explanation
		}
		g := &out[len(out)-1]
		g.Findings = append(g.Findings, fv)
	}
	return out
}

func laneRows(r *audit.Report) []laneRow {
	p, q := &r.Lanes.Plain, &r.Lanes.Render.LaneReport
	status := func(l *audit.LaneReport) string {
		if l.HTTPStatus == 0 {
			return "no response"
		}
		return strconv.Itoa(l.HTTPStatus)
	}
	outcome := func(l *audit.LaneReport) string {
		if l.Error != "" {
			return string(l.Outcome) + ": " + l.Error
		}
		return string(l.Outcome)
	}
	rows := []laneRow{
		{"outcome", outcome(p), outcome(q)},
		{"HTTP status", status(p), status(q)},
		{"final URL", p.FinalURL, q.FinalURL},
		{"user agent", p.UserAgent, q.UserAgent},
		{"content type", p.ContentType, q.ContentType},
		{"bytes", strconv.FormatInt(p.Bytes, 10), strconv.FormatInt(q.Bytes, 10)},
		{"time to first byte", ms(p.TTFBMS), ms(q.TTFBMS)},
		{"lane duration", ms(p.DurationMS), ms(q.DurationMS)},
		{"redirects", strconv.Itoa(len(p.Redirects)), strconv.Itoa(len(q.Redirects))},
		{"requests made", "1 (plus redirects)", strconv.Itoa(r.Lanes.Render.Requests)},
	}
	settled := "no (the page kept loading until the cap)"
	if r.Lanes.Render.Settled {
		settled = "yes"
	}
	return append(rows, laneRow{"network settled", "n/a", settled})
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

// progressView is what report.html renders while an audit is queued or running.
type progressView struct {
	ID      string
	URL     string
	State   string
	Elapsed string
}
