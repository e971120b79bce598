package policy

import (
	"errors"
	"net/url"
	"slices"
	"testing"
)

// TestRequestTargetReservedEscapes: a raw path that holds a byte needing an
// escape (é) keeps its reserved escapes as written, in the case written, as
// Chromium sends them, so the decision on the URL as written equals the
// decision on its encoded form.
func TestRequestTargetReservedEscapes(t *testing.T) {
	t.Parallel()
	for _, esc := range []string{"%2F", "%3B", "%2C", "%3D", "%26", "%2B", "%24", "%3A", "%40", "%3F", "%23"} {
		t.Run(esc, func(t *testing.T) {
			t.Parallel()
			r := ParseRobots([]byte("User-agent: *\nDisallow: /caf%C3%A9" + esc + "b\n"))
			raw, err := url.Parse("http://x.com/café" + esc + "b")
			if err != nil {
				t.Fatal(err)
			}
			encoded, err := url.Parse("http://x.com/caf%C3%A9" + esc + "b")
			if err != nil {
				t.Fatal(err)
			}
			want := "/caf%C3%A9" + esc + "b"
			if got := RequestTarget(raw); got != want {
				t.Errorf("RequestTarget(raw) = %q, want %q", got, want)
			}
			if got, want := r.DecideURL("LektaBot", raw), r.DecideURL("LektaBot", encoded); got != want || want.Allowed {
				t.Errorf("raw URL decided %+v, encoded URL %+v; want both disallowed", got, want)
			}
			lower, _ := url.Parse("http://x.com/café" + toLowerHex(esc) + "b")
			if got, want := RequestTarget(lower), "/caf%C3%A9"+toLowerHex(esc)+"b"; got != want {
				t.Errorf("RequestTarget(lower-case escape) = %q, want %q", got, want)
			}
			if d := r.DecideURL("LektaBot", lower); d.Allowed {
				t.Errorf("lower-case escape decided %+v, want disallowed by RFC 9309's reading", d)
			}
		})
	}
}

func toLowerHex(esc string) string {
	b := []byte(esc)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// TestRobotsGoogleSpellings: every directive name Google's reference parser
// accepts (by prefix, and its known misspellings) is obeyed, and the lint
// flags it.
func TestRobotsGoogleSpellings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, path string
		allowed          bool
	}{
		{"disallowed", "User-agent: *\nDisallowed: /x\n", "/x", false},
		{"user_agents", "User-Agents: LektaBot\nDisallow: /x\n", "/x", false},
		{"dissallow", "User-agent: *\nDissallow: /x\n", "/x", false},
		{"dissalow", "User-agent: *\nDissalow: /x\n", "/x", false},
		{"disalow", "User-agent: *\nDISALOW: /x\n", "/x", false},
		{"diasllow", "User-agent: *\nDiasllow: /x\n", "/x", false},
		{"disallaw", "User-agent: *\nDisallaw: /x\n", "/x", false},
		{"user_agent_with_space", "user agent: LektaBot\nDisallow: /x\n", "/x", false},
		{"useragent", "Useragent: LektaBot\nDisallow: /x\n", "/x", false},
		// Google allows, RFC 9309 (where "Allowed" is no name) does not:
		// the stricter answer holds.
		{"allowed_prefix", "User-agent: *\nDisallow: /x\nAllowed: /x/y\n", "/x/y", false},
		{"long_prefix", "User-agent: *\nDisallow-these-paths-please: /x\n", "/x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := ParseRobots([]byte(tc.body))
			if got := r.Decide("LektaBot", tc.path); got.Allowed != tc.allowed {
				t.Errorf("Decide(%q) = %+v, want allowed=%v", tc.path, got, tc.allowed)
			}
			if !slices.ContainsFunc(r.Issues(), func(is RobotsIssue) bool { return is.Code == IssueMisspelled }) {
				t.Errorf("no %s issue in %v", IssueMisspelled, r.Issues())
			}
		})
	}
}

