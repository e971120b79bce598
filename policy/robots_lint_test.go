package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lintWant is an expected issue: "line:severity:code".
func lintKeys(issues []RobotsIssue) []string {
	keys := make([]string, len(issues))
	for i, is := range issues {
		keys[i] = fmt.Sprintf("%d:%s:%s", is.Line, is.Severity, is.Code)
	}
	return keys
}

func TestRobotsLint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []string // "line:severity:code" in order
	}{
		{"clean", "User-agent: *\nDisallow: /private\nAllow: /private/open\nSitemap: https://e.example/s.xml\n", nil},
		{"clean_rfc_example_except_empty_group", rfcExample, []string{"15:info:empty_group"}},
		{"unknown_directive", "User-agent: *\nDisallow: /x\nFoo: bar\n", []string{"3:error:unknown_directive"}},
		{"not_a_record", "User-agent: *\nDisallow: /x\nhello there world\njustaword\n",
			[]string{"3:error:syntax", "4:error:syntax"}},
		{"empty_name", "User-agent: *\n: /x\n", []string{"2:error:syntax", "1:info:empty_group"}},
		{"rule_outside_group", "Allow: /a\nDisallow: /b\nUser-agent: *\nDisallow: /c\n",
			[]string{"1:error:rule_outside_group", "2:error:rule_outside_group"}},
		{"pattern_without_slash", "User-agent: *\nDisallow: private\nAllow: ?q=1\n",
			[]string{"2:error:bad_pattern", "3:error:bad_pattern"}},
		{"dollar_not_at_end", "User-agent: *\nDisallow: /a$b\nDisallow: /$\nDisallow: /$$\n",
			[]string{"2:error:dollar_not_at_end", "4:error:dollar_not_at_end"}},
		{"invalid_sitemap", "Sitemap: /sitemap.xml\nSitemap: ftp://e.example/s.xml\nSitemap: https:///s.xml\nSitemap:\nSitemap: https://e.example/ok.xml\n",
			[]string{"1:error:invalid_sitemap", "2:error:invalid_sitemap", "3:error:invalid_sitemap", "4:error:invalid_sitemap"}},
		{"crawl_delay", "User-agent: *\nCrawl-delay: 2.5\nCrawl-delay: soon\nCrawl-delay: -1\nDisallow: /x\n",
			[]string{"2:info:nonstandard_directive", "3:warning:bad_crawl_delay", "4:warning:bad_crawl_delay"}},
		{"nonstandard", "Host: e.example\nUser-agent: *\nNoindex: /x\nDisallow: /y\n",
			[]string{"1:info:nonstandard_directive", "3:info:nonstandard_directive"}},
		{"empty_rules", "User-agent: *\nDisallow:\nAllow:\n",
			[]string{"2:info:empty_rule", "3:warning:empty_rule"}},
		{"user_agent_values", "User-agent:\nUser-agent: LektaBot/0.1\nUser-agent: */1\nUser-agent: * extra\nUser-agent: 42bot\nDisallow: /x\n",
			[]string{"1:error:empty_user_agent", "2:warning:user_agent_not_token", "3:warning:user_agent_not_token",
				"4:warning:user_agent_not_token", "5:warning:user_agent_not_token"}},
		{"empty_group", "User-agent: a\nDisallow: /\nUser-agent: LektaBot\n# nothing\n",
			[]string{"3:info:empty_group"}},
		{"misspelled_and_missing_colon", "useragent *\nDissallow: /x\nDisallow /y\n",
			[]string{"1:error:misspelled_directive", "1:error:missing_colon", "2:error:misspelled_directive", "3:error:missing_colon"}},
		{"byte_order_mark", "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n", []string{"1:info:byte_order_mark"}},
		{"partial_byte_order_mark", "\xEFUser-agent: *\nDisallow: /x\n", []string{"1:warning:byte_order_mark"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := ParseRobots([]byte(tc.body))
			got := lintKeys(r.Issues())
			want := tc.want
			slices.SortStableFunc(want, func(a, b string) int { return lineOf(a) - lineOf(b) })
			if !slices.Equal(got, want) {
				t.Errorf("issues = %q, want %q\n%v", got, want, r.Issues())
			}
			hasErr := slices.ContainsFunc(want, func(k string) bool { return strings.Contains(k, ":error:") })
			if r.HasErrors() != hasErr {
				t.Errorf("HasErrors() = %v, want %v", r.HasErrors(), hasErr)
			}
		})
	}
}

