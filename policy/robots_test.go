package policy

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rfcExample is the example of RFC 9309 §5.1.
const rfcExample = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot
`

// rfcCases are general RFC 9309 cases, each worked out by hand.
var rfcCases = []decideCase{
	// §5.1, the RFC's own example.
	{name: "rfc_example_foobot_allowed_page", body: rfcExample, token: "foobot",
		path: "/example/page.html", allowed: true, rule: "Allow:/example/page.html", line: 8},
	{name: "rfc_example_foobot_allowed_gif", body: rfcExample, token: "foobot",
		path: "/example/allowed.gif", allowed: true, rule: "Allow:/example/allowed.gif", line: 9},
	{name: "rfc_example_foobot_rest_disallowed", body: rfcExample, token: "foobot",
		path: "/publications/x", allowed: false, rule: "Disallow:/", line: 7},
	{name: "rfc_example_foobot_case_insensitive", body: rfcExample, token: "FooBot",
		path: "/other", allowed: false, rule: "Disallow:/", line: 7},
	{name: "rfc_example_barbot", body: rfcExample, token: "barbot",
		path: "/example/page.html", allowed: false, rule: "Disallow: /example/page.html", line: 13},
	{name: "rfc_example_bazbot", body: rfcExample, token: "bazbot",
		path: "/example/page.html", allowed: false, rule: "Disallow: /example/page.html", line: 13},
	{name: "rfc_example_bazbot_other_path", body: rfcExample, token: "bazbot",
		path: "/example/other.gif", allowed: true},
	{name: "rfc_example_quxbot_empty_group", body: rfcExample, token: "quxbot",
		path: "/example/", allowed: true},
	{name: "rfc_example_star_gif", body: rfcExample,
		path: "/a/b.gif", allowed: false, rule: "Disallow: *.gif$", line: 2},
	{name: "rfc_example_star_gif_with_query", body: rfcExample,
		path: "/a/b.gif?x=1", allowed: true},
	{name: "rfc_example_star_example", body: rfcExample,
		path: "/example/x", allowed: false, rule: "Disallow: /example/", line: 3},
	{name: "rfc_example_star_publications_gif", body: rfcExample,
		path: "/publications/a.gif", allowed: true, rule: "Allow: /publications/", line: 4},

	// §5.2 longest match.
	{name: "longest_match_disallow", body: "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
		token: "foobot", path: "/example/page/disallowed.gif", allowed: false, rule: "Disallow: /example/page/disallowed.gif", line: 3},
	{name: "longest_match_allow", body: "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
		token: "foobot", path: "/example/page/", allowed: true, rule: "Allow: /example/page/", line: 2},
	{name: "longest_match_wildcard_allow", body: "User-agent: *\nDisallow: /*.php$\nAllow: /*/index.php$\n",
		path: "/a/index.php", allowed: true, rule: "Allow: /*/index.php$", line: 3},
	{name: "longest_match_wildcard_disallow", body: "User-agent: *\nDisallow: /*.php$\nAllow: /*/index.php$\n",
		path: "/b.php", allowed: false, rule: "Disallow: /*.php$", line: 2},
	{name: "short_allow_beats_root_disallow", body: "User-agent: *\nAllow: /p\nDisallow: /\n",
		path: "/page", allowed: true, rule: "Allow: /p", line: 2},
	{name: "wildcard_in_the_middle", body: "User-agent: *\nDisallow: /*/private/\n",
		path: "/a/private/x", allowed: false, rule: "Disallow: /*/private/", line: 2},
	{name: "wildcard_needs_its_literal_parts", body: "User-agent: *\nDisallow: /*/private/\n",
		path: "/private/", allowed: true},
	{name: "star_pattern_matches_all", body: "User-agent: *\nDisallow: *\n",
		path: "/anything?x", allowed: false, rule: "Disallow: *", line: 2},

	// §2.2.3 end anchor.
	{name: "dollar_anchor_match", body: "User-agent: *\nDisallow: /*.gif$\n",
		path: "/a.gif", allowed: false, rule: "Disallow: /*.gif$", line: 2},
	{name: "dollar_anchor_longer_path", body: "User-agent: *\nDisallow: /*.gif$\n",
		path: "/a.gifx", allowed: true},
	{name: "dollar_root_only", body: "User-agent: *\nDisallow: /$\n",
		path: "/", allowed: false, rule: "Disallow: /$", line: 2},
	{name: "dollar_root_other_path", body: "User-agent: *\nDisallow: /$\n",
		path: "/a", allowed: true},
	{name: "empty_path_is_root", body: "User-agent: *\nDisallow: /$\n",
		path: "", allowed: false, rule: "Disallow: /$", line: 2},
	{name: "query_pattern", body: "User-agent: *\nDisallow: /*?\n",
		path: "/a?b=1", allowed: false, rule: "Disallow: /*?", line: 2},
	{name: "query_pattern_no_query", body: "User-agent: *\nDisallow: /*?\n",
		path: "/a", allowed: true},

	// §2.2.2 percent-encoding, the RFC's table and its rules.
	{name: "encoding_query_kept", body: "User-agent: *\nDisallow: /foo/bar?baz=quz\n",
		path: "/foo/bar?baz=quz", allowed: false, rule: "Disallow: /foo/bar?baz=quz", line: 2},
	{name: "encoding_raw_utf8_path", body: "User-agent: *\nDisallow: /foo/bar/%E3%83%84\n",
		path: "/foo/bar/ツ", allowed: false, rule: "Disallow: /foo/bar/%E3%83%84", line: 2},
	{name: "encoding_unreserved_decoded", body: "User-agent: *\nDisallow: /foo/bar/%62%61%7A\n",
		path: "/foo/bar/baz", allowed: false, rule: "Disallow: /foo/bar/%62%61%7A", line: 2},
	{name: "encoding_reserved_kept_encoded", body: "User-agent: *\nDisallow: /a%2Fb\n",
		path: "/a/b", allowed: true},
	{name: "encoding_reserved_case_normalised", body: "User-agent: *\nDisallow: /a%2Fb\n",
		path: "/a%2fb", allowed: false, rule: "Disallow: /a%2Fb", line: 2},
	{name: "encoding_space_in_value", body: "User-agent: *\nDisallow: /a b\n",
		path: "/a%20b/c", allowed: false, rule: "Disallow: /a b", line: 2},
	{name: "encoding_bare_percent", body: "User-agent: *\nDisallow: /100%\n",
		path: "/100%25off", allowed: false, rule: "Disallow: /100%", line: 2},

	// Paths are case-sensitive, names and product tokens are not.
	{name: "path_case_sensitive_miss", body: "User-agent: *\nDisallow: /Private\n",
		path: "/private", allowed: true},
	{name: "path_case_sensitive_hit", body: "User-agent: *\nDisallow: /Private\n",
		path: "/Private/x", allowed: false, rule: "Disallow: /Private", line: 2},
	{name: "token_case_insensitive", body: "User-agent: lektabot\nDisallow: /\n",
		path: "/x", allowed: false, rule: "Disallow: /", line: 2},
	{name: "directive_names_case_insensitive", body: "USER-AGENT: *\nDISALLOW: /x\n",
		path: "/x", allowed: false, rule: "DISALLOW: /x", line: 2},
	{name: "blanks_around_colon", body: "  User-agent :\t*  \n\tDisallow :  /x  \n",
		path: "/x", allowed: false, rule: "Disallow :  /x", line: 2},
	{name: "missing_colon_accepted", body: "User-agent *\nDisallow /x\n",
		path: "/x", allowed: false, rule: "Disallow /x", line: 2},
	{name: "misspelling_accepted", body: "User-agent: *\nDissallow: /x\n",
		path: "/x", allowed: false, rule: "Dissallow: /x", line: 2},

	// §2.2.1 groups: merging, fallback, no group.
	{name: "merged_groups_first", body: "User-agent: LektaBot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\nUser-agent: lektabot\nDisallow: /b\n",
		path: "/a", allowed: false, rule: "Disallow: /a", line: 2},
	{name: "merged_groups_second", body: "User-agent: LektaBot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\nUser-agent: lektabot\nDisallow: /b\n",
		path: "/b", allowed: false, rule: "Disallow: /b", line: 8},
	{name: "merged_groups_no_star_fallback", body: "User-agent: LektaBot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\nUser-agent: lektabot\nDisallow: /b\n",
		path: "/c", allowed: true},
	{name: "star_groups_merged", body: "User-agent: *\nDisallow: /a\nUser-agent: otherbot\nDisallow: /\nUser-agent: *\nDisallow: /b\n",
		path: "/b", allowed: false, rule: "Disallow: /b", line: 6},
	{name: "star_groups_merged_other_path", body: "User-agent: *\nDisallow: /a\nUser-agent: otherbot\nDisallow: /\nUser-agent: *\nDisallow: /b\n",
		path: "/c", allowed: true},
	{name: "specific_group_beats_star", body: "User-agent: *\nDisallow: /\n\nUser-agent: LektaBot\nDisallow: /private\n",
		path: "/x", allowed: true},
	{name: "no_groups", body: "Sitemap: https://e.example/s.xml\n",
		path: "/x", allowed: true},
	{name: "only_other_bots", body: "User-agent: otherbot\nDisallow: /\n",
		path: "/x", allowed: true},
	{name: "empty_file", body: "", path: "/x", allowed: true},
	{name: "empty_disallow", body: "User-agent: *\nDisallow:\n",
		path: "/x", allowed: true},
	{name: "empty_disallow_still_a_group", body: "User-agent: LektaBot\nDisallow:\n\nUser-agent: *\nDisallow: /\n",
		path: "/x", allowed: true},
	{name: "blank_lines_inside_group", body: "User-agent: a\n\nUser-agent: LektaBot\n\nDisallow: /x\n",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 5},
	// §2.2.4: a Sitemap record "MUST NOT terminate a group", and Google's
	// parser agrees: the two User-agent lines form one group.
	{name: "sitemap_inside_user_agent_run", body: "User-agent: LektaBot\nSitemap: https://e.example/s.xml\nUser-agent: b\nDisallow: /x\n",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 4},
	{name: "unknown_record_inside_group", body: "User-agent: *\nDisallow: /a\nFoo: bar\nDisallow: /b\n",
		path: "/b", allowed: false, rule: "Disallow: /b", line: 4},
	{name: "user_agent_after_rules_starts_group", body: "User-agent: LektaBot\nDisallow: /a\nUser-agent: other\nDisallow: /b\n",
		path: "/b", allowed: true},

	// Line ends, byte-order mark, comments.
	{name: "cr_line_ends", body: "User-agent: *\rDisallow: /x\r",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 2},
	{name: "crlf_line_ends", body: "User-agent: *\r\n\r\nDisallow: /x\r\n",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 3},
	{name: "lf_cr_is_two_line_ends", body: "User-agent: *\n\rDisallow: /x",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 3},
	{name: "no_final_line_end", body: "User-agent: *\nDisallow: /x",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 2},
	{name: "byte_order_mark", body: "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 2},
	{name: "comments", body: "# comment\nUser-agent: * # all\nDisallow: /x # no\n#Disallow: /y\n",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 3},
	{name: "commented_rule_ignored", body: "# comment\nUser-agent: * # all\nDisallow: /x # no\n#Disallow: /y\n",
		path: "/y", allowed: true},
	{name: "comment_in_user_agent", body: "User-agent: LektaBot#me\nDisallow: /x\n",
		path: "/x", allowed: false, rule: "Disallow: /x", line: 2},
}

func TestRobotsDecide(t *testing.T) {
	t.Parallel()
	for _, tc := range rfcCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkDecide(t, tc)
		})
	}
}

func TestRobotsDecideGroup(t *testing.T) {
	t.Parallel()
	r := ParseRobots([]byte(rfcExample))
	tests := []struct {
		name, token, path string
		want              Decision
	}{
		{"rule_in_shared_group", "bazbot", "/example/page.html", Decision{Allowed: false, Basis: BasisRule,
			Group: "User-Agent: barbot, User-Agent: bazbot", GroupLine: 11, Rule: "Disallow: /example/page.html", Line: 13, Reading: ReadingBoth}},
		{"no_rule_matched", "quxbot", "/x", Decision{Allowed: true, Basis: BasisNoMatchingRule,
			Group: "User-Agent: quxbot", GroupLine: 15, Reading: ReadingBoth}},
		{"star_fallback", "LektaBot", "/example/", Decision{Allowed: false, Basis: BasisRule,
			Group: "User-Agent: *", GroupLine: 1, Rule: "Disallow: /example/", Line: 3, Reading: ReadingBoth}},
		{"robots_txt", "foobot", "/robots.txt", Decision{Allowed: true, Basis: BasisRobotsTxt}},
		{"robots_txt_with_query", "foobot", "/robots.txt?x", Decision{Allowed: true, Basis: BasisRobotsTxt}},
		{"robots_txt_prefix_is_not_it", "foobot", "/robots.txt.bak", Decision{Allowed: false, Basis: BasisRule,
			Group: "User-Agent: foobot", GroupLine: 6, Rule: "Disallow:/", Line: 7, Reading: ReadingBoth}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := r.Decide(tc.token, tc.path); got != tc.want {
				t.Errorf("Decide(%q, %q) = %+v, want %+v", tc.token, tc.path, got, tc.want)
			}
		})
	}
	none := ParseRobots([]byte("User-agent: other\nDisallow: /\n")).Decide("LektaBot", "/")
	if none != (Decision{Allowed: true, Basis: BasisNoGroup, Reading: ReadingBoth}) {
		t.Errorf("Decide without a group = %+v", none)
	}
}

func TestRobotsDecideURL(t *testing.T) {
	t.Parallel()
	r := ParseRobots([]byte("User-agent: *\nDisallow: /a%20b?q\nDisallow: /$\n"))
	tests := []struct {
		url     string
		allowed bool
		path    string
	}{
		{"https://e.example/a%20b?q=1#frag", false, "/a%20b?q=1"},
		{"https://e.example/a b?q", false, "/a%20b?q"},
		{"https://e.example", false, "/"},
		{"https://e.example/?", true, "/?"},
		{"https://e.example/a%20b", true, "/a%20b"},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := RequestTarget(u); got != tc.path {
			t.Errorf("RequestTarget(%s) = %q, want %q", tc.url, got, tc.path)
		}
		if got := r.DecideURL("LektaBot", u).Allowed; got != tc.allowed {
			t.Errorf("DecideURL(%s).Allowed = %v, want %v", tc.url, got, tc.allowed)
		}
	}
}

func TestValidateToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		token string
		ok    bool
	}{
		{"LektaBot", true},
		{"lekta_bot-x", true},
		{"*", false},
		{"", false},
		{"LektaBot/0.1", false},
		{"Lekta Bot", false},
		{"bot1", false},
		{"ボット", false},
	}
	for _, tc := range tests {
		err := ValidateToken(tc.token)
		if tc.ok != (err == nil) {
			t.Errorf("ValidateToken(%q) = %v, want ok=%v", tc.token, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidToken) {
			t.Errorf("ValidateToken(%q) = %v, does not wrap ErrInvalidToken", tc.token, err)
		}
	}
}

func TestNormalisePath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/a/b?c=d", "/a/b?c=d"},
		{"/ツ", "/%E3%83%84"},
		{"/%e3%83%84", "/%E3%83%84"},
		{"/%62%61%7a%7E%2d", "/baz~-"},
		{"/%2f%3F%23%25", "/%2F%3F%23%25"},
		{"/a b\t", "/a%20b%09"},
		{"/{x}|^`\\\"<>", "/%7Bx%7D%7C%5E%60%5C%22%3C%3E"},
		{"/100%", "/100%25"},
		{"/%zz%4", "/%25zz%254"},
		{"/*$", "/*$"},
		{"\x7f\x00", "%7F%00"},
	}
	for _, tc := range tests {
		got := normalisePath(tc.in)
		if got != tc.want {
			t.Errorf("normalisePath(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := normalisePath(got); again != got {
			t.Errorf("normalisePath is not idempotent on %q: %q", got, again)
		}
	}
}

