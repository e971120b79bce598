package server

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// browser is a cookie-keeping client of the member pages, as a person's
// browser without JavaScript.
type browser struct {
	h       *memberHarness
	cookies map[string]string
	// header is sent with every request.
	header map[string]string
}

func (b *browser) send(method, path string, form url.Values) (*http.Response, string) {
	b.h.tb.Helper()
	hdr := map[string]string{}
	for k, v := range b.header {
		hdr[k] = v
	}
	var parts []string
	for k, v := range b.cookies {
		parts = append(parts, k+"="+v)
	}
	hdr["Cookie"] = strings.Join(parts, "; ")
	body := ""
	if form != nil {
		hdr["Content-Type"] = "application/x-www-form-urlencoded"
		body = form.Encode()
	}
	resp, out := b.h.do(method, path, body, hdr)
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return resp, string(out)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(tb testing.TB, page string) string {
	tb.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		tb.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

func TestMemberPages(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
	_, boAuth := h.member("bo@example.com")
	other := h.saveSite(boAuth, `{"url":"http://other.example/","schedule":"daily"}`)
	b := &browser{h: h, cookies: map[string]string{}}

	resp, page := b.send("GET", "/members/sites", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/members" {
		t.Fatalf("dashboard without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, page = b.send("GET", "/members", nil)
	tok := csrfOf(t, page)
	if strings.Contains(page, "<script") {
		t.Fatal("the sign-in page has a script")
	}
	// A form posted without the page's token is refused.
	if resp, _ := b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {"forged"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in with a forged token: %d", resp.StatusCode)
	}
	_, page = b.send("GET", "/members", nil)
	tok = csrfOf(t, page)
	if resp, page := b.send("POST", "/members/sign-in", url.Values{"key": {"lekta_wrong"}, "csrf": {tok}}); resp.StatusCode != 401 || !strings.Contains(page, "not valid") {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
	_, page = b.send("GET", "/members", nil)
	resp, _ = b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {csrfOf(t, page)}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	var sc *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			sc = c
		}
	}
	if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Secure || strings.Contains(sc.Value, key) {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, not Secure on plain HTTP, not the key", sc)
	}
	_, page = b.send("GET", "/members/sites", nil)
	tok = csrfOf(t, page)
	// Add a site whose URL carries markup: it must come back escaped.
	resp, _ = b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {`http://shop.example/js-title.html?q=<b>"x"</b>`}, "schedule": {"weekly"}, "webhook_url": {""}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("add site: %d, want 303", resp.StatusCode)
	}
	if _, page = b.send("GET", resp.Header.Get("Location"), nil); strings.Contains(page, "<b>") || !strings.Contains(page, "Run now") {
		t.Fatalf("the saved site's page:\n%s", page)
	}
	if resp, _ := b.send("POST", "/members/sites", url.Values{"url": {"http://shop.example/"}, "schedule": {"daily"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("add site without the CSRF token: %d", resp.StatusCode)
	}
	if resp, page := b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {"http://shop.example/"}, "schedule": {"every so often"}}); resp.StatusCode != 400 || !strings.Contains(page, "bad schedule") {
		t.Fatalf("add site with a bad schedule: %d", resp.StatusCode)
	}
	sites, _ := h.db.MemberSites(t.Context(), h.mustMember(t, "ana@example.com"))
	if len(sites) != 1 {
		t.Fatalf("%d sites saved, want 1", len(sites))
	}
	id := sites[0].ID
	if resp, _ := b.send("POST", "/members/sites/"+id+"/run", url.Values{"csrf": {tok}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("run now: %d", resp.StatusCode)
	}
	h.waitHistory(auth, id, 1)
	_, page = b.send("GET", "/members/sites", nil)
	if !strings.Contains(page, `<svg class="trend"`) || !strings.Contains(page, "AI crawlers see ") {
		t.Fatalf("dashboard without the trend:\n%s", page)
	}
	_, page = b.send("GET", "/members/sites/"+id, nil)
	if !strings.Contains(page, "member") || !strings.Contains(page, "/r/") {
		t.Fatalf("site page without its history:\n%s", page)
	}
	// The re-audit's report page says what changed since the previous one.
	e, _ := h.db.LatestEntry(t.Context(), id)
	if _, rp := b.send("GET", "/r/"+e.ReportID, nil); !strings.Contains(rp, "Since the previous audit") || !strings.Contains(rp, "First audit") {
		t.Fatalf("the re-audit's report page has no \"since the previous audit\":\n%s", rp)
	}
	// Another member's site is not shown.
	if resp, page := b.send("GET", "/members/sites/"+other.ID, nil); resp.StatusCode != 403 || strings.Contains(page, "other.example") {
		t.Fatalf("another member's site page: %d", resp.StatusCode)
	}
	if resp, _ := b.send("POST", "/members/sites/"+other.ID+"/delete", url.Values{"csrf": {tok}}); resp.StatusCode != 403 {
		t.Fatalf("delete another member's site: %d", resp.StatusCode)
	}
	if resp, _ := b.send("POST", "/members/sites/"+id+"/delete", url.Values{"csrf": {tok}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if left, _ := h.db.MemberSites(t.Context(), h.mustMember(t, "ana@example.com")); len(left) != 0 {
		t.Fatal("the site was not removed")
	}
	if resp, _ := b.send("POST", "/members/sign-out", url.Values{"csrf": {tok}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	b.cookies[sessionCookie] = sc.Value // the old cookie no longer works
	if resp, _ := b.send("GET", "/members/sites", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("dashboard after sign-out: %d", resp.StatusCode)
	}
}

func (h *memberHarness) mustMember(tb testing.TB, email string) string {
	ms, err := h.db.Members(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range ms {
		if m.Email == email {
			return m.ID
		}
	}
	tb.Fatalf("no member %s", email)
	return ""
}
