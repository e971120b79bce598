package policy

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// RobotsMaxBytes is how much of a robots.txt LektaBot reads (RFC 9309 §2.5
// asks for at least 500 KiB). Content past it is ignored, and so is the line
// the limit cuts through.
const RobotsMaxBytes = 500 << 10

// Errors callers of the robots.txt code branch on.
var (
	// ErrInvalidToken: a product token that robots.txt groups cannot name
	// (it must match ^[A-Za-z_-]+$).
	ErrInvalidToken = errors.New("invalid product token")
	// ErrDisallowed: robots.txt disallows the URL for LektaBot.
	ErrDisallowed = errors.New("disallowed by robots.txt")
	// ErrRobotsUnreachable: robots.txt could not be read (429, 5xx, timeout,
	// network error, refused or too many redirects); the audit must be
	// skipped, not run and not failed.
	ErrRobotsUnreachable = errors.New("robots.txt unreachable")
)

// ValidateToken checks that token is a product token a robots.txt group can
// name: one or more ASCII letters, '_' or '-' (RFC 9309 §2.2.1). Errors wrap
// ErrInvalidToken.
func ValidateToken(token string) error {
	if token == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToken)
	}
	if n := tokenPrefixLen(token); n != len(token) {
		r, _ := utf8.DecodeRuneInString(token[n:])
		return fmt.Errorf("%w: %q has %q at byte %d; use only letters, '_' and '-'",
			ErrInvalidToken, token, r, n)
	}
	return nil
}

// ValidateAgentToken checks that token can name a crawler the way Google's
// robots.txt tools accept it: a non-empty HTTP token (letters, digits and
// !#$%&'*+-.^_`|~), not "*". It is wider than ValidateToken, so tokens such
// as archive.org_bot can be checked; callers warn when ValidateToken fails.
// Errors wrap ErrInvalidToken.
func ValidateAgentToken(token string) error {
	switch token {
	case "":
		return fmt.Errorf("%w: empty", ErrInvalidToken)
	case "*":
		return fmt.Errorf("%w: \"*\" names every crawler, not one", ErrInvalidToken)
	}
	for i := 0; i < len(token); i++ {
		if !isTokenChar(token[i]) {
			r, _ := utf8.DecodeRuneInString(token[i:])
			return fmt.Errorf("%w: %q has %q at byte %d; a product token has no spaces, '/' or other separators",
				ErrInvalidToken, token, r, i)
		}
	}
	return nil
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// tokenPrefixLen is the length of token's leading run of [A-Za-z_-].
func tokenPrefixLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return i
		}
	}
	return len(s)
}

// Robots is a parsed robots.txt, read twice: under RFC 9309 as written,
// and as Google's reference parser reads it. A decision takes the stricter
// answer of the two, so LektaBot is never less strict than either. It is
// immutable once parsed and safe for concurrent use.
//
// The parser and matcher are Lekta's own: temoto/robotstxt v1.1.2 disagrees
// with RFC 9309 in its tokeniser, grouping, agent matching, precedence and
// path normalisation (issue 3 lists the cases, robots_deviation_test.go pins
// them), and its tokeniser is not exported, so no part of it could be reused.
type Robots struct {
	groups    []robotsGroup
	rules     []robotsRule // every group's rules, each group's in one run
	sitemaps  []string
	issues    []RobotsIssue
	size      int
	truncated bool
	// google is the same file as Google's parser reads it; Decide answers
	// with the stricter of the two readings.
	google *googleReading
}

// robotsGroup is one group: a run of user-agent lines and the rules after them.
type robotsGroup struct {
	agents []robotsAgent
	// first and end delimit the group's rules in Robots.rules.
	first, end int
}

// groupRules returns g's rules.
func (r *Robots) groupRules(g *robotsGroup) []robotsRule { return r.rules[g.first:g.end] }

// robotsAgent is one user-agent line of a group.
type robotsAgent struct {
	line  int
	text  string // the line as written, comment and surrounding blanks removed
	token string // product token read from the value; "" matches nobody
	// word is the value up to its first blank; a token outside RFC 9309
	// (archive.org_bot) matches it as written.
	word   string
	global bool // the value is "*"
}

// Sitemaps returns the valid Sitemap URLs in file order, without duplicates.
func (r *Robots) Sitemaps() []string { return append([]string(nil), r.sitemaps...) }

