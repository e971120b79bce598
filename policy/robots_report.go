package policy

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
	// Group is the deciding group's user-agent line(s), as in Decision.Group.
	Group string `json:"group,omitempty"`
	// Rule is the deciding rule as written.
	Rule string `json:"rule,omitempty"`
	// RuleLine is the deciding rule's line number.
	RuleLine int `json:"rule_line,omitempty"`
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
		Group:      d.Group,
		Rule:       d.Rule,
		RuleLine:   d.Line,
		Reason:     res.Reason,
	}
	if res.Robots != nil {
		rep.Sitemaps = res.Robots.Sitemaps()
		rep.Issues = res.Robots.Issues()
	}
	return rep
}
