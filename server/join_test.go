package server

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/records"
)

// joinPublicURL is the public URL of the join harnesses: the links they
// mail start with it, and the tests follow their path on the test server.
const joinPublicURL = "http://lekta.test"

// mailedLink finds the sign-in link in a mail: its path and query.
var mailedLink = regexp.MustCompile(`http://lekta\.test(/members/link\?token=[A-Za-z0-9_-]{43})\s`)

// testClock is a clock a test moves by hand, for Config.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newJoinHarness is a member harness whose people join by j, with its sign-in
// links mailed through sink when there is one, on clk when there is one.
func newJoinHarness(tb testing.TB, j Joining, sink *smtpSink, clk *testClock) *memberHarness {
	tb.Helper()
	return newMemberHarness(tb, memberOpts{config: func(c *Config) {
		c.Joining, c.PublicURL = j, joinPublicURL
		if sink != nil {
			m, err := NewSMTPMailer(sink.url(), "Lekta <lekta@example.com>")
			if err != nil {
				tb.Fatal(err)
			}
			c.Mailer = m
		}
		if clk != nil {
			c.Now = clk.now
		}
	}})
}

// askByForm asks for a link with the form of /members in browser b.
func askByForm(tb testing.TB, b *browser, email string) (*http.Response, string) {
	tb.Helper()
	_, page := b.send("GET", "/members", nil)
	return b.send("POST", "/members/join", url.Values{"email": {email}, "csrf": {csrfOf(tb, page)}})
}

// askByAPI asks for a link with POST /api/v1/members.
func askByAPI(h *memberHarness, email string) (*http.Response, []byte) {
	h.tb.Helper()
	return h.do("POST", "/api/v1/members", `{"email":"`+email+`"}`, map[string]string{"Content-Type": "application/json"})
}

// linkIn is the path and query of the sign-in link in a mail.
func linkIn(tb testing.TB, mail string) string {
	tb.Helper()
	m := mailedLink.FindStringSubmatch(mail)
	if m == nil {
		tb.Fatalf("no sign-in link starting with %s in the mail:\n%s", joinPublicURL, mail)
	}
	return m[1]
}

