package policy

import "fmt"

// Severity grades a robots.txt lint issue.
type Severity string

// The severities, as in Search Console's robots.txt report.
const (
	// SeverityError: a line that does not do what it says (ignored, or never matches).
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
	// IssueMissingColon "missing_colon": "Disallow /x": read as a record all the same.
	IssueMissingColon IssueCode = "missing_colon"
	// IssueMisspelled "misspelled_directive": "Dissallow", "useragent": read as the directive meant.
	IssueMisspelled IssueCode = "misspelled_directive"
	// IssueUnknownDirective "unknown_directive": a name no crawler standard defines; ignored.
	IssueUnknownDirective IssueCode = "unknown_directive"
	// IssueNonstandardDirective "nonstandard_directive": Crawl-delay, Host, Noindex…: not RFC 9309; LektaBot ignores it.
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
	// IssueGroupBreak "group_break": a record between User-agent lines and their
	// rules (Sitemap, Crawl-delay, an unknown name) ends the group there, as in
	// Google's parser, leaving the User-agent lines above without rules.
	IssueGroupBreak IssueCode = "group_break"
	// IssueEmptyGroup "empty_group": group without rules; its crawlers may fetch everything.
	IssueEmptyGroup IssueCode = "empty_group"
	// IssueInvalidSitemap "invalid_sitemap": Sitemap value is not an absolute http(s) URL.
	IssueInvalidSitemap IssueCode = "invalid_sitemap"
	// IssueTooLarge "too_large": file over RobotsMaxBytes; the rest is ignored.
	IssueTooLarge IssueCode = "too_large"
	// IssueByteOrderMark "byte_order_mark": a (partial) UTF-8 BOM at the start; skipped.
	IssueByteOrderMark IssueCode = "byte_order_mark"
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
