package audit

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"lekta.dev/lekta/compare"
)

// WriteText prints the report for people: the verdict first, then the
// fields side by side, then the findings by severity, then lane details.
func WriteText(w io.Writer, r *Report) error {
	p := &printer{w: &safeWriter{w: w}}
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

// f prints; string arguments are page data or carry it, so they are
// cleaned of control characters first.
func (p *printer) f(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = cleanText(s)
		}
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

func (p *printer) header(r *Report) {
	p.f("LektaBot audit of %s\n", r.URL)
	p.f("status: %s", r.Status)
	if r.Reason != "" {
		p.f(" (%s)", r.Reason)
	}
	p.f("   took %s   trigger %s   id %s\n", ms(r.DurationMS), r.Trigger, r.ID)
	if r.Cached {
		p.f("answered from the result cache (%ds old); the site was not contacted\n", r.CacheAgeS)
	}
	if r.Joined {
		p.f("joined the audit of this URL that was already running; the site was contacted once for both\n")
	}
	if r.RetryAfterS > 0 {
		p.f("retry after %ds\n", r.RetryAfterS)
	}
	if v := r.Verdict; v != nil {
		p.f("\nverdict: %s\n", v.Summary)
		p.f("         the plain lane has %.0f%% of the rendered text and %.0f%% of its links\n",
			100*v.TextShare, 100*v.LinkShare)
	}
}

func (p *printer) fields(r *Report) {
	if len(r.Diff) == 0 {
		return
	}
	p.f("\n")
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "field\tplain (no JavaScript)\trendered (Chromium)\t\n")
	for _, d := range r.Diff {
		mark := ""
		if d.Change != compare.ChangeSame {
			mark = "<- " + string(d.Change)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Field, value(d.Plain), value(d.Render), mark)
	}
	if err := tw.Flush(); err != nil && p.err == nil {
		p.err = err
	}
}

func (p *printer) findings(r *Report) {
	if len(r.Findings) == 0 {
		p.f("\nfindings: none\n")
		return
	}
	p.f("\nfindings:\n")
	fs := append([]compare.Finding(nil), r.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return rank(fs[i].Severity) < rank(fs[j].Severity) })
	for _, f := range fs {
		lane := ""
		if f.Lane != "" {
			lane = " [" + string(f.Lane) + "]"
		}
		p.f("  %-8s %s%s\n           %s\n", strings.ToUpper(string(f.Severity)), f.Code, lane, f.Message)
	}
}

// crawlers prints report.crawlers as one table, a row per crawler.
func (p *printer) crawlers(r *Report) {
	if len(r.Crawlers) == 0 {
		return
	}
	p.f("\ncrawlers (what each is told and sees; computed from this audit, nothing fetched as them):\n")
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  crawler\tview\trobots.txt\tdirectives\tindex\ttitle\ttext\t\n")
	for _, c := range r.Crawlers {
		robots := "not read"
		switch {
		case c.Robots.Known && !c.Robots.Allowed:
			robots = "DISALLOWED " + c.Robots.Rule
		case c.Robots.Known && c.Robots.Rule != "":
			robots = "allowed " + c.Robots.Rule
		case c.Robots.Known:
			robots = "allowed"
		}
		if c.Robots.Group != "" {
			robots += " [" + c.Robots.Group + "]"
		}
		index := "yes"
		switch {
		case c.Missing:
			index = "no view"
		case !c.MayIndex:
			index = "no"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t\n", terminalSafe(c.Token), c.View, value(robots),
			value(strings.Join(c.Directives, "; ")), index, value(c.Title), 100*c.ContentShare)
	}
	if err := tw.Flush(); err != nil && p.err == nil {
		p.err = err
	}
}

// terminalSafe quotes s when it holds anything but printable ASCII.
func terminalSafe(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

func rank(s compare.Severity) int {
	switch s {
	case compare.SeverityCritical:
		return 0
	case compare.SeverityWarning:
		return 1
	}
	return 2
}

func (p *printer) lanes(r *Report) {
	p.f("\nlanes:\n")
	p.lane("plain", &r.Lanes.Plain)
	p.lane("render", &r.Lanes.Render.LaneReport)
	rl := r.Lanes.Render
	if len(rl.BlockedRequests) > 0 {
		keys := make([]string, 0, len(rl.BlockedRequests))
		for k := range rl.BlockedRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, rl.BlockedRequests[k])
		}
		p.f("          blocked: %s\n", strings.Join(parts, ", "))
	}
	if n := len(rl.ConsoleErrors) + len(rl.Exceptions); n > 0 {
		p.f("          %d console errors, %d uncaught exceptions\n", len(rl.ConsoleErrors), len(rl.Exceptions))
	}
}

func (p *printer) lane(name string, l *LaneReport) {
	p.f("  %-7s %s", name, l.Outcome)
	if l.HTTPStatus != 0 {
		p.f("  HTTP %d  %s  %s", l.HTTPStatus, orDash(l.ContentType), size(l.Bytes))
	}
	p.f("  ttfb %s  total %s\n", ms(l.TTFBMS), ms(l.DurationMS))
	for _, h := range l.Redirects {
		p.f("          redirect %d %s -> %s\n", h.Status, h.URL, h.Location)
	}
	if l.Error != "" {
		p.f("          error: %s\n", l.Error)
	}
	p.f("          user agent: %s\n", l.UserAgent)
}

func (p *printer) robots(r *Report) {
	rb := r.Robots
	if rb == nil {
		return
	}
	p.f("\nrobots.txt: %s %s", rb.URL, rb.Outcome)
	if rb.HTTPStatus != 0 {
		p.f(" (HTTP %d)", rb.HTTPStatus)
	}
	verdict := "allowed"
	if !rb.Allowed {
		verdict = "DISALLOWED"
	}
	p.f("; %s for %s", verdict, r.Agent)
	if rb.Rule != "" {
		p.f(" by %q", rb.Rule)
	}
	p.f("\n")
}

// value formats one side of a diff row for a terminal column.
func value(v any) string {
	const width = 48
	var s string
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		if x == "" {
			return "-"
		}
		s = fmt.Sprintf("%q", x)
	case []string:
		if len(x) == 0 {
			return "-"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cleanText(e)
		}
		s = strings.Join(parts, ", ")
	case []any:
		if len(x) == 0 {
			return "-"
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cleanText(fmt.Sprint(e))
		}
		s = strings.Join(parts, ", ")
	default:
		s = cleanText(fmt.Sprint(x))
	}
	if r := []rune(s); len(r) > width {
		s = string(r[:width-1]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ms(v int64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.1fs", float64(v)/1000)
	}
	return fmt.Sprintf("%dms", v)
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
