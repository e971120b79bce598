package policy

import (
	"bytes"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// directiveKind is what a record's name means.
type directiveKind int

const (
	dirUserAgent directiveKind = iota + 1
	dirAllow
	dirDisallow
	dirSitemap
	dirCrawlDelay
	dirNonstandard
)

// directive describes a record name LektaBot knows.
type directive struct {
	kind directiveKind
	name string // the canonical spelling
	typo bool   // a misspelling read as the directive meant
}

// directives maps lower-case record names to what they mean. The misspellings
// are the ones the reference implementation accepts; reading them as meant
// errs on the side of the operator's intent.
var directives = map[string]directive{
	"user-agent":     {dirUserAgent, "User-agent", false},
	"useragent":      {dirUserAgent, "User-agent", true},
	"user agent":     {dirUserAgent, "User-agent", true},
	"allow":          {dirAllow, "Allow", false},
	"disallow":       {dirDisallow, "Disallow", false},
	"dissallow":      {dirDisallow, "Disallow", true},
	"dissalow":       {dirDisallow, "Disallow", true},
	"disalow":        {dirDisallow, "Disallow", true},
	"diasllow":       {dirDisallow, "Disallow", true},
	"disallaw":       {dirDisallow, "Disallow", true},
	"sitemap":        {dirSitemap, "Sitemap", false},
	"site-map":       {dirSitemap, "Sitemap", true},
	"crawl-delay":    {dirCrawlDelay, "Crawl-delay", false},
	"crawldelay":     {dirCrawlDelay, "Crawl-delay", true},
	"host":           {dirNonstandard, "Host", false},
	"clean-param":    {dirNonstandard, "Clean-param", false},
	"noindex":        {dirNonstandard, "Noindex", false},
	"nofollow":       {dirNonstandard, "Nofollow", false},
	"request-rate":   {dirNonstandard, "Request-rate", false},
	"visit-time":     {dirNonstandard, "Visit-time", false},
	"content-signal": {dirNonstandard, "Content-Signal", false},
}

// googlePrefixes are the name prefixes Google's reference parser reads as
// a directive, in the order it tries them: any record name starting with
// one of them ("Disallowed", "User-Agents", "Allow-this") is that directive.
// LektaBot honours them so it is never less restrictive than Googlebot; the
// lint flags every spelling but the canonical one.
var googlePrefixes = []struct {
	prefix string
	d      directive
}{
	{"user-agent", directive{dirUserAgent, "User-agent", true}},
	{"useragent", directive{dirUserAgent, "User-agent", true}},
	{"user agent", directive{dirUserAgent, "User-agent", true}},
	{"allow", directive{dirAllow, "Allow", true}},
	{"disallow", directive{dirDisallow, "Disallow", true}},
	{"dissallow", directive{dirDisallow, "Disallow", true}},
	{"dissalow", directive{dirDisallow, "Disallow", true}},
	{"disalow", directive{dirDisallow, "Disallow", true}},
	{"diasllow", directive{dirDisallow, "Disallow", true}},
	{"disallaw", directive{dirDisallow, "Disallow", true}},
	{"sitemap", directive{dirSitemap, "Sitemap", true}},
	{"site-map", directive{dirSitemap, "Sitemap", true}},
}

// lookupDirective finds key in directives, ignoring ASCII case, and else
// reads it by the prefixes Google's parser accepts.
func lookupDirective(key string) (directive, bool) {
	var buf [32]byte
	lower := buf[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	if d, ok := directives[string(lower)]; ok {
		return d, true
	}
	for _, g := range googlePrefixes {
		if len(lower) >= len(g.prefix) && string(lower[:len(g.prefix)]) == g.prefix {
			return g.d, true
		}
	}
	return directive{}, false
}

// robotsParser builds a Robots line by line.
type robotsParser struct {
	r *Robots
	// cur is the index of the group rules go to, -1 before the first User-agent.
	cur int
	// inAgents: the last Allow, Disallow or User-agent line (as RFC 9309
	// names them) was a User-agent line, so another one joins the same
	// group. Only a rule ends the run (RFC 9309 §2.2.4: other records
	// "MUST NOT terminate a group"); Google's parser agrees.
	inAgents bool
	// For the lint, in every spelling Google reads: anyAgent says a
	// User-agent line was seen, agentRun that the last of those lines and
	// the rules was a User-agent line, and between is the first other
	// line inside that run, 0 if none.
	anyAgent, agentRun bool
	between            int
}

// parse reads a clipped body: byte-order mark, then every line. Rules and
// user-agent lines keep substrings of one copy of the body.
func (p *robotsParser) parse(body []byte) {
	n := forEachLine(p.skipBOM(string(body)), p.line)
	if p.r.truncated {
		p.issue(n+1, SeverityError, IssueTooLarge,
			"robots.txt is larger than %d bytes (500 KiB); LektaBot reads no further, as Google does, so everything from this line on is ignored and a rule there cannot keep LektaBot out: an allowed answer covers only the part read",
			RobotsMaxBytes)
	}
	p.finish()
}

// forEachLine calls fn with each line of body and its 1-based number, lines
// ending at LF, CR or CRLF, and returns the number of lines.
func forEachLine(body string, fn func(n int, line string)) int {
	n := 0
	for len(body) > 0 {
		n++
		i := strings.IndexByte(body, '\n')
		if i < 0 {
			i = len(body)
		}
		if j := strings.IndexByte(body[:i], '\r'); j >= 0 {
			i = j
		}
		if i == len(body) {
			fn(n, body)
			break
		}
		fn(n, body[:i])
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
	return n
}

// clip cuts body to RobotsMaxBytes and drops the line the limit cuts through.
func (p *robotsParser) clip(body []byte) []byte {
	if len(body) <= RobotsMaxBytes {
		return body
	}
	p.r.truncated = true
	if c := body[RobotsMaxBytes]; c == '\n' || c == '\r' {
		return body[:RobotsMaxBytes]
	}
	body = body[:RobotsMaxBytes]
	return body[:bytes.LastIndexAny(body, "\r\n")+1]
}

// skipBOM drops a UTF-8 byte-order mark, or the start of one, from body.
func (p *robotsParser) skipBOM(body string) string {
	n := bomPrefixLen([]byte(body[:min(len(body), 3)]))
	switch {
	case n == 3:
		p.issue(1, SeverityInfo, IssueByteOrderMark, "UTF-8 byte-order mark at the start is skipped")
	case n > 0:
		p.issue(1, SeverityWarning, IssueByteOrderMark,
			"an incomplete UTF-8 byte-order mark at the start is skipped; save the file as plain UTF-8")
	}
	return body[n:]
}

// bomPrefixLen is the length of the UTF-8 byte-order mark, or of the start
// of one, that body begins with.
func bomPrefixLen(body []byte) int {
	const bom = "\xEF\xBB\xBF"
	n := 0
	for n < len(bom) && n < len(body) && body[n] == bom[n] {
		n++
	}
	return n
}

// line reads one line: comment stripped, "name: value" split, directive
// applied. RFC 9309's reading takes only the names it defines, written
// with a colon; the other spellings Google's parser reads are linted here
// and obeyed through Google's reading.
func (p *robotsParser) line(n int, s string) {
	p.checkBytes(n, s)
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	s = trimBlanks(s)
	if s == "" {
		return
	}
	key, value, colon := splitRecord(s)
	d, known := lookupDirective(key)
	p.lintRun(n, d.kind, known)
	switch {
	case key == "" || (!colon && !known):
		p.issue(n, SeverityError, IssueSyntax, "%q is not a \"name: value\" record; ignored", s)
		return
	case !known:
		p.issue(n, SeverityError, IssueUnknownDirective, "unknown directive %q is ignored", key)
		return
	case d.typo && !strings.EqualFold(key, d.name):
		p.issue(n, SeverityError, IssueMisspelled,
			"%q is not a name RFC 9309 defines, but Google's parser reads it as %s, so LektaBot obeys it too; spell it %q",
			key, d.name, d.name)
	}
	if !colon {
		p.issue(n, SeverityError, IssueMissingColon,
			"no ':' after %q: RFC 9309 ignores the line, Google's parser reads it as \"%s: %s\", so LektaBot obeys it too; add the colon",
			key, d.name, value)
	}
	rfc := colon && !d.typo
	switch d.kind {
	case dirUserAgent:
		if rfc {
			p.userAgent(n, s, value)
		}
	case dirAllow, dirDisallow:
		p.rule(n, d, s, value, rfc)
	case dirSitemap:
		p.sitemap(n, value)
	case dirCrawlDelay:
		p.crawlDelay(n, value)
	case dirNonstandard:
		p.issue(n, SeverityInfo, IssueNonstandardDirective,
			"%s is not part of RFC 9309; LektaBot ignores it", d.name)
	}
}

// lintRun tracks runs of User-agent lines in every spelling, and says
// group_continues when a line other than a rule stands between two of them.
func (p *robotsParser) lintRun(n int, kind directiveKind, known bool) {
	switch {
	case known && kind == dirUserAgent:
		if p.agentRun && p.between > 0 {
			p.issue(p.between, SeverityWarning, IssueGroupContinues,
				"this line stands between User-agent lines and does not end their run, so the User-agent lines above and below it form one group and share its rules (only an Allow or Disallow line ends a run, in RFC 9309 §2.2.4 and in Google's parser); if they should be separate groups, give the ones above their own rules")
		}
		p.anyAgent, p.agentRun, p.between = true, true, 0
	case known && (kind == dirAllow || kind == dirDisallow):
		p.agentRun, p.between = false, 0
	case p.agentRun && p.between == 0:
		p.between = n
	}
}

// splitRecord splits "name: value". Without a colon it accepts exactly two
// blank-separated words, as the reference implementation does.
func splitRecord(s string) (key, value string, colon bool) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return trimBlanks(s[:i]), trimBlanks(s[i+1:]), true
	}
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return "", "", false
	}
	value = trimBlanks(s[i:])
	if strings.ContainsAny(value, " \t") {
		return "", "", false
	}
	return s[:i], value, false
}

