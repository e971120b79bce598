package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// RobotsReport is the robots.txt section of an audit report (report.robots):
// what was read, what it says about the audited URL, and what is wrong with it.
type RobotsReport struct {
	// URL is the origin's robots.txt URL.
	URL string `json:"url"`
	// Outcome is fetched, not_found or unreachable.
	Outcome RobotsOutcome `json:"outcome"`
	// HTTPStatus is the last answer's status; omitted when there was none.
	HTTPStatus int `json:"http_status,omitempty"`
	// Size is the number of body bytes read.
	Size int `json:"size"`
	// Requests is how many requests reading robots.txt took, redirect
	// hops included (one when it answered at once).
	Requests int `json:"requests"`
	// Allowed says whether LektaBot may fetch the audited URL; false when
	// robots.txt was unreachable (the audit is then skipped).
	Allowed bool `json:"allowed"`
	// Group is the deciding group's user-agent line(s), as in
	// Decision.Group, control characters shown as escapes ("\v").
	Group string `json:"group,omitempty"`
	// Rule is the deciding rule as written, control characters shown as
	// escapes.
	Rule string `json:"rule,omitempty"`
	// RuleLine is the deciding rule's line number.
	RuleLine int `json:"rule_line,omitempty"`
	// Reading is which reading of the file decided: "both" when the RFC
	// 9309 reading and Google's agree, "rfc9309" or "google" when only
	// that one disallows (the stricter answer holds). Omitted when no file
	// was read or no reading was needed (/robots.txt itself).
	Reading Reading `json:"reading,omitempty"`
	// Truncated: the file is larger than LektaBot reads (500 KiB); the
	// rest was ignored.
	Truncated bool `json:"truncated,omitempty"`
	// Partial: the file was truncated and the answer is allowed, so it
	// covers only the part read; a Disallow in the rest was not seen.
	Partial bool `json:"partial,omitempty"`
	// Sitemaps are the valid Sitemap URLs robots.txt lists.
	Sitemaps []string `json:"sitemaps,omitempty"`
	// Issues are the lint issues per line.
	Issues []RobotsIssue `json:"issues,omitempty"`
	// Reason explains a not_found or unreachable outcome in a sentence.
	Reason string `json:"reason,omitempty"`
}

// NewRobotsReport builds the report section from a fetch result and the
// decision taken on the audited URL (from res.Decide).
func NewRobotsReport(res RobotsResult, d Decision) RobotsReport {
	rep := RobotsReport{
		URL:        res.URL,
		Outcome:    res.Outcome,
		HTTPStatus: res.HTTPStatus,
		Size:       res.Size,
		Requests:   len(res.Hops),
		Allowed:    d.Allowed && res.Outcome != RobotsUnreachable,
		Group:      visibleText(d.Group),
		Rule:       visibleText(d.Rule),
		RuleLine:   d.Line,
		Reading:    d.Reading,
		Partial:    d.Partial,
		Reason:     res.Reason,
	}
	if res.Robots != nil {
		rep.Sitemaps = res.Robots.Sitemaps()
		rep.Issues = res.Robots.Issues()
		rep.Truncated = res.Robots.Truncated()
	}
	return rep
}

// Notes says in sentences for people what else the answer rests on: the
// one reading that disallowed when the other would have allowed, and a
// file read only in part. None when both readings agree on a whole file.
func (r RobotsReport) Notes() []string {
	var notes []string
	switch r.Reading {
	case ReadingGoogle:
		notes = append(notes, "Only Google's reading of the file disallows this page (Google's parser reads names by prefix and by their misspellings, a missing colon, vertical tabs and form feeds as blanks, a line only up to a NUL byte or its first 16,663 bytes, and escapes undecoded); RFC 9309 as written would allow it. LektaBot obeys the stricter reading.")
	case ReadingRFC:
		notes = append(notes, "Only the RFC 9309 reading of the file disallows this page (it decodes escapes of unreserved characters and encodes spaces and other bytes before comparing); Google's parser would allow it. LektaBot obeys the stricter reading.")
	}
	switch {
	case r.Partial:
		notes = append(notes, fmt.Sprintf("robots.txt is larger than %d bytes (500 KiB) and LektaBot, like Google, reads no further, so this answer covers only the part read: a Disallow in the rest was not seen.", RobotsMaxBytes))
	case r.Truncated:
		notes = append(notes, fmt.Sprintf("robots.txt is larger than %d bytes (500 KiB); LektaBot, like Google, read only that much of it.", RobotsMaxBytes))
	}
	return notes
}

// visibleText writes the control characters of s (C0, DEL, C1 and the
// bidirectional formatting characters) as escapes and invalid UTF-8 as
// U+FFFD, so text from a robots.txt shows as written wherever a report is
// read: a vertical tab as \v, not as an invisible byte.
func visibleText(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, invisible) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\v':
			b.WriteString(`\v`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// invisible reports the runes visibleText escapes; a tab is kept only
// inside text (RFC 9309 allows it around names and values, where it was
// trimmed already).
func invisible(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x061c || r == 0x200e || r == 0x200f ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