// followLink opens a sign-in link in b and presses its button.
func followLink(tb testing.TB, b *browser, link string) (*http.Response, string) {
	tb.Helper()
	resp, page := b.send("GET", link, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<form class="audit" method="post" action="/members/link">`) {
		tb.Fatalf("GET %s: %d, want 200 with the sign-in button\n%s", link, resp.StatusCode, page)
	}
	u, _ := url.Parse(link)
	return b.send("POST", "/members/link", url.Values{"token": {u.Query().Get("token")}, "csrf": {csrfOf(tb, page)}})
}

// newKeyOnPage is the key a keys page shows once.
var newKeyOnPage = regexp.MustCompile(`<code>(lekta_[A-Za-z0-9_-]{43})</code>`)

// TestJoinOpenSignsInAndMakesKeys: under --members open a person asks on
// /members, gets the link through a real SMTP server, opens it (a page
// with a button, which uses nothing), presses the button and lands signed
// in on /members/sites; there they make an API key, which works on the
// API until they revoke it.
func TestJoinOpenSignsInAndMakesKeys(t *testing.T) {
	sink := startSMTP(t, "")
	h := newJoinHarness(t, JoinOpen, sink, nil)
	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	if !strings.Contains(page, "Send me a sign-in link") || !strings.Contains(page, `action="/members/join"`) {
		t.Fatalf("the sign-in page under open joining has no form to ask for a link:\n%s", page)
	}
	resp, page := askByForm(t, b, "new@example.com")
	wantSeeOther(t, "ask for a link", resp, page, "/members?link=sent")
	if _, page := b.send("GET", "/members?link=sent", nil); !strings.Contains(page, "If this address can join, a sign-in link is on its way") {
		t.Fatalf("the page after asking does not say a link is on its way:\n%s", page)
	}
	mail := sink.waitFor(t, "new@example.com", 1)
	if !strings.Contains(mail, "From: \"Lekta\" <lekta@example.com>") || !strings.Contains(mail, "30 minutes") {
		t.Fatalf("the mail has no sender or no lifetime:\n%s", mail)
	}
	link := linkIn(t, mail)
	if _, page := b.send("GET", link, nil); !strings.Contains(page, "new@example.com") {
		t.Fatalf("the confirmation page does not name the address:\n%s", page)
	}
	resp, page = followLink(t, b, link) // a second GET: the first used nothing
	wantSeeOther(t, "press the sign-in button", resp, page, "/members/sites")
	if resp, page := b.send("GET", "/members/sites", nil); resp.StatusCode != http.StatusOK || !strings.Contains(page, "Signed in as new@example.com") ||
		!strings.Contains(page, `href="/members/keys"`) {
		t.Fatalf("the dashboard after the link: %d\n%s", resp.StatusCode, page)
	}

	makeUseRevokeKey(t, h, b)
}

// TestJoinAnswersAlike: the API's answer for an address that is a
// member's, a new one and a revoked member's is the same 202 with the same
// words; the member gets a link that signs in as that member, the revoked
// one gets none.
func TestJoinAnswersAlike(t *testing.T) {
	sink := startSMTP(t, "")
	h := newJoinHarness(t, JoinOpen, sink, nil)
	ana, _ := h.member("ana@example.com")
	gone, _ := h.member("gone@example.com")
	if err := h.db.RevokeMember(context.Background(), gone.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for _, email := range []string{"ana@example.com", "new@example.com", "gone@example.com"} {
		resp, b := askByAPI(h, email)
		wantStatus(t, resp, b, http.StatusAccepted)
		if first == nil {
			first = b
		}
		if !bytes.Equal(b, first) || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("the answer for %s is %s, for ana@example.com %s: want the same", email, b, first)
		}
	}
	if !strings.Contains(string(first), linkOnItsWay) {
		t.Fatalf("answer %s, want %q", first, linkOnItsWay)
	}
	b := &browser{h: h, cookies: map[string]string{}}
	resp, page := followLink(t, b, linkIn(t, sink.waitFor(t, "ana@example.com", 1)))
	wantSeeOther(t, "the member's link", resp, page, "/members/sites")
	if _, page := b.send("GET", "/members/sites", nil); !strings.Contains(page, "Signed in as ana@example.com") {
		t.Fatalf("the member's link did not sign in as %s:\n%s", ana.ID, page)
	}
	sink.waitFor(t, "new@example.com", 1)
	time.Sleep(200 * time.Millisecond)
	if n := sink.count(); n != 2 {
		t.Fatalf("%d mails, want 2 (none for the revoked member)", n)
	}
}

// TestJoinLinkUsedOnce: a link that signed in once is refused the second
// time, on its page and on its button, with a way to ask for a new one.
func TestJoinLinkUsedOnce(t *testing.T) {
	sink := startSMTP(t, "")
	h := newJoinHarness(t, JoinOpen, sink, nil)
	if resp, b := askByAPI(h, "new@example.com"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ask: %d %s", resp.StatusCode, b)
	}
	link := linkIn(t, sink.waitFor(t, "new@example.com", 1))
	b := &browser{h: h, cookies: map[string]string{}}
	resp, page := followLink(t, b, link)
	wantSeeOther(t, "first use", resp, page, "/members/sites")
	other := &browser{h: h, cookies: map[string]string{}}
	if resp, page := other.send("GET", link, nil); resp.StatusCode != http.StatusGone || !strings.Contains(page, "was used already") ||
		!strings.Contains(page, `href="/members">Ask for a new sign-in link`) {
		t.Fatalf("a used link's page: %d, want 410 saying so with a way to ask again\n%s", resp.StatusCode, page)
	}
	_, signin := other.send("GET", "/members", nil)
	u, _ := url.Parse(link)
	resp, page = other.send("POST", "/members/link", url.Values{"token": {u.Query().Get("token")}, "csrf": {csrfOf(t, signin)}})
	if resp.StatusCode != http.StatusGone || other.cookies[sessionCookie] != "" {
		t.Fatalf("a used link's button: %d, session %q; want 410 and no session\n%s", resp.StatusCode, other.cookies[sessionCookie], page)
	}
}

// TestJoinLinkExpires: a link past its lifetime (the server's clock moved
// 31 minutes) does not sign in.
func TestJoinLinkExpires(t *testing.T) {
	sink := startSMTP(t, "")
	clk := &testClock{t: time.Now()}
	h := newJoinHarness(t, JoinOpen, sink, clk)
	if resp, b := askByAPI(h, "new@example.com"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ask: %d %s", resp.StatusCode, b)
	}
	link := linkIn(t, sink.waitFor(t, "new@example.com", 1))
	b := &browser{h: h, cookies: map[string]string{}}
	_, confirm := b.send("GET", link, nil)
	clk.add(31 * time.Minute)
	if resp, page := b.send("GET", link, nil); resp.StatusCode != http.StatusGone || !strings.Contains(page, "has expired") {
		t.Fatalf("an expired link's page: %d, want 410\n%s", resp.StatusCode, page)
	}
	u, _ := url.Parse(link)
	resp, page := b.send("POST", "/members/link", url.Values{"token": {u.Query().Get("token")}, "csrf": {csrfOf(t, confirm)}})
	if resp.StatusCode != http.StatusGone || b.cookies[sessionCookie] != "" {
		t.Fatalf("an expired link's button: %d, want 410 and no session\n%s", resp.StatusCode, page)
	}
}

// TestJoinLimits: a fourth request for one address within the hour gets
// 429 with Retry-After, in the same words for a member's address and a new
// one; an eleventh request from one client gets 429 too.
func TestJoinLimits(t *testing.T) {
	sink := startSMTP(t, "")
	clk := &testClock{t: time.Now()}
	h := newJoinHarness(t, JoinOpen, sink, clk)
	h.member("ana@example.com")
	var refusals [][]byte
	for _, email := range []string{"ana@example.com", "new@example.com"} {
		for i := range 3 {
			if resp, b := askByAPI(h, email); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("request %d for %s: %d %s", i+1, email, resp.StatusCode, b)
			}
		}
		resp, b := askByAPI(h, strings.ToUpper(email[:1])+email[1:])
		e := wantError(t, resp, b, http.StatusTooManyRequests, "rate_limited", true)
		if e.Error.RetryAfterS != 3600 {
			t.Fatalf("retry after %d s, want 3600", e.Error.RetryAfterS)
		}
		refusals = append(refusals, b)
	}
	if !bytes.Equal(refusals[0], refusals[1]) {
		t.Fatalf("the refusal for a member's address %s differs from a new one's %s", refusals[0], refusals[1])
	}
	b := &browser{h: h, cookies: map[string]string{}}
	resp, page := askByForm(t, b, "ana@example.com")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(page, "Too many sign-in links") {
		t.Fatalf("the form over the limit: %d, Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), page)
	}
	// 9 requests from this client so far: one more passes, then no more.
	if resp, b := askByAPI(h, "third@example.com"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the 10th request of the client: %d %s", resp.StatusCode, b)
	}
	resp2, b2 := askByAPI(h, "fourth@example.com")
	wantError(t, resp2, b2, http.StatusTooManyRequests, "rate_limited", true)
	clk.add(time.Hour + time.Second)
	if resp, b := askByAPI(h, "fourth@example.com"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("an hour later: %d %s, want 202", resp.StatusCode, b)
	}
}

// TestJoinClosedAndInviteRefuse: without open joining POST /api/v1/members
// and the form answer 403 in words saying how to join here, and
// /members says so; under closed, a link is not taken either.
func TestJoinClosedAndInviteRefuse(t *testing.T) {
	for _, tc := range []struct {
		joining Joining
		words   string
	}{
		{JoinClosed, "Membership on this instance is by the operator: ask them for a key."},
		{JoinInvite, "ask the operator for an invitation"},
	} {
		t.Run(string(tc.joining), func(t *testing.T) {
			h := newJoinHarness(t, tc.joining, nil, nil)
			resp, body := askByAPI(h, "new@example.com")
			if e := wantError(t, resp, body, http.StatusForbidden, "forbidden", false); !strings.Contains(e.Error.Message, tc.words) {
				t.Fatalf("403 says %q, want %q", e.Error.Message, tc.words)
			}
			b := &browser{h: h, cookies: map[string]string{}}
			_, page := b.send("GET", "/members", nil)
			if !strings.Contains(page, tc.words) || strings.Contains(page, `action="/members/join"`) {
				t.Fatalf("/members does not say %q, or offers the join form:\n%s", tc.words, page)
			}
			if resp, _ := askByForm(t, b, "new@example.com"); resp.StatusCode != http.StatusForbidden {
				t.Fatalf("the join form: %d, want 403", resp.StatusCode)
			}
			if ms, _ := h.db.Members(t.Context()); len(ms) != 0 {
				t.Fatalf("%d members after refused requests, want 0", len(ms))
			}
			m, _ := h.member("ana@example.com")
			token, _ := h.db.NewSignInLink(t.Context(), m.ID, time.Now(), time.Hour)
			want := map[Joining]int{JoinClosed: http.StatusForbidden, JoinInvite: http.StatusOK}[tc.joining]
			if resp, page := b.send("GET", SignInLinkPath(token), nil); resp.StatusCode != want {
				t.Fatalf("a sign-in link: %d, want %d\n%s", resp.StatusCode, want, page)
			}
		})
	}
}

// TestInviteLinkSignsIn: under --members invite, the link lekta members
// invite makes (the member added when missing) signs in once; a revoked
// member's link does not.
func TestInviteLinkSignsIn(t *testing.T) {
	h := newJoinHarness(t, JoinInvite, nil, nil)
	ctx := t.Context()
	m, added, err := h.db.JoinMember(ctx, "ana@example.com", time.Now())
	if err != nil || !added {
		t.Fatalf("JoinMember = %v, %v", added, err)
	}
	token, _ := h.db.NewSignInLink(ctx, m.ID, time.Now(), DefaultSignInLinkTTL)
	b := &browser{h: h, cookies: map[string]string{}}
	resp, page := followLink(t, b, SignInLinkPath(token))
	wantSeeOther(t, "the invitation", resp, page, "/members/sites")
	if _, page := b.send("GET", "/members/sites", nil); !strings.Contains(page, "Signed in as ana@example.com") {
		t.Fatalf("not signed in after the invitation:\n%s", page)
	}
	kept, _ := h.db.NewSignInLink(ctx, m.ID, time.Now(), DefaultSignInLinkTTL)
	if err := h.db.RevokeMember(ctx, m.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	other := &browser{h: h, cookies: map[string]string{}}
	_, signin := other.send("GET", "/members", nil)
	resp, page = other.send("POST", "/members/link", url.Values{"token": {kept}, "csrf": {csrfOf(t, signin)}})
	if resp.StatusCode != http.StatusForbidden || other.cookies[sessionCookie] != "" || !strings.Contains(page, "revoked") {
		t.Fatalf("a revoked member's link: %d, want 403 and no session\n%s", resp.StatusCode, page)
	}
}

// makeUseRevokeKey makes an API key on /members/keys in b, checks it is
// shown once, escaped, and never in a cookie in the clear, uses it on the
// API (200), revokes it and uses it again (401).
func makeUseRevokeKey(t *testing.T, h *memberHarness, b *browser) {
	t.Helper()
	_, page := b.send("GET", "/members/keys", nil)
	resp, body := b.send("POST", "/members/keys", url.Values{"csrf": {csrfOf(t, page)}, "label": {`CI <b>"x"</b>`}})
	wantSeeOther(t, "make a key", resp, body, "/members/keys")
	_, page = b.send("GET", "/members/keys", nil)
	m := newKeyOnPage.FindStringSubmatch(page)
	if m == nil || strings.Contains(page, "<b>") || !strings.Contains(page, "CI &lt;b&gt;") {
		t.Fatalf("the keys page after making a key: no key shown once, or the label unescaped\n%s", page)
	}
	key := m[1]
	for _, c := range resp.Cookies() {
		if strings.Contains(c.Value, key[len(records.KeyPrefix):]) || !c.HttpOnly {
			t.Fatalf("cookie %s holds the key in the clear, or is not HttpOnly", c.Name)
		}
	}
	if _, again := b.send("GET", "/members/keys", nil); strings.Contains(again, key) {
		t.Fatal("a reload of the keys page shows the key again")
	}
	auth := map[string]string{"Authorization": "Bearer " + key}
	if resp, b := h.do("GET", "/api/v1/sites", "", auth); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/sites with the new key: %d %s, want 200", resp.StatusCode, b)
	}
	revoke := regexp.MustCompile(`action="(/members/keys/k_[a-z0-9]+/revoke)"`).FindStringSubmatch(page)
	if revoke == nil {
		t.Fatalf("no revoke button on the keys page:\n%s", page)
	}
	resp, body = b.send("POST", revoke[1], url.Values{"csrf": {csrfOf(t, page)}})
	wantSeeOther(t, "revoke the key", resp, body, "/members/keys")
	if resp, b := h.do("GET", "/api/v1/sites", "", auth); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /api/v1/sites with the revoked key: %d %s, want 401", resp.StatusCode, b)
	}
	if _, page := b.send("GET", "/members/keys", nil); !strings.Contains(page, "The key was revoked") || !strings.Contains(page, "revoked <time") {
		t.Fatalf("the keys page after revoking does not say so:\n%s", page)
	}
}
