package policy

import (
	"testing"

	"github.com/temoto/robotstxt"
)

// decideCase is one robots.txt question with its answer worked out by hand
// from RFC 9309.
type decideCase struct {
	name    string
	body    string
	token   string // "" means LektaBot
	path    string
	allowed bool
	rule    string // the deciding rule as written; "" when no rule decides
	line    int    // the deciding rule's line; checked when rule != ""
}

// deviationCase is a decideCase on which temoto/robotstxt v1.1.2, used
// plainly (FromBytes, then TestAgent), answers otherwise: issue 3's list.
type deviationCase struct {
	decideCase
	temoto string // "allowed", "disallowed" or "error" (FromBytes fails)
}

// deviationCases has one case per bullet point of issue 3's list.
var deviationCases = []deviationCase{
	// §2.3.1.5 / §2.2: a rule before any group belongs to nobody; the rest of
	// the file still counts.
	{decideCase{name: "rule_before_first_user_agent",
		body: "Disallow: /x\nUser-agent: *\nDisallow: /private\n",
		path: "/private/a", allowed: false, rule: "Disallow: /private", line: 3}, "error"},
	{decideCase{name: "rule_before_first_user_agent_belongs_to_nobody",
		body: "Disallow: /x\nUser-agent: *\nDisallow: /private\n",
		path: "/x", allowed: true}, "error"},
	// Crawl-delay is another record (§2.2.4): a bad value is ignored, not fatal.
	{decideCase{name: "unparsable_crawl_delay",
		body: "User-agent: *\nCrawl-delay: soon\nDisallow: /private\n",
		path: "/private", allowed: false, rule: "Disallow: /private", line: 3}, "error"},
	// (A Crawl-delay inside a run of user-agent lines ends the run, as in
	// Google's parser, so temoto and LektaBot now agree there; issue 13,
	// TestRobotsGroupEnds.)
	{decideCase{name: "partial_byte_order_mark",
		body: "\xEF\xBBUser-agent: *\nDisallow: /private\n",
		path: "/private", allowed: false, rule: "Disallow: /private", line: 2}, "error"},
	// §2.1 grammar: EOL = *WS [comment] NL, a comment starts at any '#'.
	{decideCase{name: "comment_without_whitespace",
		body: "User-agent: *\nDisallow: /private#secret\n",
		path: "/private/x", allowed: false, rule: "Disallow: /private", line: 2}, "allowed"},
	// The value runs to the end of the line; a space is part of the path and
	// is compared percent-encoded (§2.2.2).
	{decideCase{name: "space_inside_value_is_kept",
		body: "User-agent: *\nDisallow: /a b\n",
		path: "/abc", allowed: true}, "disallowed"},
	// §2.2.1: the group is found by case-insensitive match on the product
	// token, not by prefix.
	{decideCase{name: "agent_prefix_is_not_a_match",
		body: "User-agent: Lekta\nDisallow: /\n",
		path: "/x", allowed: true}, "disallowed"},
	{decideCase{name: "agent_line_with_version",
		body: "User-agent: LektaBot/0.1\nDisallow: /private\n\nUser-agent: *\nAllow: /\n",
		path: "/private", allowed: false, rule: "Disallow: /private", line: 2}, "allowed"},
	{decideCase{name: "agent_line_with_star_suffix",
		body: "User-agent: LektaBot*\nDisallow: /private\n",
		path: "/private", allowed: false, rule: "Disallow: /private", line: 2}, "allowed"},
	// §2.2.1: the matching group is obeyed, rules or not; no fallback to "*".
	{decideCase{name: "matching_group_without_rules_allows_all",
		body: "User-agent: *\nDisallow: /\n\nUser-agent: LektaBot\n",
		path: "/x", allowed: true}, "disallowed"},
	// §2.2.2: equivalent Allow and Disallow: Allow.
	{decideCase{name: "equal_length_allow_wins",
		body: "User-agent: *\nDisallow: /page\nAllow: /page\n",
		path: "/page", allowed: true, rule: "Allow: /page", line: 3}, "disallowed"},
	// §2.2.2: the most specific match has the most octets: "/*.html" is 7,
	// beaten by "/folder/" (8).
	{decideCase{name: "priority_counts_pattern_octets",
		body: "User-agent: *\nAllow: /*.html\nDisallow: /folder/\n",
		path: "/folder/a.html", allowed: false, rule: "Disallow: /folder/", line: 3}, "allowed"},
	{decideCase{name: "trailing_star_counts",
		body: "User-agent: *\nDisallow: /page\nAllow: /page*\n",
		path: "/pageone", allowed: true, rule: "Allow: /page*", line: 3}, "disallowed"},
	// Patterns match from the first octet of the path.
	{decideCase{name: "wildcard_anchored_at_path_start",
		body: "User-agent: *\nDisallow: /a*b\n",
		path: "/xx/a1b", allowed: true}, "disallowed"},
	// §2.2.3: only a final '$' anchors; elsewhere it is an octet.
	{decideCase{name: "dollar_inside_pattern_is_literal",
		body: "User-agent: *\nDisallow: /a$b\n",
		path: "/a$b", allowed: false, rule: "Disallow: /a$b", line: 2}, "allowed"},
	// §2.2.2: octets outside ASCII are percent-encoded before comparison.
	{decideCase{name: "raw_utf8_pattern_percent_encoded",
		body: "User-agent: *\nDisallow: /ツ\n",
		path: "/%E3%83%84", allowed: false, rule: "Disallow: /ツ", line: 2}, "allowed"},
	{decideCase{name: "lower_case_escape_normalised",
		body: "User-agent: *\nDisallow: /%e3%83%84\n",
		path: "/%E3%83%84", allowed: false, rule: "Disallow: /%e3%83%84", line: 2}, "allowed"},
	// §2.1 grammar: path-pattern = "/" ...; anything else never matches.
	{decideCase{name: "pattern_without_slash_never_matches",
		body: "User-agent: *\nDisallow: private\n",
		path: "/private", allowed: true}, "disallowed"},
	// §2.2.2: "The /robots.txt URI is implicitly allowed."
	{decideCase{name: "robots_txt_always_allowed",
		body: "User-agent: *\nDisallow: /\n",
		path: "/robots.txt", allowed: true}, "disallowed"},
}

