package server

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/records"
)

// strongETag is the form of a badge's ETag: a quoted hex digest, not weak.
var strongETag = regexp.MustCompile(`^"[0-9a-f]{16,64}"$`)

// TestBadgeRevalidates: a badge is served with no-cache and a strong ETag
// of its bytes, so a browser asks again each time and shows a new run at
// once; a matching If-None-Match (exact, in a list, weak or *) gets 304
// with no body, and a new run changes the ETag.
func TestBadgeRevalidates(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	s := h.saveSite(auth, `{"url":"http://shop.example/","schedule":"daily"}`)

	resp, b := h.do("GET", s.BadgeURL, "", nil)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "not run yet") {
		t.Fatalf("badge: %d %s", resp.StatusCode, b)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control %q, want no-cache", cc)
	}
	if !strongETag.MatchString(etag) {
		t.Fatalf("ETag %q, want a strong quoted hex digest", etag)
	}
	for k, want := range map[string]string{"Content-Type": "image/svg+xml", "X-Robots-Tag": "noindex", "Cross-Origin-Resource-Policy": "cross-origin"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s %q, want %q", k, got, want)
		}
	}
	cases := []struct {
		name, ifNoneMatch string
		want              int
	}{
		{"same", etag, http.StatusNotModified},
		{"in a list", `"0000", ` + etag, http.StatusNotModified},
		{"weak", "W/" + etag, http.StatusNotModified},
		{"any", "*", http.StatusNotModified},
		{"another", `"0000"`, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := h.do("GET", s.BadgeURL, "", map[string]string{"If-None-Match": tc.ifNoneMatch})
			if resp.StatusCode != tc.want || resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("If-None-Match %s: %d ETag %q Cache-Control %q; want %d, %s, no-cache",
					tc.ifNoneMatch, resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"), tc.want, etag)
			}
			if (tc.want == http.StatusNotModified) != (len(b) == 0) {
				t.Errorf("%d with a %d-byte body", resp.StatusCode, len(b))
			}
		})
	}
	if resp, b := h.do("HEAD", s.BadgeURL, "", nil); resp.StatusCode != http.StatusOK || len(b) != 0 || resp.Header.Get("ETag") != etag {
		t.Errorf("HEAD: %d, %d bytes, ETag %q; want 200, no body, %s", resp.StatusCode, len(b), resp.Header.Get("ETag"), etag)
	}

	// A run changes the badge: the browser's old ETag no longer matches.
	e := records.Entry{ID: records.HistoryID(s.ID, time.Now()), SiteID: s.ID, DueAt: time.Now(), RanAt: time.Now(),
		Trigger: "manual", Status: "complete", TextShare: share(0.97), LinkShare: share(0.97), Summary: summaryOf(t, "complete")}
	if _, err := h.db.AddEntry(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	resp, b = h.do("GET", s.BadgeURL, "", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "see 97%") {
		t.Fatalf("badge after a run, with the old ETag: %d %s", resp.StatusCode, b)
	}
	if n := resp.Header.Get("ETag"); n == etag || !strongETag.MatchString(n) {
		t.Errorf("ETag after a run %q, want a new one (was %s)", n, etag)
	}
}

// TestBadgeSnippets: the embed snippets on the site page (and the API's
// badge_url) are absolute when the instance has a public URL; without
// one they are paths, and the page says how to make them absolute.
func TestBadgeSnippets(t *testing.T) {
	const hint = "--public-url"
	cases := []struct {
		name, publicURL, prefix string
		hint                    bool
	}{
		{"public URL", "https://lekta.example", "https://lekta.example/badge/", false},
		{"no public URL", "", "/badge/", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newMemberHarness(t, memberOpts{config: func(c *Config) { c.PublicURL = tc.publicURL }})
			_, auth := h.member("ana@example.com")
			s := h.saveSite(auth, `{"url":"http://shop.example/","schedule":"daily"}`)
			if !strings.HasPrefix(s.BadgeURL, tc.prefix) {
				t.Errorf("API badge_url %q, want it to start with %s", s.BadgeURL, tc.prefix)
			}
			_, page := h.signIn(auth).send("GET", "/members/sites/"+s.ID, nil)
			for _, want := range []string{"](" + tc.prefix, `&lt;img src=&#34;` + tc.prefix} {
				if !strings.Contains(page, want) {
					t.Errorf("site page has no snippet with %q:\n%s", want, page)
				}
			}
			if strings.Contains(page, hint) != tc.hint {
				t.Errorf("site page shows the --public-url hint: %v, want %v:\n%s", !tc.hint, tc.hint, page)
			}
		})
	}
}
