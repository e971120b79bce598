package server

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestKeysPageFlashAndOwnership: every post of the keys page answers 303
// to it; a refusal is said there once; a member cannot revoke another's
// key (which keeps working); the operator's key keeps working beside the
// member's own.
func TestKeysPageFlashAndOwnership(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	_, anaAuth := h.member("ana@example.com")
	_, boAuth := h.member("bo@example.com")
	ana, bo := signedIn(t, h, anaAuth), signedIn(t, h, boAuth)
	_, page := ana.send("GET", "/members/keys", nil)
	tok := csrfOf(t, page)
	resp, body := ana.send("POST", "/members/keys", url.Values{"csrf": {tok}, "label": {"bad\u202elabel"}})
	wantSeeOther(t, "a bad label", resp, body, "/members/keys")
	if _, page := ana.send("GET", "/members/keys", nil); !strings.Contains(page, "A label is at most 100 bytes") {
		t.Fatalf("the refusal of a bad label is not shown:\n%s", page)
	}
	if _, page := ana.send("GET", "/members/keys", nil); strings.Contains(page, "A label is at most") {
		t.Fatal("the refusal is shown again on a reload")
	}
	ana.send("POST", "/members/keys", url.Values{"csrf": {tok}, "label": {"laptop"}})
	_, page = ana.send("GET", "/members/keys", nil)
	key := newKeyOnPage.FindStringSubmatch(page)
	revoke := regexp.MustCompile(`action="(/members/keys/k_[a-z0-9]+/revoke)"`).FindStringSubmatch(page)
	if key == nil || revoke == nil {
		t.Fatalf("the keys page after making a key:\n%s", page)
	}
	_, boPage := bo.send("GET", "/members/keys", nil)
	resp, body = bo.send("POST", revoke[1], url.Values{"csrf": {csrfOf(t, boPage)}})
	wantSeeOther(t, "revoke another member's key", resp, body, "/members/keys")
	if _, boPage := bo.send("GET", "/members/keys", nil); !strings.Contains(boPage, "You have no key with this id") || strings.Contains(boPage, "laptop") {
		t.Fatalf("another member's keys page after trying to revoke ana's key:\n%s", boPage)
	}
	for name, auth := range map[string]string{"own key": key[1], "operator's key": strings.TrimPrefix(anaAuth["Authorization"], "Bearer ")} {
		if resp, b := h.do("GET", "/api/v1/sites", "", map[string]string{"Authorization": "Bearer " + auth}); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s, want 200", name, resp.StatusCode, b)
		}
	}
	if resp, _ := ana.send("POST", "/members/keys", url.Values{"label": {"no token"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("making a key without the form's token: %d, want 403", resp.StatusCode)
	}
}