// Issues returns the lint issues in line order.
func (r *Robots) Issues() []RobotsIssue { return append([]RobotsIssue(nil), r.issues...) }

// Size is the length in bytes of the body that was handed to ParseRobots.
func (r *Robots) Size() int { return r.size }

// Truncated reports whether the body was longer than RobotsMaxBytes.
func (r *Robots) Truncated() bool { return r.truncated }

// HasErrors reports whether any lint issue has severity error.
func (r *Robots) HasErrors() bool {
	for _, is := range r.issues {
		if is.Severity == SeverityError {
			return true
		}
	}
	return false
}

// DecisionBasis says what a Decision rests on.
type DecisionBasis string

// The bases of a Decision.
const (
	// BasisRule: a rule matched; Decision.Rule and Decision.Line name it.
	BasisRule DecisionBasis = "rule"
	// BasisNoMatchingRule: a group applied but none of its rules matched, so
	// the path is allowed.
	BasisNoMatchingRule DecisionBasis = "no_matching_rule"
	// BasisNoGroup: no group names the token and there is no "*" group, so no
	// rules apply.
	BasisNoGroup DecisionBasis = "no_group"
	// BasisRobotsTxt: the path is /robots.txt, which is always allowed (RFC
	// 9309 §2.2.2).
	BasisRobotsTxt DecisionBasis = "robots_txt"
	// BasisNotFound: robots.txt answered 4xx, so there are no restrictions.
	BasisNotFound DecisionBasis = "not_found"
	// BasisUnreachable: robots.txt could not be read; nothing may be fetched
	// and the audit is skipped.
	BasisUnreachable DecisionBasis = "unreachable"
)

// Reading names the reading of robots.txt a decision came from.
type Reading string

// The readings of a robots.txt.
const (
	// ReadingBoth: the RFC 9309 reading and Google's give the same answer.
	ReadingBoth Reading = "both"
	// ReadingRFC: only the RFC 9309 reading disallows; Google's parser
	// would allow (a decoded escape, a space in a pattern, a rule cut).
	ReadingRFC Reading = "rfc9309"
	// ReadingGoogle: only Google's reading disallows; an RFC 9309 reading
	// would allow (a misspelled or colon-less rule, blanks other than
	// space and tab, a line cut at its NUL or at Google's length limit, a
	// pattern that only matches undecoded).
	ReadingGoogle Reading = "google"
)

// Decision is the answer to "may this agent fetch this path?" with what decided it.
type Decision struct {
	Allowed bool          `json:"allowed"`
	Basis   DecisionBasis `json:"basis"`
	// Reading says which reading of the file decided: both, or only one of
	// them when the other would have allowed. "" when no file was read or
	// the path is /robots.txt.
	Reading Reading `json:"reading,omitempty"`
	// Partial: robots.txt was larger than RobotsMaxBytes and the answer
	// is allowed, so it covers only the part read: a Disallow in the rest
	// could not be seen.
	Partial bool `json:"partial,omitempty"`
	// Group is the user-agent line(s) of the group that applied, as written
	// and joined by ", " ("User-agent: barbot, User-agent: bazbot"); "" when
	// none did. When several groups name the token they are merged; Group is
	// the one holding the deciding rule, or the first of them if no rule matched.
	Group string `json:"group,omitempty"`
	// GroupLine is the line number of Group's first user-agent line, 0 when none.
	GroupLine int `json:"group_line,omitempty"`
	// Rule is the deciding rule as written ("Disallow: /private"), "" when no rule matched.
	Rule string `json:"rule,omitempty"`
	// Line is the deciding rule's line number, 0 when none.
	Line int `json:"line,omitempty"`
}

// Err returns nil when the decision allows the fetch, and otherwise an error
// wrapping ErrDisallowed that names the deciding rule.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	if d.Basis == BasisUnreachable {
		return ErrRobotsUnreachable
	}
	return fmt.Errorf("%w (line %d: %s)", ErrDisallowed, d.Line, d.Rule)
}

// ParseRobots parses a robots.txt body. It never fails: unparsable lines
// become lint issues and every rule that can be parsed is used. Only the
// first RobotsMaxBytes are read, minus the line the limit cuts through.
func ParseRobots(body []byte) *Robots {
	p := robotsParser{r: &Robots{size: len(body), google: parseGoogle(body)}, cur: -1}
	p.parse(p.clip(body))
	return p.r
}

