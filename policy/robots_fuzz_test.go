package policy

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// FuzzRobots feeds random robots.txt bodies, tokens and paths and checks the
// invariants of issue 3 on the RFC 9309 reading: no panic; /robots.txt is
// always allowed; adding an Allow identical to a rule of the chosen group
// never turns allowed into disallowed (and one identical to the deciding
// Disallow allows); group order never matters; and of issue 22: the answer
// is the stricter of the RFC 9309 and Google readings. It also checks the
// wildcard matcher against regexp.
func FuzzRobots(f *testing.F) {
	for _, tc := range rfcCases {
		f.Add([]byte(tc.body), tc.tokenOrDefault(), tc.path)
	}
	for _, tc := range deviationCases {
		f.Add([]byte(tc.body), tc.tokenOrDefault(), tc.path)
	}
	f.Fuzz(func(t *testing.T, body []byte, token, path string) {
		if len(body) > 64<<10 {
			return // the size limit has its own test; keep lines rebuildable
		}
		if ValidateToken(token) != nil {
			token = "LektaBot"
		}
		r := ParseRobots(body)
		if !r.Decide(token, "/robots.txt").Allowed {
			t.Fatal("/robots.txt disallowed")
		}
		p := normalisePathQuery(path)
		if isRobotsTxtPath(p) {
			return
		}
		combined := r.Decide(token, path)
		if (combined.Basis == BasisRule) != (combined.Rule != "" && combined.Line > 0) {
			t.Fatalf("decision %+v: basis and rule disagree", combined)
		}
		// The answer is the stricter of the two readings.
		d := r.decideRFC(token, p)
		google, _, _ := r.google.decide(token, path)
		if combined.Allowed != (d.Allowed && !google) {
			t.Fatalf("decision %+v; RFC reading %+v, Google disallows: %v", combined, d, google)
		}
		if d != r.decideRFC(token, normalisePathQuery(p)) {
			t.Fatalf("the RFC reading of %q and of its normal form differ", path)
		}
		checkMatcher(t, r, token, path)
		lines := splitRobotsLines(body)
		checkAddedAllow(t, r, lines, token, path, d)
		checkGroupOrder(t, r, lines, token, path, d)
	})
}

// splitRobotsLines returns the lines the parser sees (byte-order mark skipped).
func splitRobotsLines(body []byte) []string {
	p := robotsParser{r: &Robots{}, cur: -1}
	var lines []string
	forEachLine(p.skipBOM(string(body)), func(_ int, line string) { lines = append(lines, line) })
	return lines
}

// joinRobotsLines rebuilds a body from lines. It starts with a byte-order
// mark so that the first line, whatever its first bytes, parses as before.
func joinRobotsLines(lines []string) []byte {
	return []byte("\xEF\xBB\xBF" + strings.Join(lines, "\n"))
}

// chosenRules returns the rules of the groups that apply to token.
func chosenRules(r *Robots, token string) []*robotsRule {
	var rules []*robotsRule
	for _, gi := range r.groupsFor(token) {
		for ri := range r.groupRules(&r.groups[gi]) {
			rules = append(rules, &r.rules[r.groups[gi].first+ri])
		}
	}
	return rules
}

// checkMatcher compares each applicable rule's matcher with a regexp built
// straight from RFC 9309 §2.2.3.
func checkMatcher(t *testing.T, r *Robots, token, path string) {
	t.Helper()
	p := normalisePathQuery(path)
	for _, rule := range chosenRules(r, token) {
		want := false
		if !rule.never {
			expr := "^" + regexp.QuoteMeta(rule.pattern)
			expr = strings.ReplaceAll(expr, `\*`, `.*`)
			if strings.HasSuffix(expr, `\$`) {
				expr = strings.TrimSuffix(expr, `\$`) + `$`
			}
			want = regexp.MustCompile("(?s)" + expr).MatchString(p)
		}
		if got := rule.matches(p); got != want {
			t.Fatalf("pattern %q on %q: matches = %v, regexp says %v", rule.pattern, p, got, want)
		}
	}
}

// checkAddedAllow inserts "Allow: <value>" after each rule of the chosen
// groups: an allowed path stays allowed, and after the deciding rule's own
// line the path becomes allowed (Allow wins ties).
func checkAddedAllow(t *testing.T, r *Robots, lines []string, token, path string, d Decision) {
	t.Helper()
	rules := chosenRules(r, token)
	if len(rules) == 0 {
		return
	}
	var out []string
	for i, line := range lines {
		out = append(out, line)
		for _, rule := range rules {
			if int(rule.line) == i+1 {
				_, value, _ := splitRecord(rule.text)
				out = append(out, "Allow: "+value)
			}
		}
	}
	got := ParseRobots(joinRobotsLines(out)).decideRFC(token, normalisePathQuery(path))
	if d.Basis == BasisRule && !got.Allowed {
		t.Fatalf("identical Allow lines added, %q still disallowed: %+v (before %+v)", path, got, d)
	}
	if d.Allowed && !got.Allowed {
		t.Fatalf("identical Allow lines turned %q from allowed to disallowed: %+v", path, got)
	}
}

// checkGroupOrder reverses the groups (the lines before the first group stay
// first) and expects the same answer. A group without rules gets an empty
// "Disallow:" first, which changes nothing but keeps it from merging with
// the group that comes to follow it.
func checkGroupOrder(t *testing.T, r *Robots, lines []string, token, path string, d Decision) {
	t.Helper()
	if len(r.groups) < 2 {
		return
	}
	var blocks [][]string
	for gi, g := range r.groups {
		end := len(lines)
		if gi+1 < len(r.groups) {
			end = r.groups[gi+1].agents[0].line - 1
		}
		block := slices.Clone(lines[g.agents[0].line-1 : end])
		if g.first == g.end {
			block = append(block, "Disallow:")
		}
		blocks = append(blocks, block)
	}
	preamble := lines[:r.groups[0].agents[0].line-1]
	sealed := slices.Concat(append([][]string{preamble}, blocks...)...)
	if got := ParseRobots(joinRobotsLines(sealed)).decideRFC(token, normalisePathQuery(path)); got.Allowed != d.Allowed {
		t.Fatalf("an empty Disallow in rule-less groups changed %q: %+v, before %+v", path, got, d)
	}
	slices.Reverse(blocks)
	reordered := slices.Concat(append([][]string{preamble}, blocks...)...)
	if got := ParseRobots(joinRobotsLines(reordered)).decideRFC(token, normalisePathQuery(path)); got.Allowed != d.Allowed {
		t.Fatalf("reversing the groups changed %q: %+v, before %+v\n%s", path, got, d, strings.Join(reordered, "\n"))
	}
}
