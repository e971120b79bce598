package compare

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestScriptLabel: a script URL is shown by its path on the page's own
// host and with its host on another, without the query, and cut in the
// middle when long, keeping the path's start and the file name.
func TestScriptLabel(t *testing.T) {
	t.Parallel()
	const page = "https://shop.example/p"
	cases := []struct {
		name, script string
		width        int
		want         string
	}{
		{"own host", "https://shop.example/js/app.js?v=3", 40, "/js/app.js"},
		{"other host", "https://tags.example/gtm.js?id=1", 40, "tags.example/gtm.js"},
		{"host in another case", "https://SHOP.example/a.js", 40, "/a.js"},
		{"long path", "https://shop.example/static/js/vendor/chunks/app.3f9c1d2e.js", 32, "/static/js/…/app.3f9c1d2e.js"},
		{"long file name", "https://shop.example/s/" + strings.Repeat("x", 60) + ".js", 20, "/s/xxxxxx…xxxxxxx.js"},
		{"not a URL", "\x1b[31m" + strings.Repeat("y", 50), 20, "\x1b[31myyyy…" + strings.Repeat("y", 10)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ScriptLabel(tc.script, page, tc.width)
			if got != tc.want {
				t.Errorf("ScriptLabel(%q) = %q, want %q", tc.script, got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > tc.width {
				t.Errorf("%q is %d runes, over %d", got, n, tc.width)
			}
		})
	}
}