// userAgent adds a User-agent line, starting a new group unless it follows
// another User-agent line.
func (p *robotsParser) userAgent(n int, text, value string) {
	if !p.inAgents {
		p.r.groups = append(p.r.groups, robotsGroup{first: len(p.r.rules), end: len(p.r.rules)})
		p.cur = len(p.r.groups) - 1
	}
	p.inAgents = true
	a := robotsAgent{line: n, text: text, word: firstWord(value)}
	switch {
	case value == "":
		p.issue(n, SeverityError, IssueEmptyUserAgent, "User-agent has no value; this line names no crawler")
	case value == "*":
		a.global = true
	case value[0] == '*' && (value[1] == ' ' || value[1] == '\t'):
		a.global = true
		p.issue(n, SeverityWarning, IssueUserAgentNotToken, "User-agent %q is read as \"*\"", value)
	default:
		k := tokenPrefixLen(value)
		a.token = value[:k]
		if k == 0 {
			p.issue(n, SeverityWarning, IssueUserAgentNotToken,
				"User-agent %q does not start with a product token (letters, '_', '-'); it names no crawler", value)
		} else if k < len(value) {
			p.issue(n, SeverityWarning, IssueUserAgentNotToken,
				"User-agent %q is read as the product token %q; write only the token", value, a.token)
		}
	}
	g := &p.r.groups[p.cur]
	g.agents = append(g.agents, a)
}

