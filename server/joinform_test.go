package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestJoinFormErrors: an address that cannot join stands beside the field,
// escaped, with 400, and nothing is stored or mailed; a form without its
// token is refused with 403.
func TestJoinFormErrors(t *testing.T) {
	sink := startSMTP(t, "")
	h := newJoinHarness(t, JoinOpen, sink, nil)
	b := &browser{h: h, cookies: map[string]string{}}
	typed := `<b>x</b>"@example.com`
	resp, page := askByForm(t, b, typed)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(errorOf(page, "email"), "not an email address") ||
		strings.Contains(page, "<b>x") || !strings.Contains(page, `value="&lt;b&gt;x&lt;/b&gt;&#34;@example.com"`) {
		t.Fatalf("a bad address: %d, error %q\n%s", resp.StatusCode, errorOf(page, "email"), page)
	}
	resp, body := askByAPI(h, "no-at-sign")
	wantError(t, resp, body, http.StatusBadRequest, "bad_request", false)
	if resp, _ := b.send("POST", "/members/join", url.Values{"email": {"new@example.com"}, "csrf": {"forged"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the join form without its token: %d, want 403", resp.StatusCode)
	}
	if ms, _ := h.db.Members(t.Context()); len(ms) != 0 || sink.count() != 0 {
		t.Fatalf("%d members and %d mails after refused requests, want none", len(ms), sink.count())
	}
}

// TestJoinNeedsMailer: open joining without a mailer or a public URL, or
// an unknown way of joining, is refused when the server is made.
func TestJoinNeedsMailer(t *testing.T) {
	m, err := NewSMTPMailer("smtp://127.0.0.1:1", "lekta@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"open without a mailer":     {Joining: JoinOpen, PublicURL: joinPublicURL},
		"open without a public URL": {Joining: JoinOpen, Mailer: m},
		"unknown":                   {Joining: "everyone"},
	} {
		if err := checkJoining(&c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := Config{}
	if err := checkJoining(&c); err != nil || c.Joining != JoinClosed || c.SignInLinkTTL != DefaultSignInLinkTTL {
		t.Fatalf("the defaults: %+v, %v; want closed and %s", c, err, DefaultSignInLinkTTL)
	}
}

// TestJoinPagesInWords: the pages of joining and of keys, and the API's
// refusals of POST /api/v1/members, show words, not internal names.
func TestJoinPagesInWords(t *testing.T) {
	sink := startSMTP(t, "")
	h := newJoinHarness(t, JoinOpen, sink, nil)
	b := &browser{h: h, cookies: map[string]string{}}
	pages := map[string]string{}
	_, pages["sign-in, open"] = b.send("GET", "/members", nil)
	_, pages["link asked for"] = b.send("GET", "/members?link=sent", nil)
	_, pages["bad address"] = askByForm(t, b, "not an address")
	askByAPI(h, "new@example.com")
	link := linkIn(t, sink.waitFor(t, "new@example.com", 1))
	_, pages["confirmation"] = b.send("GET", link, nil)
	_, pages["unknown link"] = b.send("GET", SignInLinkPath(strings.Repeat("A", 43)), nil)
	followLink(t, b, link)
	_, keys := b.send("GET", "/members/keys", nil)
	pages["keys, none"] = keys
	b.send("POST", "/members/keys", url.Values{"csrf": {csrfOf(t, keys)}, "label": {"CI"}})
	_, pages["keys, new key"] = b.send("GET", "/members/keys", nil)
	b.send("POST", "/members/keys/k_nothing/revoke", url.Values{"csrf": {csrfOf(t, keys)}})
	_, pages["keys, no such key"] = b.send("GET", "/members/keys", nil)
	for name, page := range pages {
		if bad := internalNames(htmlWords(t, page)); len(bad) > 0 {
			t.Errorf("the %s page shows %q", name, bad)
		}
	}
	for _, body := range []string{`[]`, `{"email":1}`, `{"email":"x","extra_field":1}`, `{"email":"no-at-sign"}`} {
		resp, b := h.do("POST", "/api/v1/members", body, map[string]string{"Content-Type": "application/json"})
		e := decode[apiErr](t, b)
		if bad := internalNames(e.Error.Message, apiFieldNames(t)...); resp.StatusCode != http.StatusBadRequest || len(bad) > 0 {
			t.Errorf("%s: %d %q shows %q", body, resp.StatusCode, e.Error.Message, bad)
		}
	}
}
