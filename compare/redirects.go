package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxClientRedirects bounds the client redirects one report names.
const maxClientRedirects = 5

// clientRedirectFindings reports how the page itself moved the browser:
// a script, the history API or a meta refresh. Without ClientRedirects
// (a render lane that does not record them) a navigation gets the general
// finding.
func (d *differ) clientRedirectFindings(l *findingList, rs *Snapshot) {
	rd := rs.Render
	if len(rd.ClientRedirects) == 0 {
		if rd.Navigations > 0 {
			l.addSeverity(CodeRenderNavigated, SeverityWarning, LaneRender, "A script navigated the browser away from the page (to %s). Crawlers that do not run JavaScript stay on the first page; use a server redirect.", q(rs.FinalURL))
		}
		return
	}
	for _, c := range rd.ClientRedirects[:min(len(rd.ClientRedirects), maxClientRedirects)] {
		cause := clientRedirectCause(c)
		when := afterPageTime(c.PageTime)
		if delay, ok := d.refreshDelay(); ok && c.Mechanism == RedirectMetaRefresh {
			// The page says when: its delay counts from the load. An
			// instant one fires before the render reads the page's
			// clock, which then knows the time only to within a grant.
			when = afterLoad(delay)
			if delay == 0 {
				cause.PageTimeMS = nil
			}
		}
		switch c.Mechanism {
		case RedirectScript:
			l.addSeverity(CodeRenderRedirectScript, SeverityWarning, LaneRender, "A script sent the browser to %s %s. Crawlers that do not render (GPTBot, ClaudeBot, PerplexityBot and most other fetchers) never follow a script redirect and stay on this page; Google follows it only when it renders the page. Use a server redirect (301 or 308) instead.", q(c.To), when)
		case RedirectMetaRefresh:
			l.addSeverity(CodeRenderRedirectMetaRefresh, SeverityWarning, LaneRender, "A meta refresh sent the browser to %s %s. %s Whether AI crawlers such as GPTBot, ClaudeBot or PerplexityBot follow a meta refresh is not documented by their operators. A server redirect (301 or 308) works for every crawler.", q(c.To), when, d.refreshRule())
		case RedirectHistory:
			l.addSeverity(CodeRenderHistoryPath, SeverityWarning, LaneRender, "A script changed the address to %s with the history API %s, without loading a new document. Crawlers that do not render keep the first URL and its server HTML. If the new address is the page's real one, redirect to it on the server.", q(c.To), when)
		default:
			cause.Mechanism = ""
			l.addSeverity(CodeRenderNavigated, SeverityWarning, LaneRender, "The page navigated the browser to %s %s. Crawlers that do not run JavaScript stay on the first page; use a server redirect.", q(c.To), when)
		}
		l.cause(cause)
	}
}

// refreshRule says how Google reads the page's meta refresh: by its delay
// when the server HTML (or the rendered page) has the element, else both rules.
func (d *differ) refreshRule() string {
	switch delay, ok := d.refreshDelay(); {
	case !ok:
		return "Google treats an instant meta refresh (0 s) like a permanent redirect and a delayed one like a temporary redirect."
	case delay == 0:
		return "Google treats an instant meta refresh like a permanent redirect."
	default:
		return "Google treats a delayed meta refresh like a temporary redirect."
	}
}

// refreshDelay is the delay of the meta refresh of the server HTML (or of
// the rendered page), in seconds; ok is false when neither has one.
func (d *differ) refreshDelay() (int, bool) {
	for _, p := range []*Page{d.p.page, d.r.page} {
		if p != nil && p.hasRefresh {
			return p.refreshDelay, true
		}
	}
	return 0, false
}

// afterLoad phrases when a meta refresh fires: "as soon as the page
// loaded", "5 s after the page loaded".
func afterLoad(delay int) string {
	if delay == 0 {
		return "as soon as the page loaded"
	}
	return fmt.Sprintf("%d s after the page loaded", delay)
}

// afterPageTime phrases when a redirect fired as its cause's words do
// (Millis): "after 250 ms of page time", "after 1.2 s of page time".
func afterPageTime(t time.Duration) string {
	return "after " + Millis(t.Milliseconds()) + " of page time"
}

// refreshDelay reads the delay of a meta refresh's content ("5; url=/x"),
// the whole seconds before any fraction, as browsers do; ok is false when
// the content does not start with a number.
func refreshDelay(content string) (delay int, ok bool) {
	s := strings.TrimLeft(content, " \t\n\f\r")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return math.MaxInt32, true
	}
	return n, true
}
