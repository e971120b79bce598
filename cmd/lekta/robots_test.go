package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRobots writes body to a temporary robots.txt and returns its path.
func writeRobots(tb testing.TB, body string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// robotsRun runs "lekta robots ARGS" and returns the exit status and output.
func robotsRun(tb testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	err := runRobotsIO(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	code = exitCode(err, &errOut)
	return code, out.String(), errOut.String()
}

const shopRobots = `# shop.example
User-agent: *
Disallow: /cart
Allow: /cart/share$

User-agent: LektaBot
Disallow: /private
Allow: /private/open
`

func TestRobotsCheck(t *testing.T) {
	t.Parallel()
	file := writeRobots(t, shopRobots)
	tests := []struct {
		name   string
		agent  string
		url    string
		code   int
		stdout string
	}{
		{"disallowed_by_own_group", "LektaBot", "https://shop.example/private/x?y=1", exitFailure,
			"disallowed: LektaBot /private/x?y=1\ngroup: User-agent: LektaBot (line 6)\nrule:  Disallow: /private (line 7)\n"},
		{"allowed_by_longer_allow", "lektabot", "/private/open/a", exitOK,
			"allowed: lektabot /private/open/a\ngroup: User-agent: LektaBot (line 6)\nrule:  Allow: /private/open (line 8)\n"},
		{"own_group_not_star", "LektaBot", "/cart", exitOK,
			"allowed: LektaBot /cart\ngroup: User-agent: LektaBot (line 6)\nrule:  none matches, so the path is allowed\n"},
		{"star_group", "OtherBot", "http://shop.example/cart/1", exitFailure,
			"disallowed: OtherBot /cart/1\ngroup: User-agent: * (line 2)\nrule:  Disallow: /cart (line 3)\n"},
		{"star_group_end_anchor", "OtherBot", "http://shop.example/cart/share", exitOK,
			"allowed: OtherBot /cart/share\ngroup: User-agent: * (line 2)\nrule:  Allow: /cart/share$ (line 4)\n"},
		{"robots_txt", "OtherBot", "/robots.txt", exitOK,
			"allowed: OtherBot /robots.txt\ngroup: none needed\nrule:  /robots.txt is always allowed (RFC 9309 section 2.2.2)\n"},
		{"empty_path", "OtherBot", "https://shop.example", exitOK,
			"allowed: OtherBot /\ngroup: User-agent: * (line 2)\nrule:  none matches, so the path is allowed\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := robotsRun(t, "", "check", file, tc.agent, tc.url)
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s\nstderr: %s", code, stdout, tc.code, tc.stdout, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr %q, want nothing for a clean file", stderr)
			}
		})
	}
}

func TestRobotsCheckNoGroup(t *testing.T) {
	t.Parallel()
	file := writeRobots(t, "User-agent: OtherBot\nDisallow: /\n")
	code, stdout, _ := robotsRun(t, "", "check", file, "LektaBot", "/x")
	want := "allowed: LektaBot /x\ngroup: none names LektaBot and there is no \"*\" group, so no rules apply\n" +
		"rule:  none matches, so the path is allowed\n"
	if code != exitOK || stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 0, stdout:\n%s", code, stdout, want)
	}
}

