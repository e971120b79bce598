package policy

// Robots is a parsed robots.txt under RFC 9309.
type Robots struct{}

// Decision is the answer to "may this agent fetch this path?" with what decided it.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Group is the user-agent line(s) of the group that applied, "" when none did.
	Group string `json:"group,omitempty"`
	// Rule is the deciding rule as written ("Disallow: /private"), "" when no rule matched.
	Rule string `json:"rule,omitempty"`
	// Line is the deciding rule's line number, 0 when none.
	Line int `json:"line,omitempty"`
}

// ParseRobots parses a robots.txt body. It never fails: unparsable lines
// become lint issues.
func ParseRobots(body []byte) *Robots { return &Robots{} }

// Decide says whether the product token may fetch pathQuery (path and query, escaped).
func (r *Robots) Decide(token, pathQuery string) Decision { return Decision{Allowed: true} }
