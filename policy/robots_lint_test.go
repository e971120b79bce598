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
		{"unknown_directive", "User-agent: *\nDisallow: /x\nFoo: bar\n", []string{"3:warning:unknown_directive"}},
		{"not_a_record", "User-agent: *\nDisallow: /x\nhello there world\njustaword\n",
			[]string{"3:error:syntax", "4:error:syntax"}},
		{"empty_name", "User-agent: *\n: /x\n", []string{"2:error:syntax", "1:info:empty_group"}},
		{"rule_outside_group", "Allow: /a\nDisallow: /b\nUser-agent: *\nDisallow: /c\n",
			[]string{"1:error:rule_outside_group", "2:error:rule_outside_group"}},
		{"pattern_without_slash", "User-agent: *\nDisallow: private\nAllow: ?q=1\n",
			[]string{"2:error:bad_pattern", "3:error:bad_pattern"}},
		{"dollar_not_at_end", "User-agent: *\nDisallow: /a$b\nDisallow: /$\nDisallow: /$$\n",
			[]string{"2:warning:dollar_not_at_end", "4:warning:dollar_not_at_end"}},
		{"invalid_sitemap", "Sitemap: /sitemap.xml\nSitemap: ftp://e.example/s.xml\nSitemap: https:///s.xml\nSitemap:\nSitemap: https://e.example/ok.xml\n",
			[]string{"1:error:invalid_sitemap", "2:error:invalid_sitemap", "3:error:invalid_sitemap", "4:error:invalid_sitemap"}},
		{"crawl_delay", "User-agent: *\nCrawl-delay: 2.5\nCrawl-delay: soon\nCrawl-delay: -1\nDisallow: /x\n",
			[]string{"2:info:nonstandard_directive", "3:warning:bad_crawl_delay", "4:warning:bad_crawl_delay"}},
		{"nonstandard", "Host: e.example\nUser-agent: *\nNoindex: /x\nDisallow: /y\n",
			[]string{"1:info:nonstandard_directive", "3:info:nonstandard_directive"}},
		{"empty_rules", "User-agent: *\nDisallow:\nAllow:\n",
			[]string{"2:info:empty_rule", "3:warning:empty_rule"}},
		{"user_agent_values", "User-agent:\nUser-agent: LektaBot/0.1\nUser-agent: */1\nUser-agent: * extra\nUser-agent: 42bot\nDisallow: /x\n",
			[]string{"1:warning:empty_user_agent", "2:warning:user_agent_not_token", "3:warning:user_agent_not_token",
				"4:warning:user_agent_not_token", "5:warning:user_agent_not_token"}},
		{"empty_group", "User-agent: a\nDisallow: /\nUser-agent: LektaBot\n# nothing\n",
			[]string{"3:info:empty_group"}},
		{"misspelled_and_missing_colon", "useragent *\nDissallow: /x\nDisallow /y\n",
			[]string{"1:warning:misspelled_directive", "1:warning:missing_colon", "2:warning:misspelled_directive", "3:warning:missing_colon"}},
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
		`5: warning: '$' anchors the end only as the last character; here it matches a literal '$'`,
		`6: warning: Crawl-delay "fast" is not a number of seconds; ignored`,
		`7: info: Noindex is not part of RFC 9309; LektaBot ignores it`,
		`8: error: Sitemap "/sitemap.xml" is not an absolute http(s) URL; ignored`,
		`10: warning: unknown directive "Foo" is ignored`,
		`11: error: "this line is garbage" is not a "name: value" record; ignored`,
		`13: warning: User-agent "LektaBot/0.1" is read as the product token "LektaBot"; write only the token`,
		`14: warning: "Dissallow" is read as Disallow; spell it "Disallow"`,
		`14: warning: no ':' after "Dissallow"; read as "Disallow: /tmp/"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("messy.txt issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