// TestRobotsGroupEnds: only an Allow or Disallow line ends a run of
// User-agent lines (RFC 9309 §2.2.4; Google's parser reads it the same
// way), so whatever else stands between two User-agent lines leaves them
// one group, sharing the rules below. The lint says group_continues where
// such a line stands.
func TestRobotsGroupEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, between string
		lint          bool // a line that group_continues names
	}{
		{"unknown_directive", "Foo: bar", true},
		{"sitemap", "Sitemap: https://e.example/s.xml", true},
		{"crawl_delay", "Crawl-delay: 5", true},
		{"nonstandard", "Host: e.example", true},
		{"noindex", "Noindex: /x", true},
		{"two_words_no_colon", "garbled line", true},
		{"three_words", "this is garbage", true},
		{"one_word", "garbage", true},
		{"empty_name", ": /x", true},
		{"comment", "# note", false},
		{"blank", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := "User-agent: LektaBot\n" + tc.between + "\nUser-agent: OtherBot\nDisallow: /x\n"
			r := ParseRobots([]byte(body))
			if d := r.Decide("LektaBot", "/x"); d.Allowed || d.Line != 4 {
				t.Errorf("Decide = %+v, want disallowed by line 4", d)
			}
			if d := r.Decide("OtherBot", "/x"); d.Allowed {
				t.Errorf("OtherBot: Decide = %+v, want disallowed", d)
			}
			is := findIssue(r.Issues(), "group_continues")
			if (is != nil) != tc.lint || (is != nil && (is.Line != 2 || is.Severity != SeverityWarning)) {
				t.Errorf("group_continues = %+v, want present=%v on line 2: %v", is, tc.lint, r.Issues())
			}
		})
	}
	// A record after the rules started does not split anything, and a
	// User-agent line after a rule starts a new group.
	r := ParseRobots([]byte("User-agent: LektaBot\nDisallow: /x\nSitemap: https://e.example/s.xml\nDisallow: /y\nUser-agent: OtherBot\nDisallow: /z\n"))
	if d := r.Decide("LektaBot", "/y"); d.Allowed {
		t.Errorf("rule after a Sitemap line: %+v, want disallowed", d)
	}
	if d := r.Decide("LektaBot", "/z"); !d.Allowed {
		t.Errorf("rule of the next group: %+v, want allowed", d)
	}
	if is := findIssue(r.Issues(), "group_continues"); is != nil {
		t.Errorf("group_continues for a Sitemap between rules: %v", r.Issues())
	}
}

