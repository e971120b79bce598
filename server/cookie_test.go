package server

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// TestSessionCookieBehindTLS: the member session cookie, and the sign-in
// form's cookie, are Secure, with the __Host- prefix (so Path "/" and no
// Domain), when the browser came over https: through a trusted proxy that
// says so in X-Forwarded-Proto, or as an https public URL promises; a peer
// that is not trusted cannot claim https.
func TestSessionCookieBehindTLS(t *testing.T) {
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name   string
		config func(*Config)
		header map[string]string
		secure bool
	}{
		{"trusted proxy says https", func(c *Config) { c.TrustedProxies = loopback }, map[string]string{"X-Forwarded-Proto": "https"}, true},
		{"untrusted peer says https", nil, map[string]string{"X-Forwarded-Proto": "https"}, false},
		{"trusted proxy says http", func(c *Config) { c.TrustedProxies = loopback }, map[string]string{"X-Forwarded-Proto": "http"}, false},
		{"https public URL", func(c *Config) { c.PublicURL = "https://lekta.example/" }, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newMemberHarness(t, memberOpts{config: tc.config})
			_, auth := h.member("ana@example.com")
			key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
			b := &browser{h: h, cookies: map[string]string{}, header: tc.header}
			form, page := b.send("GET", "/members", nil)
			wantSignin, wantPath := signinCookie, "/members"
			if tc.secure {
				wantSignin, wantPath = "__Host-"+signinCookie, "/"
			}
			for _, c := range form.Cookies() {
				if strings.HasSuffix(c.Name, signinCookie) && (c.Name != wantSignin || c.Secure != tc.secure || c.Path != wantPath || c.Domain != "") {
					t.Errorf("sign-in cookie %s Secure=%v Path=%q Domain=%q; want %s Secure=%v Path=%s and no Domain", c.Name, c.Secure, c.Path, c.Domain, wantSignin, tc.secure, wantPath)
				}
			}
			resp, _ := b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {csrfOf(t, page)}})
			want := sessionCookie
			if tc.secure {
				want = "__Host-" + sessionCookie
			}
			var sc *http.Cookie
			for _, c := range resp.Cookies() {
				if strings.HasSuffix(c.Name, sessionCookie) {
					sc = c
				}
			}
			switch {
			case sc == nil:
				t.Fatalf("sign-in set no session cookie: %d", resp.StatusCode)
			case sc.Name != want || sc.Secure != tc.secure || sc.Path != "/" || sc.Domain != "":
				t.Fatalf("session cookie %s Secure=%v Path=%q Domain=%q; want %s Secure=%v Path=/ and no Domain", sc.Name, sc.Secure, sc.Path, sc.Domain, want, tc.secure)
			}
			if resp, _ := b.send("GET", "/members/sites", nil); resp.StatusCode != http.StatusOK {
				t.Errorf("dashboard with the session cookie: %d, want 200", resp.StatusCode)
			}
		})
	}
}
