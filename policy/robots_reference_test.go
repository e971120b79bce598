package policy

import (
	"fmt"
	"testing"
)

// referenceCase is one expectation of google/robotstxt's robots_test.cc
// (the TEST it comes from in test), ported: google is what that test
// expects of Google's matcher, rfc what RFC 9309 as written answers
// (worked out by hand), and LektaBot must answer the stricter of the two.
type referenceCase struct {
	test   string
	body   string
	agent  string
	url    string
	google bool
	rfc    bool
}

const (
	refFooDisallowAll = "user-agent: FooBot\ndisallow: /\n"
	refGroups         = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: BarBot\n" +
		"disallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n"
	refUACase       = "User-Agent: %s\nAllow: /x/\nDisallow: /\n"
	refNamesCase    = "%s: FooBot\n%s: /x/\n%s: /\n"
	refFirstSpace   = "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n"
	refGlobal       = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n"
	refOnlySpecific = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n"
	refIndexHTML    = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n"
)

// referenceCases are the parsing and matching cases of robots_test.cc.
func referenceCases() []referenceCase {
	both := func(test, body, agent, url string, allowed bool) referenceCase {
		return referenceCase{test, body, agent, url, allowed, allowed}
	}
	cases := []referenceCase{
		both("GoogleOnly_SystemTest", "", "FooBot", "", true),
		both("GoogleOnly_SystemTest", refFooDisallowAll, "", "", true),
		both("GoogleOnly_SystemTest", refFooDisallowAll, "FooBot", "", false),
		both("GoogleOnly_SystemTest", "", "", "", true),
		both("ID_LineSyntax_Line", refFooDisallowAll, "FooBot", "http://foo.bar/x/y", false),
		both("ID_LineSyntax_Line", "foo: FooBot\nbar: /\n", "FooBot", "http://foo.bar/x/y", true),
		// Google accepts the missing colon; RFC 9309 does not read the lines.
		{"ID_LineSyntax_Line", "user-agent FooBot\ndisallow /\n", "FooBot", "http://foo.bar/x/y", false, true},
		both("ID_LineSyntax_Groups", refGroups, "FooBot", "http://foo.bar/x/b", true),
		both("ID_LineSyntax_Groups", refGroups, "FooBot", "http://foo.bar/z/d", true),
		both("ID_LineSyntax_Groups", refGroups, "FooBot", "http://foo.bar/y/c", false),
		both("ID_LineSyntax_Groups", refGroups, "BarBot", "http://foo.bar/y/c", true),
		both("ID_LineSyntax_Groups", refGroups, "BarBot", "http://foo.bar/w/a", true),
		both("ID_LineSyntax_Groups", refGroups, "BarBot", "http://foo.bar/z/d", false),
		both("ID_LineSyntax_Groups", refGroups, "BazBot", "http://foo.bar/z/d", true),
		both("ID_LineSyntax_Groups", refGroups, "FooBot", "http://foo.bar/foo/bar/", false),
		both("ID_LineSyntax_Groups", refGroups, "BarBot", "http://foo.bar/foo/bar/", false),
		both("ID_LineSyntax_Groups", refGroups, "BazBot", "http://foo.bar/foo/bar/", false),
		// RFC 9309 §2.2.4: other records "MUST NOT terminate a group".
		both("ID_LineSyntax_Groups_OtherRules", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "FooBot", "http://foo.bar/", false),
		both("ID_LineSyntax_Groups_OtherRules", "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n", "BarBot", "http://foo.bar/", false),
		both("ID_LineSyntax_Groups_OtherRules", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "FooBot", "http://foo.bar/", false),
		both("ID_LineSyntax_Groups_OtherRules", "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n", "BarBot", "http://foo.bar/", false),
	}
	for _, names := range [][3]string{{"USER-AGENT", "ALLOW", "DISALLOW"}, {"user-agent", "allow", "disallow"}, {"uSeR-aGeNt", "AlLoW", "dIsAlLoW"}} {
		body := fmt.Sprintf(refNamesCase, names[0], names[1], names[2])
		cases = append(cases,
			both("ID_REPLineNamesCaseInsensitive", body, "FooBot", "http://foo.bar/x/y", true),
			both("ID_REPLineNamesCaseInsensitive", body, "FooBot", "http://foo.bar/a/b", false))
	}
	for _, ua := range []string{"FOO BAR", "foo bar", "FoO bAr"} {
		body := fmt.Sprintf(refUACase, ua)
		for _, agent := range []string{"Foo", "foo"} {
			cases = append(cases,
				both("ID_UserAgentValueCaseInsensitive", body, agent, "http://foo.bar/x/y", true),
				both("ID_UserAgentValueCaseInsensitive", body, agent, "http://foo.bar/a/b", false))
		}
	}
	cases = append(cases,
		both("GoogleOnly_AcceptUserAgentUpToFirstSpace", refFirstSpace, "Foo", "http://foo.bar/x/y", true),
		both("GoogleOnly_AcceptUserAgentUpToFirstSpace", refFirstSpace, "Foo Bar", "http://foo.bar/x/y", false),
		both("ID_GlobalGroups_Secondary", "", "FooBot", "http://foo.bar/x/y", true),
		both("ID_GlobalGroups_Secondary", refGlobal, "FooBot", "http://foo.bar/x/y", false),
		both("ID_GlobalGroups_Secondary", refGlobal, "BarBot", "http://foo.bar/x/y", true),
		both("ID_GlobalGroups_Secondary", refOnlySpecific, "QuxBot", "http://foo.bar/x/y", true),
		both("ID_AllowDisallow_Value_CaseSensitive", "user-agent: FooBot\ndisallow: /x/\n", "FooBot", "http://foo.bar/x/y", false),
		both("ID_AllowDisallow_Value_CaseSensitive", "user-agent: FooBot\ndisallow: /X/\n", "FooBot", "http://foo.bar/x/y", true),
	)
	cases = append(cases, longestMatchCases()...)
	cases = append(cases, encodingCases()...)
	cases = append(cases, specialCharacterCases()...)
	cases = append(cases,
		// Google's Allow of index.html allows its directory; RFC 9309 has no such rewrite.
		referenceCase{"GoogleOnly_IndexHTMLisDirectory", refIndexHTML, "foobot", "http://foo.com/allowed-slash/", true, false},
		both("GoogleOnly_IndexHTMLisDirectory", refIndexHTML, "foobot", "http://foo.com/allowed-slash/index.htm", false),
		both("GoogleOnly_IndexHTMLisDirectory", refIndexHTML, "foobot", "http://foo.com/allowed-slash/index.html", true),
		both("GoogleOnly_IndexHTMLisDirectory", refIndexHTML, "foobot", "http://foo.com/anyother-url", false),
	)
	cases = append(cases, lineTooLongCases()...)
	cases = append(cases, documentationCases()...)
	return cases
}