// TestRobotsCheckGoogleInputs: a fragment is ignored, whatever it holds, and
// a product token Google accepts but RFC 9309 does not is checked with a
// warning.
func TestRobotsCheckGoogleInputs(t *testing.T) {
	t.Parallel()
	file := writeRobots(t, shopRobots+"\nUser-agent: archive.org_bot\nDisallow: /\n")
	tests := []struct {
		name, agent, url string
		code             int
		stdout, stderr   string
	}{
		{"fragment", "LektaBot", "https://shop.example/private/x#top", exitFailure,
			"disallowed: LektaBot /private/x\ngroup: User-agent: LektaBot (line 6)\nrule:  Disallow: /private (line 7)\n", ""},
		{"fragment_with_bad_escape", "LektaBot", "/private/open#%zz", exitOK,
			"allowed: LektaBot /private/open\ngroup: User-agent: LektaBot (line 6)\nrule:  Allow: /private/open (line 8)\n", ""},
		{"non_rfc_token", "archive.org_bot", "/index.html", exitFailure,
			"disallowed: archive.org_bot /index.html\ngroup: User-agent: archive.org_bot (line 10)\nrule:  Disallow: / (line 11)\n",
			"warning: \"archive.org_bot\" is not an RFC 9309 product token (only letters, '_' and '-'); groups that name it as written apply to it\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := robotsRun(t, "", "check", file, tc.agent, tc.url)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr: %q\nwant exit %d, stdout:\n%s\nstderr: %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestRobotsCheckAsSent: the URL is decided as it is sent, however it was
// typed, and the path printed is the one sent.
func TestRobotsCheckAsSent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, robots, url string
		code              int
		first             string
	}{
		{"raw non-ASCII beside an escape", "User-agent: *\nDisallow: /café/x=y\n", "http://example.com/café/x%3Dy", exitOK,
			"allowed: LektaBot /caf%C3%A9/x%3Dy"},
		{"the same request escaped", "User-agent: *\nDisallow: /café/x=y\n", "http://example.com/caf%C3%A9/x%3Dy", exitOK,
			"allowed: LektaBot /caf%C3%A9/x%3Dy"},
		{"raw | in a rule only Google reads", "User-agent: *\nDisalow: /a|b\n", "/a|b", exitFailure,
			"disallowed: LektaBot /a%7Cb"},
		{"the same request escaped, same answer", "User-agent: *\nDisalow: /a|b\n", "/a%7Cb", exitFailure,
			"disallowed: LektaBot /a%7Cb"},
		{"lower-case escape kept as sent", "User-agent: *\nDisallow: /\nAllow: /%E3%83%84/\n", "/%e3%83%84/ü", exitFailure,
			"disallowed: LektaBot /%e3%83%84/%C3%BC"},
		{"upper-case escape", "User-agent: *\nDisallow: /\nAllow: /%E3%83%84/\n", "/%E3%83%84/ü", exitOK,
			"allowed: LektaBot /%E3%83%84/%C3%BC"},
		{"dot segments removed", "User-agent: *\nDisallow: /private\n", "/public/../private/x", exitFailure,
			"disallowed: LektaBot /private/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := robotsRun(t, "", "check", writeRobots(t, tc.robots), "LektaBot", tc.url)
			first, _, _ := strings.Cut(stdout, "\n")
			if code != tc.code || first != tc.first {
				t.Errorf("exit %d, first line %q, want exit %d, %q\nstdout: %s\nstderr: %s", code, first, tc.code, tc.first, stdout, stderr)
			}
		})
	}
}

func TestRobotsCheckBadInput(t *testing.T) {
	t.Parallel()
	file := writeRobots(t, shopRobots)
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"missing_file", []string{"check", filepath.Join(t.TempDir(), "nope.txt"), "LektaBot", "/"}, "no such file"},
		{"directory", []string{"check", t.TempDir(), "LektaBot", "/"}, "is a directory"},
		{"agent_with_version", []string{"check", file, "LektaBot/0.1", "/"}, "invalid product token"},
		{"agent_star", []string{"check", file, "*", "/"}, "invalid product token"},
		{"url_ftp", []string{"check", file, "LektaBot", "ftp://shop.example/x"}, "not an absolute http(s) URL"},
		{"url_relative", []string{"check", file, "LektaBot", "cart"}, "neither an absolute http(s) URL nor a path"},
		{"url_no_scheme_host", []string{"check", file, "LektaBot", "//shop.example/cart"}, "neither an absolute http(s) URL nor a path"},
		{"url_unparsable", []string{"check", file, "LektaBot", "http://shop.example/%zz"}, "invalid URL"},
		{"too_few_args", []string{"check", file, "LektaBot"}, "want FILE AGENT URL"},
		{"lint_too_many_args", []string{"lint", file, "x"}, "want FILE"},
		{"unknown_command", []string{"fetch", "https://shop.example"}, "unknown command"},
		{"no_command", nil, "usage: lekta robots"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := robotsRun(t, "", tc.args...)
			if code != exitBadInput || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

func TestRobotsLint(t *testing.T) {
	t.Parallel()
	messy, err := os.ReadFile(filepath.Join("..", "..", "policy", "testdata", "robots", "messy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		body   string
		code   int
		stdout string
	}{
		{"clean", shopRobots, exitOK, "0 error(s), 0 warning(s), 0 info\n"},
		{"warnings_only", "User-agent: *\nCrawl-delay: soon\nDisallow: /x\nDisallow:\n", exitOK,
			"2: warning: Crawl-delay \"soon\" is not a number of seconds; ignored\n" +
				"4: info: empty Disallow matches nothing; it disallows nothing\n" +
				"0 error(s), 1 warning(s), 1 info\n"},
		{"errors", "Disallow: /x\nUser-agent: *\nDisallow: x\n", exitFailure,
			"1: error: Disallow before the first User-agent line belongs to no group; ignored\n" +
				"3: error: Disallow pattern \"x\" starts with neither '/' nor '*'; it never matches\n" +
				"2 error(s), 0 warning(s), 0 info\n"},
		{"messy_fixture", string(messy), exitFailure, "" +
			"1: error: Disallow before the first User-agent line belongs to no group; ignored\n" +
			"4: error: Disallow pattern \"private-too\" starts with neither '/' nor '*'; it never matches\n" +
			"5: error: '$' anchors the end only as the last character; here it matches a literal '$'\n" +
			"6: warning: Crawl-delay \"fast\" is not a number of seconds; ignored\n" +
			"7: info: Noindex is not part of RFC 9309; LektaBot ignores it\n" +
			"8: error: Sitemap \"/sitemap.xml\" is not an absolute http(s) URL; ignored\n" +
			"10: error: unknown directive \"Foo\" is ignored\n" +
			"11: error: \"this line is garbage\" is not a \"name: value\" record; ignored\n" +
			"13: warning: User-agent \"LektaBot/0.1\" is read as the product token \"LektaBot\"; write only the token\n" +
			"14: error: \"Dissallow\" is not a name RFC 9309 defines, but Google's parser reads it as Disallow, so LektaBot obeys it too; spell it \"Disallow\"\n" +
			"14: error: no ':' after \"Dissallow\": RFC 9309 ignores the line, Google's parser reads it as \"Disallow: /tmp/\", so LektaBot obeys it too; add the colon\n" +
			"8 error(s), 2 warning(s), 1 info\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := robotsRun(t, "", "lint", writeRobots(t, tc.body))
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s\nstderr: %s", code, stdout, tc.code, tc.stdout, stderr)
			}
		})
	}
}