func TestDecisionErr(t *testing.T) {
	t.Parallel()
	if err := (Decision{Allowed: true, Basis: BasisRule}).Err(); err != nil {
		t.Errorf("allowed decision: Err = %v", err)
	}
	err := (Decision{Basis: BasisRule, Rule: "Disallow: /x", Line: 4}).Err()
	if !errors.Is(err, ErrDisallowed) || !strings.Contains(err.Error(), "line 4: Disallow: /x") {
		t.Errorf("disallowed decision: Err = %v", err)
	}
	if err := (Decision{Basis: BasisUnreachable}).Err(); !errors.Is(err, ErrRobotsUnreachable) {
		t.Errorf("unreachable decision: Err = %v", err)
	}
}

func TestRobotsSitemaps(t *testing.T) {
	t.Parallel()
	r := ParseRobots([]byte("Sitemap: https://e.example/a.xml\nUser-agent: *\nSitemap: http://e.example/b.xml\n" +
		"Sitemap: /relative.xml\nSitemap: https://e.example/a.xml\nSitemap: ftp://e.example/c.xml\n"))
	want := []string{"https://e.example/a.xml", "http://e.example/b.xml"}
	if got := r.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("Sitemaps() = %q, want %q", got, want)
	}
}

// TestRobotsSizeLimit checks the 500 KiB cut: what is before it counts,
// everything after does not. The line the limit cuts through is dropped by
// the RFC 9309 reading, but Google reads the first 500 KiB, that line up
// to the cut included, so a rule in it still keeps LektaBot out.
func TestRobotsSizeLimit(t *testing.T) {
	t.Parallel()
	head := "User-agent: *\nDisallow: /early\n"
	tests := []struct {
		name string
		last string // the line that reaches byte RobotsMaxBytes
		next byte   // the byte at RobotsMaxBytes
		// cutReading is which reading disallows /cut: both when the limit
		// falls on the line's end, only Google's when it falls inside.
		cutReading Reading
	}{
		{"limit_on_line_end", "Disallow: /cut", '\n', ReadingBoth},
		{"limit_on_cr", "Disallow: /cut", '\r', ReadingBoth},
		{"limit_inside_line", "Disallow: /cut", 'x', ReadingGoogle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := robotsOfSize(t, head, tc.last, tc.next)
			body = append(body, "\nDisallow: /late\n"...)
			r := ParseRobots(body)
			if !r.Truncated() || r.Size() != len(body) {
				t.Errorf("Truncated() = %v, Size() = %d, want true, %d", r.Truncated(), r.Size(), len(body))
			}
			if d := r.Decide("LektaBot", "/early"); d.Allowed || d.Partial {
				t.Errorf("/early: %+v, want disallowed, not partial (the rule is before the limit)", d)
			}
			if d := r.Decide("LektaBot", "/cut"); d.Allowed || d.Reading != tc.cutReading {
				t.Errorf("/cut: %+v, want disallowed by reading %q", d, tc.cutReading)
			}
			if d := r.Decide("LektaBot", "/late"); !d.Allowed || !d.Partial {
				t.Errorf("/late: %+v, want allowed and partial (the rule is past the limit)", d)
			}
			// body[:RobotsMaxBytes] holds the filler lines and the last line.
			lines := strings.Count(string(body[:RobotsMaxBytes]), "\n") + 1
			wantLine := lines + 1 // the line after the last one
			if tc.cutReading == ReadingGoogle {
				wantLine = lines // the cut line itself is the first one ignored
			}
			is := findIssue(r.Issues(), IssueTooLarge)
			if is == nil || is.Line != wantLine || is.Severity != SeverityError {
				t.Errorf("too_large issue = %+v, want line %d, error", is, wantLine)
			}
		})
	}
}