func lineOf(key string) int {
	var n int
	fmt.Sscanf(key, "%d:", &n)
	return n
}

// TestRobotsLintMessages pins the wording operators read, on the messy fixture.
func TestRobotsLintMessages(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("testdata", "robots", "messy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, is := range ParseRobots(body).Issues() {
		got = append(got, is.String())
	}
	want := []string{
		`1: error: Disallow before the first User-agent line belongs to no group; ignored`,
		`4: error: Disallow pattern "private-too" starts with neither '/' nor '*'; it never matches`,
		`5: error: '$' anchors the end only as the last character; here it matches a literal '$'`,
		`6: warning: Crawl-delay "fast" is not a number of seconds; ignored`,
		`7: info: Noindex is not part of RFC 9309; LektaBot ignores it`,
		`8: error: Sitemap "/sitemap.xml" is not an absolute http(s) URL; ignored`,
		`10: error: unknown directive "Foo" is ignored`,
		`11: error: "this line is garbage" is not a "name: value" record; ignored`,
		`13: warning: User-agent "LektaBot/0.1" is read as the product token "LektaBot"; write only the token`,
		`14: error: "Dissallow" is not a name RFC 9309 defines, but Google's parser reads it as Disallow, so LektaBot obeys it too; spell it "Disallow"`,
		`14: error: no ':' after "Dissallow": RFC 9309 ignores the line, Google's parser reads it as "Disallow: /tmp/", so LektaBot obeys it too; add the colon`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("messy.txt issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRobotsLintReadings: the lint names where Google's parser and RFC
// 9309 read a line differently (group_continues, long_line, nul_byte,
// unusual_blank), and grades as errors what Lighthouse's robots-txt audit
// reports as errors (an unknown name, a misspelling, a missing colon, '$'
// inside a pattern, an empty User-agent), while Content-Signal is accepted.
func TestRobotsLintReadings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"group_continues", "User-agent: a\nSitemap: https://e.example/s.xml\nUser-agent: b\nDisallow: /x\n",
			[]string{"2:warning:group_continues"}},
		{"group_continues_unknown", "User-agent: a\nFoo: bar\nCrawl-delay: 1\nUser-agent: b\nDisallow: /x\n",
			[]string{"2:error:unknown_directive", "2:warning:group_continues", "3:info:nonstandard_directive"}},
		{"long_line", "User-agent: *\nDisallow: /" + strings.Repeat("a", 17000) + "\n", []string{"2:warning:long_line"}},
		{"nul_byte", "User-agent: *\nDisallow: /a\x00b\n", []string{"2:warning:nul_byte"}},
		{"vertical_tab", "User-agent: *\nDisallow:\v/x\n", []string{"2:warning:unusual_blank"}},
		{"no_break_space", "User-agent: *\nDisallow: /x\u00a0\n", []string{"2:warning:unusual_blank"}},
		{"lighthouse_errors", "user-agent: *\nallow: /\ndisallow: /test\n\nuser agent: wrong\nalow: /wrong\ndisallow /wrong\n",
			[]string{"5:error:misspelled_directive", "6:error:unknown_directive", "7:error:missing_colon"}},
		{"lighthouse_dollar", "user-agent: *\nallow: /dolar/sign$in/the/middle\n", []string{"2:error:dollar_not_at_end"}},
		{"lighthouse_empty_agent", "User-agent:\nDisallow: /\n", []string{"1:error:empty_user_agent"}},
		{"content_signal", "User-agent: RespectfulAI\nContent-Signal: ai-train=yes, search=yes, ai-input=yes\n",
			[]string{"1:info:empty_group", "2:info:nonstandard_directive"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := ParseRobots([]byte(tc.body))
			got := lintKeys(r.Issues())
			want := slices.Clone(tc.want)
			slices.SortStableFunc(want, func(a, b string) int { return lineOf(a) - lineOf(b) })
			if !slices.Equal(got, want) {
				t.Errorf("issues = %q, want %q\n%v", got, want, r.Issues())
			}
		})
	}
}
