package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/records"
)

// memberSites lists the member's saved sites straight from the records.
func (h *memberHarness) memberSites(tb testing.TB, email string) []records.Site {
	tb.Helper()
	sites, err := h.db.MemberSites(tb.Context(), h.mustMember(tb, email))
	if err != nil {
		tb.Fatal(err)
	}
	return sites
}

// wantSeeOther fails unless resp is a 303 to location.
func wantSeeOther(tb testing.TB, what string, resp *http.Response, body, location string) {
	tb.Helper()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != location {
		tb.Fatalf("%s: %d to %q, want 303 See Other to %s\n%s", what, resp.StatusCode, resp.Header.Get("Location"), location, body)
	}
}

// noSecretOutside fails when the webhook secret travels in a redirect's
// address or in a cookie, or when a cookie set with it is not HttpOnly and
// SameSite=Lax.
func noSecretOutside(tb testing.TB, resp *http.Response, secret string) {
	tb.Helper()
	if strings.Contains(resp.Header.Get("Location"), secret) {
		tb.Errorf("the redirect's address holds the webhook secret: %s", resp.Header.Get("Location"))
	}
	for _, c := range resp.Cookies() {
		if strings.Contains(c.Value, secret) {
			tb.Errorf("cookie %s holds the webhook secret", c.Name)
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
			tb.Errorf("cookie %s: HttpOnly=%v SameSite=%v, want HttpOnly and Lax", c.Name, c.HttpOnly, c.SameSite)
		}
	}
}

// TestSiteFormRedirectsAfterSave: saving a site or its changes answers 303
// See Other to the site's page, so a reload never posts again; the page
// after the redirect shows a new webhook secret once, and a reload of it
// neither shows it again nor saves anything.
func TestSiteFormRedirectsAfterSave(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	b := signedIn(t, h, auth)
	_, page := b.send("GET", "/members/sites", nil)
	tok := csrfOf(t, page)
	resp, body := b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {"http://shop.example/p"},
		"schedule": {"daily"}, "webhook_url": {"http://hooks.example/in"}})
	sites := h.memberSites(t, "ana@example.com")
	if len(sites) != 1 {
		t.Fatalf("%d sites saved, want 1", len(sites))
	}
	loc, secret := "/members/sites/"+sites[0].ID, sites[0].WebhookSecret
	wantSeeOther(t, "save a site", resp, body, loc)
	noSecretOutside(t, resp, secret)
	if resp, page := b.send("GET", loc, nil); resp.StatusCode != http.StatusOK || !strings.Contains(page, secret) {
		t.Fatalf("the page after saving: %d, webhook secret shown %v; want 200 with the secret\n%s", resp.StatusCode, strings.Contains(page, secret), page)
	}
	for i := range 2 {
		if resp, page := b.send("GET", loc, nil); resp.StatusCode != http.StatusOK || strings.Contains(page, secret) {
			t.Fatalf("reload %d of the site page: %d, webhook secret shown %v; want 200 without it", i+1, resp.StatusCode, strings.Contains(page, secret))
		}
	}
	if n := h.siteCount(); n != 1 {
		t.Fatalf("%d sites after reloading the page, want 1", n)
	}

	resp, body = b.send("POST", loc, url.Values{"csrf": {tok}, "url": {"http://shop.example/p"},
		"schedule": {"weekly"}, "webhook_url": {"http://hooks.example/other"}})
	wantSeeOther(t, "save changes", resp, body, loc)
	changed, err := h.db.Site(t.Context(), sites[0].ID)
	if err != nil || changed.Schedule != "weekly" || changed.WebhookSecret == secret {
		t.Fatalf("after the change: %+v, %v; want weekly with a new secret", changed, err)
	}
	noSecretOutside(t, resp, changed.WebhookSecret)
	if _, page := b.send("GET", loc, nil); !strings.Contains(page, changed.WebhookSecret) {
		t.Fatalf("the page after changing the webhook does not show its new secret:\n%s", page)
	}
	if _, page := b.send("GET", loc, nil); strings.Contains(page, changed.WebhookSecret) {
		t.Fatal("a reload shows the new webhook secret again")
	}
	resp, body = b.send("POST", loc, url.Values{"csrf": {tok}, "url": {"http://shop.example/p"},
		"schedule": {"daily"}, "webhook_url": {"http://hooks.example/other"}})
	wantSeeOther(t, "save a new schedule", resp, body, loc)
	if _, page := b.send("GET", loc, nil); strings.Contains(page, changed.WebhookSecret) {
		t.Fatal("a change that kept the webhook shows its secret")
	}
}