// robotsOfSize returns head, comment filler, then last, such that last ends
// exactly at byte RobotsMaxBytes, followed by next.
func robotsOfSize(tb testing.TB, head, last string, next byte) []byte {
	tb.Helper()
	var b strings.Builder
	b.WriteString(head)
	filler := "# " + strings.Repeat("filler ", 12) + "\n"
	for b.Len()+len(filler)+len(last)+200 < RobotsMaxBytes {
		b.WriteString(filler)
	}
	pad := RobotsMaxBytes - b.Len() - len(last) - 1
	b.WriteString("#" + strings.Repeat("p", pad-1) + "\n")
	b.WriteString(last)
	if b.Len() != RobotsMaxBytes {
		tb.Fatalf("built %d bytes, want %d", b.Len(), RobotsMaxBytes)
	}
	b.WriteByte(next)
	return []byte(b.String())
}

func findIssue(issues []RobotsIssue, code IssueCode) *RobotsIssue {
	for i := range issues {
		if issues[i].Code == code {
			return &issues[i]
		}
	}
	return nil
}

// TestRobotsFixtures checks the files under testdata/robots, which the CLI
// tests and the docs use too.
func TestRobotsFixtures(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("testdata", "robots", "rfc9309-example.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != rfcExample {
		t.Errorf("testdata/robots/rfc9309-example.txt differs from rfcExample")
	}
	body, err = os.ReadFile(filepath.Join("testdata", "robots", "messy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := ParseRobots(body)
	if !r.HasErrors() {
		t.Errorf("messy.txt: no lint errors, want some; issues %v", r.Issues())
	}
	tests := []struct {
		token, path string
		allowed     bool
	}{
		{"LektaBot", "/tmp/x", false},    // "User-agent: LektaBot/0.1", "Dissallow /tmp/"
		{"LektaBot", "/private/x", true}, // its own group, so not the "*" one
		{"otherbot", "/private/x", false},
		{"otherbot", "/shop/$sale", true},
		{"otherbot", "/sitemap.xml", true},
	}
	for _, tc := range tests {
		if got := r.Decide(tc.token, tc.path).Allowed; got != tc.allowed {
			t.Errorf("messy.txt: Decide(%q, %q).Allowed = %v, want %v", tc.token, tc.path, got, tc.allowed)
		}
	}
}
