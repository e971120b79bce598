package policy

import (
	"errors"
	"net/url"
	"slices"
	"testing"
)

// TestRequestPathReservedEscapes: a raw path that holds a byte needing an
// escape (é) keeps its reserved escapes, so the decision on the URL as
// written equals the decision on its fully encoded form.
func TestRequestPathReservedEscapes(t *testing.T) {
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
			if got := RequestPath(raw); got != want {
				t.Errorf("RequestPath(raw) = %q, want %q", got, want)
			}
			if got, want := r.DecideURL("LektaBot", raw), r.DecideURL("LektaBot", encoded); got != want || want.Allowed {
				t.Errorf("raw URL decided %+v, encoded URL %+v; want both disallowed", got, want)
			}
			lower, _ := url.Parse("http://x.com/café" + toLowerHex(esc) + "b")
			if got := RequestPath(lower); got != want {
				t.Errorf("RequestPath(lower-case escape) = %q, want %q", got, want)
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
		{"allowed_prefix", "User-agent: *\nDisallow: /x\nAllowed: /x/y\n", "/x/y", true},
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

// TestRobotsGroupEnds: any record other than User-agent that Google's
// parser reads (an unknown name, Sitemap, Crawl-delay, a two-word line
// without a colon) ends the run of User-agent lines; lines it cannot read
// (three words, an empty name) do not.
func TestRobotsGroupEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, between string
		split         bool
	}{
		{"unknown_directive", "Foo: bar", true},
		{"sitemap", "Sitemap: https://e.example/s.xml", true},
		{"crawl_delay", "Crawl-delay: 5", true},
		{"nonstandard", "Host: e.example", true},
		{"two_words_no_colon", "garbled line", true},
		{"three_words", "this is garbage", false},
		{"one_word", "garbage", false},
		{"empty_name", ": /x", false},
		{"comment", "# note", false},
		{"blank", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := "User-agent: LektaBot\n" + tc.between + "\nUser-agent: OtherBot\nDisallow: /x\n"
			r := ParseRobots([]byte(body))
			d := r.Decide("LektaBot", "/x")
			// Split: LektaBot's own group has no rules, so /x is allowed
			// (as for Googlebot); merged: the Disallow applies to both.
			if d.Allowed != tc.split {
				t.Errorf("Decide = %+v, want allowed=%v", d, tc.split)
			}
			broke := slices.ContainsFunc(r.Issues(), func(is RobotsIssue) bool { return is.Code == IssueGroupBreak })
			if broke != tc.split {
				t.Errorf("group_break issue = %v, want %v: %v", broke, tc.split, r.Issues())
			}
		})
	}
	// A record after the rules started does not split anything.
	r := ParseRobots([]byte("User-agent: LektaBot\nDisallow: /x\nSitemap: https://e.example/s.xml\nDisallow: /y\n"))
	if d := r.Decide("LektaBot", "/y"); d.Allowed {
		t.Errorf("rule after a Sitemap line: %+v, want disallowed", d)
	}
	if slices.ContainsFunc(r.Issues(), func(is RobotsIssue) bool { return is.Code == IssueGroupBreak }) {
		t.Errorf("group_break for a Sitemap between rules: %v", r.Issues())
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