// Decide says whether the product token may fetch pathQuery, the URL's path
// and query ("/a/b?c=d"; "" means "/"), taken as Chromium sends them
// (SpellTarget: "/café/a|b" is decided as "/caf%C3%A9/a%7Cb"). It is
// disallowed when either reading disallows it (Decision.Reading says
// which); /robots.txt itself is always allowed.
//
// Under RFC 9309, groups are chosen by case-insensitive equality with token
// (callers validate it once with ValidateToken), all groups naming it are
// merged, and the "*" groups apply when none does; the longest matching
// pattern decides and Allow wins ties. Google's reading is taken only for
// tokens of the RFC 9309 form, the only ones its parser can name; it is
// asked about the target and about its raw spelling (see rawSpelling).
func (r *Robots) Decide(token, pathQuery string) Decision {
	return r.decide(token, SpellTarget(pathQuery))
}

// DecideURL is Decide for an absolute URL; only its request target
// (RequestTarget) counts.
func (r *Robots) DecideURL(token string, u *url.URL) Decision {
	return r.decide(token, RequestTarget(u))
}

// decide is Decide on a target already spelled as Chromium sends it.
func (r *Robots) decide(token, target string) Decision {
	path := normalisePathQuery(target)
	if isRobotsTxtPath(path) {
		return Decision{Allowed: true, Basis: BasisRobotsTxt}
	}
	d := r.decideRFC(token, path)
	d.Reading = ReadingBoth
	if r.google != nil && ValidateToken(token) == nil {
		out, rule, gi := r.google.decide(token, target)
		if raw := rawSpelling(target); !out && raw != target {
			out, rule, gi = r.google.decide(token, raw)
		}
		switch {
		case out && d.Allowed:
			d = Decision{Basis: BasisRule, Rule: rule.text, Line: int(rule.line), Reading: ReadingGoogle}
			r.google.describe(gi, &d)
		case !out && !d.Allowed:
			d.Reading = ReadingRFC
		}
	}
	d.Partial = d.Allowed && r.truncated
	return d
}

// decideRFC is the RFC 9309 reading's answer on a normalised path.
func (r *Robots) decideRFC(token, path string) Decision {
	groups := r.groupsFor(token)
	if len(groups) == 0 {
		return Decision{Allowed: true, Basis: BasisNoGroup}
	}
	var allow, disallow ruleMatch
	for _, gi := range groups {
		rules := r.groupRules(&r.groups[gi])
		for ri := range rules {
			rule := &rules[ri]
			if !rule.matches(path) {
				continue
			}
			best := &disallow
			if rule.allow {
				best = &allow
			}
			if best.rule == nil || len(rule.pattern) > len(best.rule.pattern) {
				*best = ruleMatch{group: gi, rule: rule}
			}
		}
	}
	won := allow
	if disallow.rule != nil && (allow.rule == nil || len(disallow.rule.pattern) > len(allow.rule.pattern)) {
		won = disallow
	}
	if won.rule == nil {
		d := Decision{Allowed: true, Basis: BasisNoMatchingRule}
		r.groups[groups[0]].describe(&d)
		return d
	}
	d := Decision{Allowed: won.rule.allow, Basis: BasisRule, Rule: won.rule.text, Line: int(won.rule.line)}
	r.groups[won.group].describe(&d)
	return d
}

// ruleMatch is the best rule of one kind found so far.
type ruleMatch struct {
	group int
	rule  *robotsRule
}

// groupsFor returns the indexes of the groups naming token, or of the "*"
// groups when none does.
func (r *Robots) groupsFor(token string) []int {
	var specific, global []int
	for gi, g := range r.groups {
		named, star := false, false
		for _, a := range g.agents {
			named = named || (a.token != "" && strings.EqualFold(a.token, token)) ||
				(a.word != a.token && strings.EqualFold(a.word, token))
			star = star || a.global
		}
		switch {
		case named:
			specific = append(specific, gi)
		case star:
			global = append(global, gi)
		}
	}
	if len(specific) > 0 {
		return specific
	}
	return global
}

// describe fills d's group fields from g.
func (g *robotsGroup) describe(d *Decision) {
	texts := make([]string, len(g.agents))
	for i, a := range g.agents {
		texts[i] = a.text
	}
	d.Group = strings.Join(texts, ", ")
	d.GroupLine = g.agents[0].line
}

// isRobotsTxtPath reports whether a normalised path-and-query names /robots.txt.
func isRobotsTxtPath(p string) bool {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p == "/robots.txt"
}
