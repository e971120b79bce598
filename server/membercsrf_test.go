package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// sessionSet reports whether resp sets a session cookie (of either name).
func sessionSet(resp *http.Response) bool {
	for _, c := range resp.Cookies() {
		if strings.HasSuffix(c.Name, sessionCookie) && c.MaxAge >= 0 {
			return true
		}
	}
	return false
}

// TestSignInRefusesCrossSite: a sign-in posted from another site is
// refused with 403 and no session, even when it carries a sign-in cookie
// the attacker planted and the matching token (the double submit alone
// does not hold against a planted cookie); the same form posted from the
// member pages themselves, or from the origin of the public URL, signs in.
func TestSignInRefusesCrossSite(t *testing.T) {
	h := newMemberHarness(t, memberOpts{config: func(c *Config) { c.PublicURL = "http://lekta.example" }})
	_, auth := h.member("ana@example.com")
	key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
	refused := []struct {
		name   string
		header map[string]string
	}{
		{"cross-site fetch metadata", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"same-site fetch metadata", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://evil.lekta.example"}},
		{"foreign origin", map[string]string{"Origin": "https://evil.example"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			b := &browser{h: h, cookies: map[string]string{signinCookie: "planted"}, header: tc.header}
			resp, page := b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {"planted"}})
			if resp.StatusCode != http.StatusForbidden || sessionSet(resp) {
				t.Fatalf("cross-site sign-in with a planted cookie: %d, session set %v; want 403 and no session", resp.StatusCode, sessionSet(resp))
			}
			if !strings.Contains(page, "another site") {
				t.Errorf("the refusal does not say why in words:\n%s", page)
			}
		})
	}
	allowed := []struct {
		name   string
		header map[string]string
	}{
		{"same origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": h.ts.URL}},
		{"origin of the public URL", map[string]string{"Origin": "http://lekta.example"}},
		{"no browser headers", nil},
	}
	for _, tc := range allowed {
		t.Run(tc.name, func(t *testing.T) {
			b := &browser{h: h, cookies: map[string]string{}, header: tc.header}
			_, page := b.send("GET", "/members", nil)
			resp, _ := b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {csrfOf(t, page)}})
			if resp.StatusCode != http.StatusSeeOther || !sessionSet(resp) {
				t.Fatalf("sign-in: %d, session set %v; want 303 and a session", resp.StatusCode, sessionSet(resp))
			}
		})
	}
}

// TestMemberPostsRefuseCrossSite: every other state-changing member page
// refuses a post from another site even with the member's session and
// token, and changes nothing.
func TestMemberPostsRefuseCrossSite(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	site := h.saveSite(auth, `{"url":"http://shop.example/","schedule":"daily"}`)
	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	b.send("POST", "/members/sign-in", url.Values{"key": {strings.TrimPrefix(auth["Authorization"], "Bearer ")}, "csrf": {csrfOf(t, page)}})
	_, page = b.send("GET", "/members/sites", nil)
	tok := csrfOf(t, page)
	b.header = map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
	for _, path := range []string{"/members/sites/" + site.ID + "/delete", "/members/sites/" + site.ID + "/run",
		"/members/sites/" + site.ID, "/members/sites", "/members/sign-out"} {
		form := url.Values{"csrf": {tok}, "url": {"http://other.example/"}, "schedule": {"weekly"}}
		if resp, _ := b.send("POST", path, form); resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, resp.StatusCode)
		}
	}
	b.header = nil
	if resp, page := b.send("GET", "/members/sites/"+site.ID, nil); resp.StatusCode != http.StatusOK || !strings.Contains(page, "shop.example") {
		t.Errorf("after the cross-site posts the site page is %d; want the session and the site unchanged", resp.StatusCode)
	}
	if n := h.siteCount(); n != 1 {
		t.Errorf("%d sites saved after the cross-site posts, want 1", n)
	}
}

// TestPublicOrigin: the public URL's origin is written as browsers write
// Origin: lower case, without the scheme's default port or a path.
func TestPublicOrigin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                 "",
		"https://Audit.Example.com":        "https://audit.example.com",
		"https://audit.example.com:443/x":  "https://audit.example.com",
		"http://audit.example.com:80":      "http://audit.example.com",
		"https://audit.example.com:8443":   "https://audit.example.com:8443",
		"http://[2001:db8::1]:8080/lekta/": "http://[2001:db8::1]:8080",
	} {
		if got := publicOrigin(in); got != want {
			t.Errorf("publicOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}