func TestRobotsDeviations(t *testing.T) {
	t.Parallel()
	for _, tc := range deviationCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkDecide(t, tc.decideCase)
			// The case only proves something if temoto answers otherwise.
			if got := temotoAnswer(tc.body, tc.tokenOrDefault(), tc.path); got != tc.temoto {
				t.Errorf("temoto/robotstxt now answers %q (was %q): re-check whether this deviation still exists", got, tc.temoto)
			}
			if tc.temoto == want(tc.allowed) {
				t.Errorf("case does not exercise a deviation: temoto and RFC agree on %q", tc.temoto)
			}
		})
	}
}

func want(allowed bool) string {
	if allowed {
		return "allowed"
	}
	return "disallowed"
}

// temotoAnswer is what temoto/robotstxt v1.1.2 says, used plainly.
func temotoAnswer(body, token, path string) string {
	r, err := robotstxt.FromString(body)
	if err != nil {
		return "error"
	}
	return want(r.TestAgent(path, token))
}

func (tc decideCase) tokenOrDefault() string {
	if tc.token == "" {
		return "LektaBot"
	}
	return tc.token
}

// checkDecide parses tc.body and checks the decision on tc.path.
func checkDecide(tb testing.TB, tc decideCase) {
	tb.Helper()
	d := ParseRobots([]byte(tc.body)).Decide(tc.tokenOrDefault(), tc.path)
	if d.Allowed != tc.allowed {
		tb.Errorf("Decide(%q, %q).Allowed = %v, want %v (decision %+v)", tc.tokenOrDefault(), tc.path, d.Allowed, tc.allowed, d)
	}
	if d.Rule != tc.rule {
		tb.Errorf("Decide(%q, %q).Rule = %q, want %q", tc.tokenOrDefault(), tc.path, d.Rule, tc.rule)
	}
	if tc.rule != "" && d.Line != tc.line {
		tb.Errorf("Decide(%q, %q).Line = %d, want %d", tc.tokenOrDefault(), tc.path, d.Line, tc.line)
	}
	if (d.Rule != "") != (d.Basis == BasisRule) {
		tb.Errorf("Decide(%q, %q): Rule %q with Basis %q", tc.tokenOrDefault(), tc.path, d.Rule, d.Basis)
	}
}
