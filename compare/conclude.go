package compare

import (
	"slices"
	"strings"
)

// SeverityNone is a Conclusion's severity when a report has no finding.
const SeverityNone Severity = "none"

// Conclusion is a report's verdict, what a reader sees first: the worst
// finding in plain words, the counts of critical and warning findings, and
// the comparison's shares when both lanes produced a document.
type Conclusion struct {
	// Summary is a few sentences for people; the first is the worst
	// finding's when there is a critical or warning one, so a report with
	// a critical finding never opens with good news.
	Summary string `json:"summary"`
	// Severity is the worst finding's severity, or "none".
	Severity Severity `json:"severity"`
	// Critical and Warnings count the findings of those severities.
	Critical int `json:"critical"`
	Warnings int `json:"warnings"`
	// TextShare and LinkShare are the comparison's shares (0..1) of the
	// rendered page's words and links the plain lane also has; absent when
	// a lane produced no document, so nothing was compared.
	TextShare *float64 `json:"text_share,omitempty"`
	LinkShare *float64 `json:"link_share,omitempty"`
}

// leadOrder ranks, among findings of one severity, the ones that say most
// about the whole page; the others follow in report order.
var leadOrder = []string{
	CodeSiteDNS, CodeSiteRefused, CodeSiteTLS, CodeSiteTimeout, CodeSiteNetwork,
	CodeRobotsUnreachable, CodeRobotsDisallowed, CodeStatusNotOK, CodeStatusDiffers,
	CodeRenderRedirectMetaRefresh, CodeRenderRedirectScript, CodeRenderNavigated, CodeRenderHistoryPath,
	CodeSoft404RenderOnly, CodeSoft404,
	CodeRobotsNoindexPlainOnly, CodeRobotsNoindexRenderOnly, CodeContentRenderOnly,
	CodeTitleRenderOnly, CodeLinksRenderOnly, CodeCanonicalChanged,
	CodeLaneTimeout, CodeLaneError, CodeLaneBlocked, CodePageSlow,
}

// Lead returns the finding a verdict opens with: the most severe, and
// among those the first of leadOrder, else the first in report order.
// ok is false when there are no findings.
func Lead(findings []Finding) (lead Finding, ok bool) {
	rank := func(f Finding) (int, int) {
		i := slices.Index(leadOrder, f.Code)
		if i < 0 {
			i = len(leadOrder)
		}
		return severityRank(f.Severity), i
	}
	for _, f := range findings {
		if !ok {
			lead, ok = f, true
			continue
		}
		s, i := rank(f)
		ls, li := rank(lead)
		if s < ls || (s == ls && i < li) {
			lead = f
		}
	}
	return lead, ok
}

// Conclude writes a report's verdict from all its findings (the lanes' and
// the pipeline's included), the comparison's verdict (nil when no lane
// produced a document; compared says both did) and the crawler rows.
func Conclude(findings []Finding, cmp *Verdict, compared bool, rows []CrawlerRow) Conclusion {
	c := Conclusion{Severity: SeverityNone}
	for _, f := range findings {
		switch f.Severity {
		case SeverityCritical:
			c.Critical++
		case SeverityWarning:
			c.Warnings++
		}
	}
	if cmp != nil && compared {
		ts, ls := cmp.TextShare, cmp.LinkShare
		c.TextShare, c.LinkShare = &ts, &ls
	}
	var parts []string
	lead, ok := Lead(findings)
	if ok {
		c.Severity = lead.Severity
	}
	if ok && lead.Severity != SeverityInfo {
		parts = append(parts, FirstSentence(lead.Message))
	}
	if cmp != nil && cmp.Summary != "" {
		switch {
		case ok && lead.Severity != SeverityInfo && lead.Code == CodeStatusNotOK && lead.Lane == "":
			// Both lanes got the error page: its text is no comparison.
		case ok && lead.Severity != SeverityInfo && lead.Code == CodeContentRenderOnly:
			// The lead already gives the text share.
		case ok && lead.Code == CodeRobotsDisallowed && compared:
			parts = append(parts, shareSentence(cmp.TextShare, cmp.LinkShare, cmp.hasLinks))
		default:
			parts = append(parts, cmp.Summary)
		}
	}
	// A disallowed page's lead already names the crawlers robots.txt stops.
	if s := CrawlerSummary(rows); s != "" && !(ok && lead.Code == CodeRobotsDisallowed) {
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		parts = append(parts, "Nothing was compared and nothing was found.")
	}
	c.Summary = strings.Join(parts, " ")
	return c
}

// shareSentence states the comparison without saying who reads it, for a
// page crawlers may not fetch at all.
func shareSentence(text, links float64, withLinks bool) string {
	s := "Fetched as a person asked, the server HTML has " + shareWords(text) + " of the rendered text"
	if withLinks {
		s += " and " + shareWords(links) + " of its links"
	}
	return s + "."
}

// FirstSentence returns the first sentence of a message: up to the first
// ". " (or ";" never) outside quotation marks and brackets, so a quoted
// title with a full stop in it stays whole.
func FirstSentence(msg string) string {
	depth := 0
	for i, r := range msg {
		switch r {
		case '“', '(', '[', '«':
			depth++
		case '”', ')', ']', '»':
			if depth > 0 {
				depth--
			}
		case '.':
			if depth == 0 && (i+1 == len(msg) || msg[i+1] == ' ') {
				return msg[:i+1]
			}
		}
	}
	return msg
}
