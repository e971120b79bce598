package render

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestRenderRefusesBackslashLocation: a main-frame redirect whose Location
// has a backslash is refused by the render lane as by the plain lane, and
// the page it points at is never requested.
func TestRenderRefusesBackslashLocation(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	for _, loc := range []string{`/\%s/p/small.html?bs1`, `\p\small.html?bs2`, `\\%s\p\small.html?bs3`} {
		host := hostFor(t)
		if strings.Contains(loc, "%s") {
			loc = strings.ReplaceAll(loc, "%s", host)
		}
		_, err := renderPage(t, b, Request{URL: "http://" + host + "/redirect?to=" + url.QueryEscape(loc)}, 30*time.Second)
		if err == nil || !errors.Is(err, ErrNavigationFailed) || !strings.Contains(err.Error(), "backslash") {
			t.Errorf("Location %q: render error %v, want a navigation failure naming the backslash", loc, err)
		}
		followed := func(h hit) bool {
			return h.Host == host && h.Path == "/p/small.html" && strings.HasSuffix(loc, "?"+h.Query)
		}
		if got := s.hitsMatching(followed); len(got) > 0 {
			t.Errorf("Location %q: the render lane followed it: %v", loc, paths(got))
		}
	}
}
