package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Severity grades a robots.txt lint issue.
type Severity string

// The severities. Lines Lighthouse's robots-txt audit reports as errors
// (an unknown name, a misspelling, a missing colon, '$' inside a pattern,
// an empty User-agent) are errors here too.
const (
	// SeverityError: a line that does not do what it says (ignored, never
	// matches, or read differently by different parsers).
	SeverityError Severity = "error"
	// SeverityWarning: a line that works, but not the way it reads, or not everywhere.
	SeverityWarning Severity = "warning"
	// SeverityInfo: worth knowing, nothing to fix.
	SeverityInfo Severity = "info"
)

// IssueCode names a kind of robots.txt lint issue.
type IssueCode string

// The lint issue codes.
const (
	// IssueSyntax "syntax": not a "name: value" record; ignored.
	IssueSyntax IssueCode = "syntax"
	// IssueMissingColon "missing_colon": "Disallow /x": RFC 9309 ignores it,
	// Google reads it as a record; obeyed.
	IssueMissingColon IssueCode = "missing_colon"
	// IssueMisspelled "misspelled_directive": "Dissallow", "useragent",
	// "Disallowed": RFC 9309 ignores it, Google reads it as the directive
	// meant; obeyed.
	IssueMisspelled IssueCode = "misspelled_directive"
	// IssueUnknownDirective "unknown_directive": a name no crawler standard defines; ignored.
	IssueUnknownDirective IssueCode = "unknown_directive"
	// IssueNonstandardDirective "nonstandard_directive": Crawl-delay, Host,
	// Noindex, Content-Signal…: not RFC 9309; LektaBot ignores it.
	IssueNonstandardDirective IssueCode = "nonstandard_directive"
	// IssueBadCrawlDelay "bad_crawl_delay": Crawl-delay value is not a number of seconds.
	IssueBadCrawlDelay IssueCode = "bad_crawl_delay"
	// IssueRuleOutsideGroup "rule_outside_group": Allow/Disallow before any User-agent; ignored.
	IssueRuleOutsideGroup IssueCode = "rule_outside_group"
	// IssueBadPattern "bad_pattern": pattern starts with neither '/' nor '*'; never matches.
	IssueBadPattern IssueCode = "bad_pattern"
	// IssueDollarNotAtEnd "dollar_not_at_end": '$' before the end matches a literal '$'.
	IssueDollarNotAtEnd IssueCode = "dollar_not_at_end"
	// IssueEmptyRule "empty_rule": Allow or Disallow without a pattern; matches nothing.
	IssueEmptyRule IssueCode = "empty_rule"
	// IssueEmptyUserAgent "empty_user_agent": User-agent without a value; names no crawler.
	IssueEmptyUserAgent IssueCode = "empty_user_agent"
	// IssueUserAgentNotToken "user_agent_not_token": value is not a bare product token or "*".
	IssueUserAgentNotToken IssueCode = "user_agent_not_token"
	// IssueGroupContinues "group_continues": a line other than a rule
	// (Sitemap, Crawl-delay, an unknown name) between User-agent lines does
	// not end their run, so the lines above and below form one group, in
	// RFC 9309 and in Google's parser alike.
	IssueGroupContinues IssueCode = "group_continues"
	// IssueEmptyGroup "empty_group": group without rules; its crawlers may fetch everything.
	IssueEmptyGroup IssueCode = "empty_group"
	// IssueInvalidSitemap "invalid_sitemap": Sitemap value is not an absolute http(s) URL.
	IssueInvalidSitemap IssueCode = "invalid_sitemap"
	// IssueTooLarge "too_large": file over RobotsMaxBytes; the rest is ignored.
	IssueTooLarge IssueCode = "too_large"
	// IssueByteOrderMark "byte_order_mark": a (partial) UTF-8 BOM at the start; skipped.
	IssueByteOrderMark IssueCode = "byte_order_mark"
	// IssueLongLine "long_line": a line longer than Google's parser reads
	// (16,663 bytes); it reads a shorter rule, which LektaBot obeys too.
	IssueLongLine IssueCode = "long_line"
	// IssueNULByte "nul_byte": a NUL byte, where Google's parser ends the
	// line; LektaBot obeys both readings.
	IssueNULByte IssueCode = "nul_byte"
	// IssueUnusualBlank "unusual_blank": a vertical tab or form feed, which
	// Google reads as a blank and RFC 9309 does not, or a Unicode space
	// (U+00A0 …) that no parser reads as one.
	IssueUnusualBlank IssueCode = "unusual_blank"
)

// RobotsIssue is one lint finding on a robots.txt line.
type RobotsIssue struct {
	// Line is the 1-based line number (lines end at LF, CR or CRLF).
	Line     int       `json:"line"`
	Severity Severity  `json:"severity"`
	Code     IssueCode `json:"code"`
	Message  string    `json:"message"`
}

// String formats the issue as "12: error: message".
func (is RobotsIssue) String() string {
	return fmt.Sprintf("%d: %s: %s", is.Line, is.Severity, is.Message)
}

// issue records a lint issue.
func (p *robotsParser) issue(line int, sev Severity, code IssueCode, format string, args ...any) {
	p.r.issues = append(p.r.issues, RobotsIssue{
		Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...),
	})
}

// checkBytes lints what the line holds before it is read: bytes past
// Google's line limit, NUL bytes and blanks parsers disagree on.
func (p *robotsParser) checkBytes(n int, line string) {
	if len(line) > googleMaxLine {
		p.issue(n, SeverityWarning, IssueLongLine,
			"the line is %d bytes long; Google's parser reads only its first %d bytes, so it may read a shorter rule than written, and LektaBot obeys that reading too; shorten the line",
			len(line), googleMaxLine)
	}
	if i := strings.IndexByte(line, 0); i >= 0 {
		p.issue(n, SeverityWarning, IssueNULByte,
			"a NUL byte at byte %d: Google's parser ends the line there and reads only what comes before it, and LektaBot obeys that reading too; remove it",
			i+1)
	}
	if strings.ContainsAny(line, "\v\f") {
		p.issue(n, SeverityWarning, IssueUnusualBlank,
			"a vertical tab or form feed: Google's parser reads it as a blank around the name and the value, RFC 9309 does not, and LektaBot obeys whichever reading is stricter; use a space")
	}
	if r, ok := unicodeBlank(line); ok {
		p.issue(n, SeverityWarning, IssueUnusualBlank,
			"%U is not a blank to robots.txt parsers, so it stays part of the name or the value; use a plain space", r)
	}
}

// unicodeBlank finds a Unicode space or invisible separator that people
// mistake for a blank (U+00A0, U+2000–U+200B, U+202F, U+205F, U+3000,
// U+FEFF).
func unicodeBlank(s string) (rune, bool) {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0xA0, r >= 0x2000 && r <= 0x200B, r == 0x202F, r == 0x205F, r == 0x3000, r == 0xFEFF:
			return r, true
		}
		i += size
	}
	return 0, false
}
