package policy

import "strings"

// googleMaxLine is how many bytes of one line Google's reference parser
// keeps: its line buffer holds 8 × 2083 bytes, one of them for the
// terminating NUL. The rest of a longer line is dropped, so a long rule is
// read as a shorter one.
const googleMaxLine = 8*2083 - 1

// googleReading is robots.txt as Google's reference parser and matcher
// (google/robotstxt, robots.cc) read it, for the cases where that reading
// disallows what the RFC 9309 reading allows. Where the two differ:
//
//   - only an Allow or Disallow line (in any spelling Google accepts) ends a
//     run of User-agent lines;
//   - names are read by prefix and by Google's known misspellings, and a
//     missing colon is accepted between exactly two words;
//   - blanks around names and values are ASCII white space (space, tab,
//     vertical tab, form feed), not only space and tab;
//   - a line is cut at googleMaxLine bytes and ends at its first NUL;
//   - the first RobotsMaxBytes bytes are read, the line the limit cuts
//     through included (up to the cut);
//   - patterns are compared byte for byte after upper-casing the hex of
//     escapes and escaping bytes above 0x7F: no decoding, and the path is
//     taken as sent;
//   - an Allow ending in "/index.htm…" also allows its directory.
//
// It is Lekta's own code, written from reading robots.cc; nothing of
// Google's library is linked or vendored.
type googleReading struct {
	groups []googleGroup
	rules  []googleRule
}

// googleGroup is a run of User-agent lines and the rules up to the next
// User-agent line after a rule.
type googleGroup struct {
	agents     []googleAgent
	first, end int // the group's rules in googleReading.rules
}

// googleAgent is one User-agent line as Google reads it.
type googleAgent struct {
	line   int
	text   string
	token  string // the value's leading run of [A-Za-z_-]
	global bool   // "*", alone or followed by white space
}

// googleRule is an Allow or Disallow line; index is the directory pattern
// an Allow ending in "/index.htm…" stands for as well, nil otherwise.
type googleRule struct {
	robotsRule
	index *robotsRule
}

// parseGoogle reads body as Google's parser does.
func parseGoogle(body []byte) *googleReading {
	if len(body) > RobotsMaxBytes {
		body = body[:RobotsMaxBytes]
	}
	g := &googleReading{}
	afterRule := false
	forEachLine(string(body[bomPrefixLen(body):]), func(n int, line string) {
		text, key, value, ok := googleRecord(line)
		if !ok {
			return
		}
		switch googleKind(key) {
		case dirUserAgent:
			if len(g.groups) == 0 || afterRule {
				g.groups = append(g.groups, googleGroup{first: len(g.rules), end: len(g.rules)})
				afterRule = false
			}
			grp := &g.groups[len(g.groups)-1]
			grp.agents = append(grp.agents, newGoogleAgent(n, text, value))
		case dirAllow, dirDisallow:
			if len(g.groups) == 0 {
				return // before any User-agent line: ignored
			}
			afterRule = true
			g.rules = append(g.rules, newGoogleRule(googleKind(key) == dirAllow, n, text, value))
			g.groups[len(g.groups)-1].end = len(g.rules)
		}
	})
	return g
}

// googleRecord splits a line into its trimmed text, name and value as
// Google's parser does; ok is false for a line it reads no record from.
func googleRecord(line string) (text, key, value string, ok bool) {
	if len(line) > googleMaxLine {
		line = line[:googleMaxLine]
	}
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	text = trimASCIISpace(line)
	if text == "" {
		return "", "", "", false
	}
	if i := strings.IndexByte(text, ':'); i >= 0 {
		key, value = trimASCIISpace(text[:i]), trimASCIISpace(text[i+1:])
	} else {
		// Without a colon, exactly two words separated by spaces or tabs.
		i := strings.IndexAny(text, " \t")
		if i < 0 {
			return "", "", "", false
		}
		rest := strings.TrimLeft(text[i:], " \t")
		if strings.ContainsAny(rest, " \t") {
			return "", "", "", false
		}
		key, value = trimASCIISpace(text[:i]), trimASCIISpace(rest)
	}
	return text, key, value, key != ""
}

// googleKind classifies a record name by the prefixes Google accepts,
// ignoring ASCII case; 0 for a name it does not act on.
func googleKind(key string) directiveKind {
	for _, p := range googlePrefixes {
		if len(key) >= len(p.prefix) && strings.EqualFold(key[:len(p.prefix)], p.prefix) {
			return p.d.kind
		}
	}
	return 0
}