func longestMatchCases() []referenceCase {
	const url = "http://foo.bar/x/page.html"
	c := func(body, url string, allowed bool) referenceCase {
		return referenceCase{"ID_LongestMatch", "user-agent: FooBot\n" + body, "FooBot", url, allowed, allowed}
	}
	return []referenceCase{
		c("disallow: /x/page.html\nallow: /x/\n", url, false),
		c("allow: /x/page.html\ndisallow: /x/\n", url, true),
		c("allow: /x/page.html\ndisallow: /x/\n", "http://foo.bar/x/", false),
		c("disallow: \nallow: \n", url, true),
		c("disallow: /\nallow: /\n", url, true),
		c("disallow: /x\nallow: /x/\n", "http://foo.bar/x", false),
		c("disallow: /x\nallow: /x/\n", "http://foo.bar/x/", true),
		c("disallow: /x/page.html\nallow: /x/page.html\n", url, true),
		c("allow: /page\ndisallow: /*.html\n", "http://foo.bar/page.html", false),
		c("allow: /page\ndisallow: /*.html\n", "http://foo.bar/page", true),
		c("allow: /x/page.\ndisallow: /*.html\n", url, true),
		c("allow: /x/page.\ndisallow: /*.html\n", "http://foo.bar/x/y.html", false),
		{"ID_LongestMatch", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/x/page", true, true},
		{"ID_LongestMatch", "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n", "FooBot", "http://foo.bar/y/page", false, false},
	}
}

func encodingCases() []referenceCase {
	const t = "ID_Encoding"
	head := "User-agent: FooBot\nDisallow: /\n"
	return []referenceCase{
		{t, head + "Allow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par", true, true},
		{t, head + "Allow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true, true},
		// The URL is not %-encoded: Google compares the raw bytes, RFC 9309
		// encodes them first.
		{t, head + "Allow: /foo/bar/ツ\n", "FooBot", "http://foo.bar/foo/bar/ツ", false, true},
		{t, head + "Allow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/%E3%83%84", true, true},
		{t, head + "Allow: /foo/bar/%E3%83%84\n", "FooBot", "http://foo.bar/foo/bar/ツ", false, true},
		// Escaped unreserved characters: Google compares them as written,
		// RFC 9309 decodes them.
		{t, head + "Allow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/baz", false, true},
		{t, head + "Allow: /foo/bar/%62%61%7A\n", "FooBot", "http://foo.bar/foo/bar/%62%61%7A", true, true},
	}
}

func specialCharacterCases() []referenceCase {
	c := func(body, path string, allowed bool) referenceCase {
		return referenceCase{"ID_SpecialCharacters", "User-agent: FooBot\n" + body, "FooBot", "http://foo.bar" + path, allowed, allowed}
	}
	const star, dollar, hash = "Disallow: /foo/bar/quz\nAllow: /foo/*/qux\n", "Disallow: /foo/bar$\nAllow: /foo/bar/qux\n", "# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n"
	return []referenceCase{
		c(star, "/foo/bar/quz", false), c(star, "/foo/quz", true), c(star, "/foo//quz", true), c(star, "/foo/bax/quz", true),
		c(dollar, "/foo/bar", false), c(dollar, "/foo/bar/qux", true), c(dollar, "/foo/bar/", true), c(dollar, "/foo/bar/baz", true),
		c(hash, "/foo/bar", true), c(hash, "/foo/quz", false),
	}
}

// lineTooLongCases: Google keeps the first 8 × 2083 − 1 bytes of a line,
// so a cut Disallow matches more and a cut Allow too; RFC 9309 reads the
// whole line.
func lineTooLongCases() []referenceCase {
	const t, maxLine = "GoogleOnly_LineTooLong", 2083 * 8
	// As robots_test.cc builds it: "/x/" and fill up to
	// kMaxLineLen - len("/x/") - len(prefix) + len("\n") bytes.
	long := func(prefix, fill string) string {
		s := "/x/"
		for len(s) < maxLine-3-len(prefix)+1 {
			s += fill
		}
		return s
	}
	ld := long("disallow: ", "a")
	disallowCut := "user-agent: FooBot\ndisallow: " + ld + "/qux\n"
	la, lb := long("allow: ", "a"), long("allow: ", "b")
	allowCut := "user-agent: FooBot\ndisallow: /\nallow: " + la + "/qux\nallow: " + lb + "/qux\n"
	return []referenceCase{
		{t, disallowCut, "FooBot", "http://foo.bar/fux", true, true},
		{t, disallowCut, "FooBot", "http://foo.bar" + ld + "/fux", false, true},
		{t, allowCut, "FooBot", "http://foo.bar/", false, false},
		{t, allowCut, "FooBot", "http://foo.bar" + la + "/qux", true, true},
		{t, allowCut, "FooBot", "http://foo.bar" + lb + "/fux", true, false},
	}
}

// documentationCases are GoogleOnly_DocumentationChecks, from Google's
// robots.txt documentation; RFC 9309 answers the same on every one.
func documentationCases() []referenceCase {
	var cases []referenceCase
	add := func(allow string, yes, no []string) {
		body := "user-agent: FooBot\ndisallow: /\nallow: " + allow + "\n"
		for _, p := range yes {
			cases = append(cases, referenceCase{"GoogleOnly_DocumentationChecks", body, "FooBot", "http://foo.bar" + p, true, true})
		}
		for _, p := range append([]string{"/bar"}, no...) {
			cases = append(cases, referenceCase{"GoogleOnly_DocumentationChecks", body, "FooBot", "http://foo.bar" + p, false, false})
		}
	}
	fish := []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.html?id=anything"}
	add("/fish", fish, []string{"/Fish.asp", "/catfish", "/?id=fish"})
	add("/fish*", fish, []string{"/Fish.bar", "/catfish", "/?id=fish"})
	add("/fish/", []string{"/fish/", "/fish/salmon", "/fish/?salmon", "/fish/salmon.html", "/fish/?id=anything"},
		[]string{"/fish", "/fish.html", "/Fish/Salmon.html"})
	add("/*.php", []string{"/filename.php", "/folder/filename.php", "/folder/filename.php?parameters",
		"//folder/any.php.file.html", "/filename.php/", "/index?f=filename.php/"},
		[]string{"/php/", "/index?php", "/windows.PHP"})
	add("/*.php$", []string{"/filename.php", "/folder/filename.php"},
		[]string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/php/", "/filename?php", "/aaaphpaaa", "//windows.PHP"})
	add("/fish*.php", []string{"/fish.php", "/fishheads/catfish.php?parameters"}, []string{"/Fish.PHP"})
	order := func(body, url string, allowed bool) {
		cases = append(cases, referenceCase{"GoogleOnly_DocumentationChecks", "user-agent: FooBot\n" + body, "FooBot", url, allowed, allowed})
	}
	order("allow: /p\ndisallow: /\n", "http://example.com/page", true)
	order("allow: /folder\ndisallow: /folder\n", "http://example.com/folder/page", true)
	order("allow: /page\ndisallow: /*.htm\n", "http://example.com/page.htm", false)
	order("allow: /$\ndisallow: /\n", "http://example.com/", true)
	order("allow: /$\ndisallow: /\n", "http://example.com/page.html", false)
	return cases
}

// TestRobotsReference runs the ported cases of robots_test.cc: the model
// of Google's matcher must give robots_test.cc's answer (so the model is
// faithful), and LektaBot must disallow whenever Google or RFC 9309 does;
// then the file-level checks and the model's helpers.
func TestRobotsReference(t *testing.T) {
	t.Parallel()
	t.Run("files", checkReferenceFiles)
	t.Run("TestGetPathParamsQuery_TestMaybeEscapePattern", checkModelHelpers)
	cases := referenceCases()
	if len(cases) < 100 {
		t.Fatalf("only %d reference cases", len(cases))
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.test, i), func(t *testing.T) {
			t.Parallel()
			if got := googleModelAllowed([]byte(tc.body), tc.agent, tc.url); got != tc.google {
				t.Errorf("model of Google's matcher: allowed = %v, robots_test.cc expects %v", got, tc.google)
			}
			// Google's matcher expects a %-encoded URL (robots.h); Lekta
			// decides on the request as Chromium sends it, so it is held to
			// Google's answer on that spelling: a raw "ツ" is sent escaped.
			path := gmPathParamsQuery(tc.url)
			google := tc.google
			if sent := SpellTarget(path); sent != path {
				google = googleModelAllowed([]byte(tc.body), tc.agent, "http://e.example"+sent)
			}
			want := google && tc.rfc
			if d := ParseRobots([]byte(tc.body)).Decide(tc.agent, path); d.Allowed != want {
				t.Errorf("Decide(%q, %.60q) = %+v, want allowed = %v (Google %v on the request as sent, RFC 9309 %v)",
					tc.agent, path, d, want, google, tc.rfc)
			}
		})
	}
}

// checkReferenceFiles ports the file-level checks of robots_test.cc: line
// counting over every kind of line end, the byte-order mark, Sitemap lines
// anywhere, and the tokens Google obeys.
func checkReferenceFiles(t *testing.T) {
	// ID_LinesNumbersAreCountedCorrectly: the Disallow is line 6 whatever the line ends.
	for name, body := range map[string]string{
		"unix":       "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
		"dos":        "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
		"mac":        "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
		"no_newline": "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
		"mixed":      "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
	} {
		r := ParseRobots([]byte(body))
		if d := r.Decide("bar", "/x"); d.Allowed || d.Line != 6 {
			t.Errorf("ID_LinesNumbersAreCountedCorrectly/%s: bar /x = %+v, want disallowed by line 6", name, d)
		}
		if d := r.Decide("foo", "/some/path"); !d.Allowed || d.Line != 2 {
			t.Errorf("ID_LinesNumbersAreCountedCorrectly/%s: foo /some/path = %+v, want allowed by line 2", name, d)
		}
	}
	// ID_UTF8ByteOrderMarkIsSkipped: a full or partial mark at the start is
	// skipped; a broken one, or one later in the file, spoils its line.
	for name, tc := range map[string]struct {
		body string
		read bool // the Allow line is read
	}{
		"full":      {"\xEF\xBB\xBFUser-Agent: foo\nAllow: /AnyValue\n", true},
		"partial_2": {"\xEF\xBBUser-Agent: foo\nAllow: /AnyValue\n", true},
		"partial_1": {"\xEFUser-Agent: foo\nAllow: /AnyValue\n", true},
		"broken":    {"\xEF\x11\xBFUser-Agent: foo\nAllow: /AnyValue\n", false},
		"middle":    {"User-Agent: foo\n\xEF\xBB\xBFAllow: /AnyValue\n", false},
	} {
		d := ParseRobots([]byte(tc.body)).Decide("foo", "/AnyValue")
		if read := d.Basis == BasisRule && d.Line == 2; read != tc.read || !d.Allowed {
			t.Errorf("ID_UTF8ByteOrderMarkIsSkipped/%s: %+v, want the Allow line read = %v", name, d, tc.read)
		}
	}
	// ID_NonStandardLineExample_Sitemap: a Sitemap line anywhere is read.
	group := "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n"
	for _, body := range []string{group + "Sitemap: http://foo.bar/sitemap.xml\n", "Sitemap: http://foo.bar/sitemap.xml\n" + group} {
		if got := ParseRobots([]byte(body)).Sitemaps(); len(got) != 1 || got[0] != "http://foo.bar/sitemap.xml" {
			t.Errorf("ID_NonStandardLineExample_Sitemap: Sitemaps() = %q", got)
		}
	}
	// ID_VerifyValidUserAgentsToObey: the tokens Google obeys are RFC 9309's.
	for token, ok := range map[string]bool{"Foobot": true, "Foobot-Bar": true, "Foo_Bar": true,
		"": false, "ツ": false, "Foobot*": false, " Foobot ": false, "Foobot/2.1": false, "Foobot Bar": false} {
		if got := ValidateToken(token) == nil; got != ok {
			t.Errorf("ID_VerifyValidUserAgentsToObey: ValidateToken(%q) ok = %v, want %v", token, got, ok)
		}
	}
}

// checkModelHelpers ports TestGetPathParamsQuery and TestMaybeEscapePattern
// to the model.
func checkModelHelpers(t *testing.T) {
	for url, want := range map[string]string{
		"": "/", "http://www.example.com": "/", "http://www.example.com/": "/", "http://www.example.com/a": "/a",
		"http://www.example.com/a/": "/a/", "http://www.example.com/a/b?c=http://d.e/": "/a/b?c=http://d.e/",
		"http://www.example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f", "example.com": "/", "example.com/": "/",
		"example.com/a": "/a", "example.com/a/": "/a/", "example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f",
		"a": "/", "a/": "/", "/a": "/a", "a/b": "/b", "example.com?a": "/?a", "example.com/a;b#c": "/a;b", "//a/b/c": "/b/c",
	} {
		if got := gmPathParamsQuery(url); got != want {
			t.Errorf("TestGetPathParamsQuery: %q -> %q, want %q", url, got, want)
		}
	}
	for in, want := range map[string]string{"http://www.example.com": "http://www.example.com", "/a/b/c": "/a/b/c", "á": "%C3%A1", "%aa": "%AA"} {
		if got := gmEscapePattern(in); got != want {
			t.Errorf("TestMaybeEscapePattern: model %q -> %q, want %q", in, got, want)
		}
	}
}