// TestSiteFormDuplicateURL: saving a URL the member already saved, however
// it is written, takes the member to that site with a note and saves
// nothing; changing another site's URL to it is refused beside the field.
func TestSiteFormDuplicateURL(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	b := signedIn(t, h, auth)
	_, page := b.send("GET", "/members/sites", nil)
	tok := csrfOf(t, page)
	save := func(u, sched string) (*http.Response, string) {
		return b.send("POST", "/members/sites", url.Values{"csrf": {tok}, "url": {u}, "schedule": {sched}, "webhook_url": {""}})
	}
	save("http://shop.example/p", "daily")
	first := h.memberSites(t, "ana@example.com")
	if len(first) != 1 {
		t.Fatalf("%d sites saved, want 1", len(first))
	}
	loc := "/members/sites/" + first[0].ID
	b.send("GET", loc, nil)
	resp, body := save("http://Shop.Example/p#reviews", "weekly")
	wantSeeOther(t, "save the same URL again", resp, body, loc)
	if n := h.siteCount(); n != 1 {
		t.Fatalf("%d sites after saving the same URL twice, want 1", n)
	}
	if got, _ := h.db.Site(t.Context(), first[0].ID); got.Schedule != "daily" {
		t.Fatalf("saving the same URL again changed the saved site's schedule to %q", got.Schedule)
	}
	if _, page := b.send("GET", loc, nil); !strings.Contains(page, "You already saved this URL") {
		t.Fatalf("the saved site's page does not say it was already saved:\n%s", page)
	}
	if _, page := b.send("GET", loc, nil); strings.Contains(page, "You already saved this URL") {
		t.Fatal("the note stays on a reload")
	}

	save("http://other.example/", "daily")
	var other records.Site
	for _, s := range h.memberSites(t, "ana@example.com") {
		if s.ID != first[0].ID {
			other = s
		}
	}
	resp, body = b.send("POST", "/members/sites/"+other.ID, url.Values{"csrf": {tok}, "url": {"http://shop.example/p"}, "schedule": {"daily"}, "webhook_url": {""}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(errorOf(body, "url"), "http://shop.example/p") {
		t.Fatalf("changing a site to a URL saved already: %d, error beside the address %q; want 409 naming it\n%s", resp.StatusCode, errorOf(body, "url"), body)
	}
	if got, _ := h.db.Site(t.Context(), other.ID); got.URL != "http://other.example/" {
		t.Fatalf("the refused change stored URL %q", got.URL)
	}
}

// duplicateAnswer is the API's 409 for a URL saved already.
type duplicateAnswer struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		SiteID  string `json:"site_id"`
	} `json:"error"`
}

// TestSitesAPIDuplicateURL: POST /api/v1/sites of a URL the member saved
// already, and a PATCH of another site to it, answer 409 with the saved
// site's id and its address in Location, and store nothing.
func TestSitesAPIDuplicateURL(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			h := newMemberHarness(t, memberOpts{postgres: pg})
			_, auth := h.member("ana@example.com")
			_, boAuth := h.member("bo@example.com")
			s := h.saveSite(auth, `{"url":"http://shop.example/p","schedule":"daily"}`)
			conflict := func(what string, resp *http.Response, b []byte) {
				t.Helper()
				a := decode[duplicateAnswer](t, b)
				if resp.StatusCode != http.StatusConflict || a.Error.Code != "already_saved" || a.Error.SiteID != s.ID ||
					a.Error.Message == "" || resp.Header.Get("Location") != "/api/v1/sites/"+s.ID {
					t.Fatalf("%s: %d Location %q %s; want 409 already_saved with site_id %s and its Location", what, resp.StatusCode, resp.Header.Get("Location"), b, s.ID)
				}
			}
			resp, b := h.do("POST", "/api/v1/sites", `{"url":"http://SHOP.example/p#top","schedule":"weekly"}`, auth)
			conflict("POST of a saved URL", resp, b)
			if n := h.siteCount(); n != 1 {
				t.Fatalf("%d sites after saving the same URL twice, want 1", n)
			}
			other := h.saveSite(auth, `{"url":"http://other.example/","schedule":"daily"}`)
			resp, b = h.do("PATCH", "/api/v1/sites/"+other.ID, `{"url":"http://shop.example/p"}`, auth)
			conflict("PATCH to a saved URL", resp, b)
			if got, _ := h.db.Site(context.Background(), other.ID); got.URL != "http://other.example/" {
				t.Fatalf("the refused PATCH stored URL %q", got.URL)
			}
			if resp, b := h.do("PATCH", "/api/v1/sites/"+other.ID, `{"url":"http://other.example/","schedule":"weekly"}`, auth); resp.StatusCode != http.StatusOK {
				t.Fatalf("PATCH keeping the site's own URL: %d %s, want 200", resp.StatusCode, b)
			}
			// Another member may save the same URL.
			h.saveSite(boAuth, `{"url":"http://shop.example/p","schedule":"daily"}`)
		})
	}
}