func newGoogleAgent(n int, text, value string) googleAgent {
	a := googleAgent{line: n, text: text}
	if value != "" && value[0] == '*' && (len(value) == 1 || isASCIISpace(value[1])) {
		a.global = true
		return a
	}
	a.token = value[:tokenPrefixLen(value)]
	return a
}

func newGoogleRule(allow bool, n int, text, value string) googleRule {
	pattern := googleEscape(value)
	r := googleRule{robotsRule: compileRule(allow, n, text, pattern)}
	if allow {
		if i := strings.LastIndexByte(pattern, '/'); i >= 0 && strings.HasPrefix(pattern[i:], "/index.htm") {
			dir := compileRule(true, n, text, pattern[:i+1]+"$")
			r.index = &dir
		}
	}
	return r
}

// compileRule makes a rule of an already normalised pattern.
func compileRule(allow bool, n int, text, pattern string) robotsRule {
	r := robotsRule{allow: allow, line: int32(n), text: text, pattern: pattern}
	if pattern == "" || (pattern[0] != '/' && pattern[0] != '*') {
		r.never = true // the path always starts with '/'
		return r
	}
	r.anchored = strings.HasSuffix(pattern, "$")
	return r
}

// googleEscape is Google's pattern canonicalisation: the hex digits of an
// escape are upper-cased and every byte above 0x7F is percent-encoded;
// nothing is decoded and no other byte is escaped.
func googleEscape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]):
			writePct(&b, unhex(v[i+1])<<4|unhex(v[i+2]))
			i += 2
		case c >= 0x80:
			writePct(&b, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// googleMatch is the best match of one kind found so far.
type googleMatch struct {
	priority int // -1: none
	rule     *googleRule
	group    int
}

// decide says whether Google's matcher disallows path for token, and
// which rule and group decided when it does. path is taken as given (a
// leading '/' added when missing), as Google's matcher takes the URL.
func (g *googleReading) decide(token, path string) (disallowed bool, rule *googleRule, group int) {
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	none := googleMatch{priority: -1}
	specAllow, specDisallow, globAllow, globDisallow := none, none, none, none
	everSpecific := false
	for gi := range g.groups {
		grp := &g.groups[gi]
		specific, global := false, false
		for _, a := range grp.agents {
			global = global || a.global
			specific = specific || (a.token != "" && strings.EqualFold(a.token, token))
		}
		everSpecific = everSpecific || specific
		if !specific && !global {
			continue
		}
		for ri := grp.first; ri < grp.end; ri++ {
			r := &g.rules[ri]
			p := r.priority(path)
			best := &globDisallow
			switch {
			case specific && r.allow:
				best = &specAllow
			case specific:
				best = &specDisallow
			case r.allow:
				best = &globAllow
			}
			if p > best.priority {
				*best = googleMatch{priority: p, rule: r, group: gi}
			}
		}
	}
	allow, disallow := globAllow, globDisallow
	switch {
	case specAllow.priority > 0 || specDisallow.priority > 0:
		allow, disallow = specAllow, specDisallow
	case everSpecific:
		return false, nil, 0
	}
	if disallow.priority > 0 && disallow.priority > allow.priority {
		return true, disallow.rule, disallow.group
	}
	return false, nil, 0
}

// priority is the rule's match priority on path: the length of its pattern
// when it matches, -1 when it does not.
func (r *googleRule) priority(path string) int {
	if r.matches(path) {
		return len(r.pattern)
	}
	if r.index != nil && r.index.matches(path) {
		return len(r.index.pattern)
	}
	return -1
}

// describe fills d's group fields from the group at gi.
func (g *googleReading) describe(gi int, d *Decision) {
	agents := g.groups[gi].agents
	texts := make([]string, len(agents))
	for i, a := range agents {
		texts[i] = a.text
	}
	d.Group = strings.Join(texts, ", ")
	d.GroupLine = agents[0].line
}

// isASCIISpace reports whether c is white space to C's isspace and
// absl::ascii_isspace: space, tab, LF, VT, FF or CR.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// trimASCIISpace removes leading and trailing ASCII white space.
func trimASCIISpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && isASCIISpace(byte(r)) })
}