// TestRobotsCheckReadings: check says when only one reading of the file,
// Google's or RFC 9309's, disallows (the stricter answer holds), and when
// the answer covers only the first 500 KiB.
func TestRobotsCheckReadings(t *testing.T) {
	t.Parallel()
	big := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# filler\n", 60000) + "Disallow: /late\n"
	tests := []struct {
		name, body, url string
		code            int
		stdout          string
	}{
		{"google_only", "User-agent: LektaBot\nSitemap: https://e.example/s.xml\nUser-agent: OtherBot\nDisallow:\v/x\n", "/x", exitFailure,
			"disallowed: LektaBot /x\ngroup: User-agent: LektaBot, User-agent: OtherBot (line 1)\nrule:  \"Disallow:\\v/x\" (line 4)\n" +
				"reading: only Google's parser disallows it (RFC 9309 as written would allow it); LektaBot obeys the stricter reading\n"},
		{"rfc_only", "User-agent: *\nDisallow: /%7Ea\n", "/~a", exitFailure,
			"disallowed: LektaBot /~a\ngroup: User-agent: * (line 1)\nrule:  Disallow: /%7Ea (line 2)\n" +
				"reading: only RFC 9309 disallows it (Google's parser would allow it); LektaBot obeys the stricter reading\n"},
		{"partial", big, "/late", exitOK,
			"allowed: LektaBot /late\ngroup: User-agent: * (line 1)\nrule:  none matches, so the path is allowed\n" +
				"note:  robots.txt is larger than 512000 bytes; this answer covers only that much of it, all LektaBot reads\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := robotsRun(t, "", "check", writeRobots(t, tc.body), "LektaBot", tc.url)
			if code != tc.code || stdout != tc.stdout {
				t.Errorf("exit %d, stdout:\n%q\nwant exit %d, stdout:\n%q\nstderr: %s", code, stdout, tc.code, tc.stdout, stderr)
			}
		})
	}
}

func TestRobotsStdin(t *testing.T) {
	t.Parallel()
	code, stdout, _ := robotsRun(t, shopRobots, "check", "-", "LektaBot", "/private")
	if code != exitFailure || !strings.HasPrefix(stdout, "disallowed: LektaBot /private\n") {
		t.Errorf("check -: exit %d, stdout %q", code, stdout)
	}
	code, stdout, _ = robotsRun(t, "Allow: /\n", "lint", "-")
	if code != exitFailure || !strings.HasPrefix(stdout, "1: error: Allow before the first User-agent") {
		t.Errorf("lint -: exit %d, stdout %q", code, stdout)
	}
}

func TestRobotsCheckNotesLintErrors(t *testing.T) {
	t.Parallel()
	file := writeRobots(t, "Disallow: /x\nUser-agent: *\nDisallow: /y\n")
	code, _, stderr := robotsRun(t, "", "check", file, "LektaBot", "/y")
	if code != exitFailure || !strings.Contains(stderr, "has 1 lint error(s)") {
		t.Errorf("exit %d, stderr %q; want 1 and a note about the lint error", code, stderr)
	}
}

// TestRunRobots goes through run, as main does.
func TestRunRobots(t *testing.T) {
	t.Parallel()
	file := writeRobots(t, shopRobots)
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"robots", "check", file, "LektaBot", "/private"},
		func(string) string { return "" }, &stdout, io.Discard)
	if code := exitCode(err, io.Discard); code != exitFailure || !strings.HasPrefix(stdout.String(), "disallowed:") {
		t.Errorf("run robots check: exit %d, stdout %q", code, stdout.String())
	}
	stdout.Reset()
	err = run(context.Background(), []string{"robots", "help"}, func(string) string { return "" }, &stdout, io.Discard)
	if err != nil || !strings.Contains(stdout.String(), "lekta robots check FILE AGENT URL") {
		t.Errorf("run robots help: %v, stdout %q", err, stdout.String())
	}
}