// rule lints an Allow or Disallow line, in any spelling, and adds it to
// the current group when RFC 9309 reads it (rfc).
func (p *robotsParser) rule(n int, d directive, text, value string, rfc bool) {
	if !p.anyAgent {
		p.issue(n, SeverityError, IssueRuleOutsideGroup,
			"%s before the first User-agent line belongs to no group; ignored", d.name)
		return
	}
	rule := newRobotsRule(d.kind == dirAllow, n, text, value)
	switch {
	case value == "" && rule.allow:
		p.issue(n, SeverityWarning, IssueEmptyRule, "empty Allow matches nothing; it has no effect")
	case value == "":
		p.issue(n, SeverityInfo, IssueEmptyRule, "empty Disallow matches nothing; it disallows nothing")
	case rule.never && !startsPattern(trimASCIISpace(value)):
		// (one that starts after a vertical tab or form feed is Google's
		// pattern, and unusual_blank says so)
		p.issue(n, SeverityError, IssueBadPattern,
			"%s pattern %q starts with neither '/' nor '*'; it never matches", d.name, value)
	}
	if i := strings.IndexByte(value, '$'); i >= 0 && i < len(value)-1 {
		p.issue(n, SeverityError, IssueDollarNotAtEnd,
			"'$' anchors the end only as the last character; here it matches a literal '$'")
	}
	if !rfc || p.cur < 0 {
		return
	}
	p.inAgents = false
	p.r.rules = append(p.r.rules, rule)
	p.r.groups[p.cur].end = len(p.r.rules)
}

// startsPattern reports whether v starts as a pattern that can match: with
// '/' or '*'.
func startsPattern(v string) bool { return v != "" && (v[0] == '/' || v[0] == '*') }

// sitemap records a Sitemap URL, which must be absolute http(s).
func (p *robotsParser) sitemap(n int, value string) {
	u, err := url.Parse(value)
	if err != nil || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) || u.Host == "" {
		p.issue(n, SeverityError, IssueInvalidSitemap, "Sitemap %q is not an absolute http(s) URL; ignored", value)
		return
	}
	if !slices.Contains(p.r.sitemaps, value) {
		p.r.sitemaps = append(p.r.sitemaps, value)
	}
}

// crawlDelay checks a Crawl-delay value; LektaBot does not use it.
func (p *robotsParser) crawlDelay(n int, value string) {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		p.issue(n, SeverityWarning, IssueBadCrawlDelay,
			"Crawl-delay %q is not a number of seconds; ignored", value)
		return
	}
	p.issue(n, SeverityInfo, IssueNonstandardDirective,
		"Crawl-delay is not part of RFC 9309; LektaBot ignores it and keeps its own per-host rate limit")
}

// finish notes groups without rules in any spelling (as Google's reading
// groups them) and puts the issues in line order.
func (p *robotsParser) finish() {
	for _, g := range p.r.google.groups {
		if g.first == g.end {
			p.issue(g.agents[0].line, SeverityInfo, IssueEmptyGroup,
				"group has no Allow or Disallow rules; the crawlers it names may fetch everything")
		}
	}
	slices.SortStableFunc(p.r.issues, func(a, b RobotsIssue) int { return a.Line - b.Line })
}

// firstWord returns s up to its first space or tab.
func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// trimBlanks removes leading and trailing spaces and tabs (RFC 9309 WS).
func trimBlanks(s string) string {
	return strings.Trim(s, " \t")
}
