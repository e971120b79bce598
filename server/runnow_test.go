package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
)

// runNowAnswer is the answer of POST /api/v1/sites/{id}/audits.
type runNowAnswer struct {
	HistoryID string     `json:"history_id"`
	State     string     `json:"state"`
	StartsAt  *time.Time `json:"starts_at"`
	Reason    string     `json:"reason"`
	Entry     *struct {
		ID        string `json:"id"`
		Trigger   string `json:"trigger"`
		ReportID  string `json:"report_id"`
		Cached    bool   `json:"cached"`
		CacheAgeS int64  `json:"cache_age_s"`
	} `json:"entry"`
}

// signedIn is a browser signed in with the member's key.
func signedIn(t *testing.T, h *memberHarness, auth map[string]string) *browser {
	t.Helper()
	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
	if resp, _ := b.send("POST", "/members/sign-in", url.Values{"key": {key}, "csrf": {csrfOf(t, page)}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	return b
}

// auditOnce runs a public audit of u to its end.
func (h *memberHarness) auditOnce(t *testing.T, u string) {
	t.Helper()
	resp, b := h.post(u)
	wantStatus(t, resp, b, http.StatusAccepted)
	h.waitReport(decode[pending](t, b).ID)
}

// TestRunNowCached: a member's run now while a fresh result of the page is
// cached is recorded at once as the member's run, answered from the cache
// with its age, and the site is not contacted (its own log).
func TestRunNowCached(t *testing.T) {
	h := newMemberHarness(t, memberOpts{runs: 10})
	_, auth := h.member("ana@example.com")
	const page = "http://shop.example/js-title.html"
	site := h.saveSite(auth, `{"url":"`+page+`","schedule":"weekly"}`)
	h.auditOnce(t, page)
	seen := len(h.site.HitsOf("shop.example", "/js-title.html"))

	resp, b := h.do("POST", "/api/v1/sites/"+site.ID+"/audits", "", auth)
	a := decode[runNowAnswer](t, b)
	if resp.StatusCode != http.StatusCreated || a.State != "recorded" || a.Entry == nil {
		t.Fatalf("run now with a fresh cached result: %d %s; want 201, state recorded, with its history entry", resp.StatusCode, b)
	}
	if a.Entry.ID != a.HistoryID || a.Entry.Trigger != "member" || !a.Entry.Cached || a.Entry.ReportID == "" || a.Entry.CacheAgeS < 0 {
		t.Fatalf("recorded entry %+v, want trigger member, cached, with a report", *a.Entry)
	}
	hist := h.waitHistory(auth, site.ID, 1)
	if len(hist.Entries) != 1 || hist.Entries[0].ID != a.HistoryID {
		t.Fatalf("history %+v, want the one recorded run", hist.Entries)
	}
	if n := len(h.site.HitsOf("shop.example", "/js-title.html")); n != seen {
		t.Fatalf("the site saw %d requests for the page after the run now, want none", n-seen)
	}
	if _, pg := signedIn(t, h, auth).send("GET", "/members/sites/"+site.ID, nil); strings.Contains(pg, "No re-audits yet") || !strings.Contains(pg, "from the cache") {
		t.Fatalf("the site page does not show the cached run:\n%s", pg)
	}
}

// TestRunNowPending: a member's run now that the host's 1/1m window puts
// off answers pending, with when it starts and why in words, and the site
// page says so instead of "No re-audits yet".
func TestRunNowPending(t *testing.T) {
	h := newMemberHarness(t, memberOpts{runs: 10})
	_, auth := h.member("ana@example.com")
	site := h.saveSite(auth, `{"url":"http://shop.example/js-title.html","schedule":"weekly"}`)
	h.auditOnce(t, "http://shop.example/index.html") // the host's minute is taken
	before := time.Now()

	resp, b := h.do("POST", "/api/v1/sites/"+site.ID+"/audits", "", auth)
	a := decode[runNowAnswer](t, b)
	if resp.StatusCode != http.StatusAccepted || a.State != "pending" || a.StartsAt == nil || !a.StartsAt.After(before) ||
		!strings.Contains(a.Reason, "less than a minute ago") {
		t.Fatalf("run now within the host's minute: %d %s; want 202, state pending, a later starts_at and the reason", resp.StatusCode, b)
	}
	_, pg := signedIn(t, h, auth).send("GET", "/members/sites/"+site.ID, nil)
	want := `<p class="pending">Pending: starts at ` + a.StartsAt.UTC().Format(pendingTime) + " — " + a.Reason
	if !strings.Contains(pg, want) || strings.Contains(pg, "No re-audits yet") {
		t.Fatalf("the site page lacks %q:\n%s", want, pg)
	}
	if n := len(h.site.HitsOf("shop.example", "/js-title.html")); n != 0 {
		t.Fatalf("the site saw %d requests for the page before the run's start", n)
	}
}

// TestSitePageShowsSnoozedRun: a scheduled re-audit that a per-site limit
// put off is on the site page with its due time, its start and why.
func TestSitePageShowsSnoozedRun(t *testing.T) {
	h := newMemberHarness(t, memberOpts{minInterval: time.Second, limits: func(l *cache.Limits) {
		l.Windows = []cache.Window{{N: 1, Per: time.Hour}}
		l.CacheTTL = time.Second
	}})
	_, auth := h.member("ana@example.com")
	s := h.saveSite(auth, `{"url":"http://shop.example/js-title.html","schedule":"1s"}`)
	h.waitHistory(auth, s.ID, 1)
	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	b.send("POST", "/members/sign-in", url.Values{"key": {strings.TrimPrefix(auth["Authorization"], "Bearer ")}, "csrf": {csrfOf(t, page)}})
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, page = b.send("GET", "/members/sites/"+s.ID, nil)
		if strings.Contains(page, "Snoozed: the re-audit due at ") && strings.Contains(page, "put off by a per-site limit") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snoozed re-audit on the site page after 30 s:\n%s", page)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := len(h.site.HitsOf("shop.example", "/js-title.html")); n != 1 {
		t.Fatalf("the site saw %d page requests, want 1: the snoozed run must not reach it", n)
	}
}

// freshAnswer is what a cached run-now answer adds: its words and the
// fresh run it queued or joined.
type freshAnswer struct {
	HistoryID string `json:"history_id"`
	Message   string `json:"message"`
	FreshRun  *struct {
		HistoryID string    `json:"history_id"`
		StartsAt  time.Time `json:"starts_at"`
	} `json:"fresh_run"`
}

// TestRunNowCachedQueuesFreshRun: a run now answered from the cache says
// how old the result is and when a fresh run starts, queues that run once
// (a second press joins it and adds no history row), and the fresh run
// then fetches the page (the harness's plain lane: one request in the
// site's own log) and is
// recorded as the member's run.
func TestRunNowCachedQueuesFreshRun(t *testing.T) {
	h := newMemberHarness(t, memberOpts{runs: 10, limits: func(l *cache.Limits) {
		l.Windows = []cache.Window{{N: 100, Per: time.Hour}}
		l.CacheTTL = 3 * time.Second
	}})
	_, auth := h.member("ana@example.com")
	const page = "http://shop.example/js-title.html"
	site := h.saveSite(auth, `{"url":"`+page+`","schedule":"weekly"}`)
	h.auditOnce(t, page)
	seen := len(h.site.HitsOf("shop.example", "/js-title.html"))

	var first freshAnswer
	for press := range 2 {
		resp, b := h.do("POST", "/api/v1/sites/"+site.ID+"/audits", "", auth)
		a := decode[freshAnswer](t, b)
		if resp.StatusCode != http.StatusCreated || a.FreshRun == nil || !strings.Contains(a.Message, "Answered from the audit of ") ||
			!strings.Contains(a.Message, "so a fresh run starts at "+a.FreshRun.StartsAt.UTC().Format(pendingTime)) {
			t.Fatalf("press %d: %d %s; want 201 with the cached result's age and the fresh run's start", press+1, resp.StatusCode, b)
		}
		if press == 0 {
			first = a
		} else if a.HistoryID != first.HistoryID || a.FreshRun.HistoryID != first.FreshRun.HistoryID {
			t.Fatalf("press 2 answered %s and fresh run %s, want press 1's %s and %s", a.HistoryID, a.FreshRun.HistoryID, first.HistoryID, first.FreshRun.HistoryID)
		}
	}
	if hist := h.waitHistory(auth, site.ID, 1); len(hist.Entries) != 1 {
		t.Fatalf("history after two presses: %d entries, want 1", len(hist.Entries))
	}
	_, pg := signedIn(t, h, auth).send("GET", "/members/sites/"+site.ID, nil)
	if !strings.Contains(pg, "Pending: starts at "+first.FreshRun.StartsAt.UTC().Format(pendingTime)) {
		t.Fatalf("the site page does not show the fresh run waiting:\n%s", pg)
	}
	hist := h.waitHistory(auth, site.ID, 2)
	if e := hist.Entries[0]; e.ID != first.FreshRun.HistoryID || e.Trigger != "member" || e.ReportID == hist.Entries[1].ReportID {
		t.Fatalf("newest entry %+v, want the fresh run %s, by member, with a report of its own", e, first.FreshRun.HistoryID)
	}
	if n := len(h.site.HitsOf("shop.example", "/js-title.html")) - seen; n != 1 {
		t.Fatalf("the site saw %d page requests for the fresh run, want 1: the run fetched the page once", n)
	}
}