// TestRobotsNonRFCTokens: a product token Google accepts but RFC 9309 does
// not (archive.org_bot) is matched against the user-agent value as written.
func TestRobotsNonRFCTokens(t *testing.T) {
	t.Parallel()
	r := ParseRobots([]byte("User-agent: archive.org_bot\nDisallow: /\n\nUser-agent: archive\nAllow: /\n\nUser-agent: *\nDisallow: /x\n"))
	if d := r.Decide("archive.org_bot", "/a"); d.Allowed || d.GroupLine != 1 {
		t.Errorf("archive.org_bot: %+v, want its own group (line 1)", d)
	}
	if d := r.Decide("archive", "/x"); !d.Allowed || d.GroupLine != 4 {
		t.Errorf("archive: %+v, want the archive group (line 4)", d)
	}
	if d := r.Decide("LektaBot", "/x"); d.Allowed || d.GroupLine != 7 {
		t.Errorf("LektaBot: %+v, want the * group", d)
	}
	for _, tc := range []struct {
		token   string
		ok, rfc bool
	}{
		{"archive.org_bot", true, false},
		{"Bot1", true, false},
		{"LektaBot", true, true},
		{"*", false, false},
		{"", false, false},
		{"LektaBot/0.1", false, false},
		{"Lekta Bot", false, false},
	} {
		err := ValidateAgentToken(tc.token)
		if tc.ok != (err == nil) {
			t.Errorf("ValidateAgentToken(%q) = %v, want ok=%v", tc.token, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidToken) {
			t.Errorf("ValidateAgentToken(%q) = %v, does not wrap ErrInvalidToken", tc.token, err)
		}
		if rfc := ValidateToken(tc.token) == nil; rfc != tc.rfc {
			t.Errorf("ValidateToken(%q) ok=%v, want %v", tc.token, rfc, tc.rfc)
		}
	}
}

// TestRobotsReadings: a path is disallowed when either reading of the file
// disallows it, and Decision.Reading says which one did when only one did.
func TestRobotsReadings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, token, path string
		allowed                 bool
		reading                 Reading
		rule                    string
	}{
		{"vertical_tab_blank", "User-agent: *\nDisallow:\v/x\n", "", "/x", false, ReadingGoogle, "Disallow:\v/x"},
		{"form_feed_around_name", "User-agent: *\n\fDisallow\f: /x\n", "", "/x", false, ReadingGoogle, "Disallow\f: /x"},
		{"stray_percent", "User-agent: *\nDisallow: /%e*3%83%84\n", "", "/%e3%83%84", false, ReadingGoogle, "Disallow: /%e*3%83%84"},
		{"nul_ends_the_line", "User-agent: *\nDisallow: /a\x00b\n", "", "/a", false, ReadingGoogle, "Disallow: /a"},
		{"misspelled", "User-agent: *\nDissallow: /x\n", "", "/x", false, ReadingGoogle, "Dissallow: /x"},
		{"missing_colon_agent", "User-agent LektaBot\nDisallow: /x\n", "", "/x", false, ReadingGoogle, "Disallow: /x"},
		{"allow_prefix_only_google", "User-agent: *\nDisallow: /\nAllowed: /x\n", "", "/x", false, ReadingRFC, "Disallow: /"},
		{"decoded_escape_only_rfc", "User-agent: *\nDisallow: /%7Ea\n", "", "/~a", false, ReadingRFC, "Disallow: /%7Ea"},
		{"index_html_only_rfc", "User-agent: *\nAllow: /d/index.html\nDisallow: /\n", "", "/d/", false, ReadingRFC, "Disallow: /"},
		{"both", "User-agent: *\nDisallow: /x\n", "", "/x", false, ReadingBoth, "Disallow: /x"},
		{"both_allow", "User-agent: *\nDisallow: /x\n", "", "/y", true, ReadingBoth, ""},
		{"robots_txt", "User-agent: *\nDisallow: /\n", "", "/robots.txt", true, "", ""},
		// Google's parser cannot name a token with '.', so only RFC 9309's reading applies.
		{"non_rfc_token", "User-agent: archive.org_bot\nAllow: /\nUser-agent: *\nDisallow: /\n", "archive.org_bot", "/x", true, ReadingBoth, "Allow: /"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			token := tc.token
			if token == "" {
				token = "LektaBot"
			}
			d := ParseRobots([]byte(tc.body)).Decide(token, tc.path)
			if d.Allowed != tc.allowed || d.Reading != tc.reading || d.Rule != tc.rule {
				t.Errorf("Decide(%q) = %+v, want allowed=%v reading %q rule %q", tc.path, d, tc.allowed, tc.reading, tc.rule)
			}
		})
	}
}

// TestRobotsDecideURLAsSent: Google's matcher compares escapes byte for
// byte, so the path is also decided as the request sends it, escapes in
// the case they were written in.
func TestRobotsDecideURLAsSent(t *testing.T) {
	t.Parallel()
	r := ParseRobots([]byte("User-agent: *\nDisallow: /%e*3%83%84\n"))
	u, err := url.Parse("https://e.example/%e3%83%84")
	if err != nil {
		t.Fatal(err)
	}
	if d := r.DecideURL("LektaBot", u); d.Allowed || d.Reading != ReadingGoogle {
		t.Errorf("DecideURL = %+v, want disallowed by Google's reading of the path as sent", d)
	}
	if got := googleEscape("/SanJosé%aa%2f%zz"); got != "/SanJos%C3%A9%AA%2F%zz" {
		t.Errorf("googleEscape = %q", got)
	}
}
