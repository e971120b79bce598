package server

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// errorOf returns the error shown beside a form field, or "".
func errorOf(page, field string) string {
	m := regexp.MustCompile(`<p class="error" id="` + field + `-error"[^>]*>([^<]*)</p>`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestSiteForms: the schedule is a choice within the service's minimum
// interval, an error stands beside its field and keeps what was typed, and
// durations are words.
func TestSiteForms(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	b.send("POST", "/members/sign-in", url.Values{"key": {strings.TrimPrefix(auth["Authorization"], "Bearer ")}, "csrf": {csrfOf(t, page)}})
	_, page = b.send("GET", "/members/sites", nil)
	tok := csrfOf(t, page)
	if !strings.Contains(page, `<select id="schedule" name="schedule"`) || !strings.Contains(page, `<option value="6h">Every 6 hours</option>`) ||
		!strings.Contains(page, `<option value="daily" selected>`) {
		t.Fatalf("the dashboard's schedule is not a choice:\n%s", page)
	}
	if strings.Contains(page, `value="30m"`) {
		t.Error("the form offers a schedule below the service's minimum of 1 hour")
	}
	if !strings.Contains(page, "at least 1 hour apart") {
		t.Error("the dashboard does not say the minimum interval in words")
	}

	cases := []struct {
		name, field, want string
		form              url.Values
	}{
		{"refused address", "url", "", url.Values{"url": {"http://10.0.0.7/admin"}, "schedule": {"6h"}, "webhook_url": {"hooks.example/lekta"}}},
		{"too frequent", "schedule", "at least 1 hour apart", url.Values{"url": {"http://shop.example/p"}, "schedule": {"30m"}, "webhook_url": {""}}},
		{"refused webhook", "webhook_url", "This webhook address was refused: 127.0.0.1 is a loopback address; a webhook goes only to a public", url.Values{"url": {"http://shop.example/p"}, "schedule": {"weekly"}, "webhook_url": {"http://127.0.0.1:9/hook"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("csrf", tok)
			resp, page := b.send("POST", "/members/sites", tc.form)
			if resp.StatusCode < 400 {
				t.Fatalf("%d, want a refusal", resp.StatusCode)
			}
			msg := errorOf(page, strings.TrimSuffix(tc.field, "_url"))
			if msg == "" || !strings.Contains(msg, tc.want) {
				t.Errorf("no error beside the %s field (want %q):\n%s", tc.field, tc.want, page)
			}
			for _, m := range regexp.MustCompile(`[0-9]+h[0-9]+m[0-9]+s|[0-9]+m0s`).FindAllString(page, -1) {
				t.Errorf("a Go duration on the page: %s", m)
			}
			if u := tc.form.Get("url"); !strings.Contains(page, `value="`+u+`"`) {
				t.Errorf("the page address typed (%s) is gone", u)
			}
			if hook := tc.form.Get("webhook_url"); hook != "" && !strings.Contains(page, `value="`+hook+`"`) {
				t.Errorf("the webhook typed (%s) is gone", hook)
			}
			if s := tc.form.Get("schedule"); s != "30m" && !strings.Contains(page, `value="`+s+`" selected`) {
				t.Errorf("the schedule chosen (%s) is not kept", s)
			}
		})
	}
	if sites, _ := h.db.MemberSites(t.Context(), h.mustMember(t, "ana@example.com")); len(sites) != 0 {
		t.Fatalf("%d sites saved from refused forms", len(sites))
	}
	resp, _ := b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {"http://shop.example/p"}, "schedule": {"12h"}, "webhook_url": {""}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d, want 303 to the saved site's page", resp.StatusCode)
	}
	resp, page = b.send("GET", resp.Header.Get("Location"), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<option value="12h" selected>Every 12 hours</option>`) || !strings.Contains(page, "<dd>Every 12 hours</dd>") {
		t.Fatalf("saved site page: %d\n%s", resp.StatusCode, page)
	}
}