// TestSiteFormRemoveConfirms: "Remove this site" leads to a page that
// names the URL and the history going with it and removes nothing; its
// form removes the site and its history and answers 303 to the dashboard.
func TestSiteFormRemoveConfirms(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, auth := h.member("ana@example.com")
	_, boAuth := h.member("bo@example.com")
	s := h.saveSite(auth, `{"url":"http://shop.example/p","schedule":"daily"}`)
	base := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for i := range 3 {
		due := base.Add(time.Duration(i) * time.Hour)
		if _, err := h.db.AddEntry(context.Background(), records.Entry{ID: records.HistoryID(s.ID, due), SiteID: s.ID, DueAt: due,
			RanAt: due, Trigger: "scheduled", Status: "complete", ReportID: fmt.Sprintf("R%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	b := signedIn(t, h, auth)
	loc, confirm := "/members/sites/"+s.ID, "/members/sites/"+s.ID+"/delete"
	_, page := b.send("GET", loc, nil)
	if strings.Contains(page, `method="post" action="`+confirm+`"`) || !strings.Contains(page, `action="`+confirm+`"`) && !strings.Contains(page, `href="`+confirm+`"`) {
		t.Fatalf("the site page's remove button does not lead to the confirmation page:\n%s", page)
	}
	resp, page := b.send("GET", confirm, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "http://shop.example/p") || !strings.Contains(page, "its 3 history entries") {
		t.Fatalf("confirmation page: %d; want 200 naming the URL and its 3 history entries\n%s", resp.StatusCode, page)
	}
	if !strings.Contains(page, `<form method="post" action="`+confirm+`"`) || !strings.Contains(page, `href="`+loc+`">Keep it</a>`) {
		t.Fatalf("the confirmation page has no remove form or no Keep it link:\n%s", page)
	}
	if n := h.siteCount(); n != 1 {
		t.Fatal("the confirmation page removed the site")
	}
	bo := signedIn(t, h, boAuth)
	if resp, page := bo.send("GET", confirm, nil); resp.StatusCode != http.StatusForbidden || strings.Contains(page, "shop.example") {
		t.Fatalf("another member's confirmation page: %d", resp.StatusCode)
	}
	resp, body := b.send("POST", confirm, url.Values{"csrf": {csrfOf(t, page)}})
	wantSeeOther(t, "remove", resp, body, "/members/sites")
	if n := h.siteCount(); n != 0 {
		t.Fatalf("%d sites after removing, want 0", n)
	}
	if es, _ := h.db.History(context.Background(), s.ID, 10, time.Time{}); len(es) != 0 {
		t.Fatalf("%d history entries left after removing the site", len(es))
	}
	if resp, _ := b.send("GET", confirm, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("confirmation page of a removed site: %d, want 404", resp.StatusCode)
	}
}

// TestNoteCookie: the cookie that leaves a note for a site's page holds
// the note and the site's id only; behind TLS it is Secure with the
// __Host- prefix and Path "/", else its Path is the site's page.
func TestNoteCookie(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, publicURL, cookie, path string
		secure                        bool
	}{
		{"plain http", "", noteCookie, "/members/sites/s_abc", false},
		{"https public URL", "https://lekta.example", "__Host-" + noteCookie, "/", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: Config{PublicURL: tc.publicURL}}
			c := s.noteFor(httptest.NewRequest("GET", "/members/sites/s_abc", nil), "s_abc", noteSecret, 300)
			if c.Name != tc.cookie || c.Path != tc.path || c.Secure != tc.secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode ||
				c.Domain != "" || c.Value != noteSecret+".s_abc" || c.MaxAge != 300 {
				t.Fatalf("note cookie %+v; want %s, Path %s, Secure %v, HttpOnly, Lax, value %s.s_abc", c, tc.cookie, tc.path, tc.secure, noteSecret)
			}
		})
	}
}
