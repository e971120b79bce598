package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// memberHarness is a harness with members: a real records database (SQLite
// file or PostgreSQL) and a real River scheduler working on the server.
type memberHarness struct {
	*harness
	db    *records.DB
	sched *schedule.Scheduler
}

type memberOpts struct {
	postgres    bool
	limits      func(*cache.Limits)
	minInterval time.Duration
	sites       int
	runs        int
	// config changes the server's configuration.
	config func(*Config)
	// gated holds every render until the test opens the gate.
	gated bool
}

func newMemberHarness(tb testing.TB, o memberOpts) *memberHarness {
	tb.Helper()
	ctx := context.Background()
	rc := records.Config{DataDir: tb.TempDir()}
	if o.postgres {
		rc = records.Config{DatabaseURL: pgtest.Database(tb), SecretsKeyFile: filepath.Join(tb.TempDir(), records.SecretsKeyName)}
		if err := records.MakeSecretsKey(rc.SecretsKeyFile); err != nil {
			tb.Fatal(err)
		}
	}
	db, err := records.Open(ctx, rc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	lim := cache.Defaults()
	if o.limits != nil {
		o.limits(&lim)
	}
	mem, err := cache.NewMemoryStore(lim, time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	var sched *schedule.Scheduler
	h := newInstance(tb, testsite.Start(tb), mem, lim, func(c *harnessConfig) {
		c.records, c.minInterval = db, cmp.Or(o.minInterval, time.Hour)
		c.riverDir, c.databaseURL = rc.DataDir, rc.DatabaseURL
		c.SitesPerMember, c.RunsPerHour = o.sites, o.runs
		c.started = func(s *schedule.Scheduler) { sched = s }
		if o.config != nil {
			o.config(&c.Config)
		}
		if o.gated {
			gated(c)
		}
	})
	return &memberHarness{harness: h, db: db, sched: sched}
}

// member adds a member and returns the bearer header of their key.
func (h *memberHarness) member(email string) (records.Member, map[string]string) {
	h.tb.Helper()
	m, key, err := h.db.AddMember(context.Background(), email, time.Now())
	if err != nil {
		h.tb.Fatal(err)
	}
	return m, map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
}

type siteAnswer struct {
	ID            string `json:"id"`
	URL           string `json:"url"`
	Schedule      string `json:"schedule"`
	WebhookURL    string `json:"webhook_url"`
	WebhookSecret string `json:"webhook_secret"`
	BadgeURL      string `json:"badge_url"`
	LastWebhook   *struct {
		Result string `json:"result"`
	} `json:"last_webhook"`
}

type historyAnswer struct {
	Entries []struct {
		ID         string           `json:"id"`
		Status     string           `json:"status"`
		Trigger    string           `json:"trigger"`
		ReportID   string           `json:"report_id"`
		Rule       string           `json:"rule"`
		TextShare  *float64         `json:"text_share"`
		Regression bool             `json:"regression"`
		Changes    schedule.Changes `json:"changes"`
	} `json:"entries"`
	Next string `json:"next"`
}

func (h *memberHarness) saveSite(auth map[string]string, body string) siteAnswer {
	h.tb.Helper()
	resp, b := h.do("POST", "/api/v1/sites", body, auth)
	if resp.StatusCode != http.StatusCreated {
		h.tb.Fatalf("POST /api/v1/sites %s: %d %s", body, resp.StatusCode, b)
	}
	return decode[siteAnswer](h.tb, b)
}

// waitHistory polls the site's history until it has n entries.
func (h *memberHarness) waitHistory(auth map[string]string, siteID string, n int) historyAnswer {
	h.tb.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		resp, b := h.do("GET", "/api/v1/sites/"+siteID+"/history?limit=100", "", auth)
		if resp.StatusCode != http.StatusOK {
			h.tb.Fatalf("history: %d %s", resp.StatusCode, b)
		}
		ha := decode[historyAnswer](h.tb, b)
		if len(ha.Entries) >= n {
			return ha
		}
		if time.Now().After(deadline) {
			h.tb.Fatalf("site %s: %d history entries after 45 s, want %d", siteID, len(ha.Entries), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (h *memberHarness) siteCount() int {
	var n int
	if err := h.db.SQL().QueryRow("SELECT count(*) FROM sites").Scan(&n); err != nil {
		h.tb.Fatal(err)
	}
	return n
}

func TestSitesAPI(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			h := newMemberHarness(t, memberOpts{postgres: pg, sites: 2, runs: 2})
			ana, auth := h.member("ana@example.com")
			_, boAuth := h.member("bo@example.com")
			s := h.saveSite(auth, `{"url":"http://shop.example/js-title.html","schedule":"daily","webhook_url":"http://hooks.example/in"}`)
			if !strings.HasPrefix(s.ID, "s_") || !strings.HasPrefix(s.WebhookSecret, "whsec_") || !strings.HasPrefix(s.BadgeURL, "/badge/") || strings.Contains(s.BadgeURL, s.ID) {
				t.Fatalf("saved site %+v", s)
			}
			// The secret is shown once.
			_, b := h.do("GET", "/api/v1/sites/"+s.ID, "", auth)
			if got := decode[siteAnswer](t, b); got.WebhookSecret != "" || got.Schedule != "daily" {
				t.Fatalf("GET site shows %+v", got)
			}
			bad := []struct {
				name, method, path, body string
				hdr                      map[string]string
				status                   int
				code                     string
			}{
				{"no key", "GET", "/api/v1/sites", "", nil, 401, "unauthorized"},
				{"wrong key", "GET", "/api/v1/sites", "", map[string]string{"Authorization": "Bearer lekta_nope"}, 401, "unauthorized"},
				{"bad schedule", "POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"hourly-ish"}`, auth, 400, "bad_schedule"},
				{"too frequent", "POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"10m"}`, auth, 400, "bad_schedule"},
				{"refused URL", "POST", "/api/v1/sites", `{"url":"http://127.0.0.1/","schedule":"daily"}`, auth, 403, "target_refused"},
				{"invalid URL", "POST", "/api/v1/sites", `{"url":"ftp://shop.example/","schedule":"daily"}`, auth, 400, "invalid_url"},
				{"private webhook", "POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"daily","webhook_url":"http://10.0.0.8/hook"}`, auth, 400, "target_refused"},
				{"metadata webhook", "POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"daily","webhook_url":"http://169.254.169.254/"}`, auth, 400, "target_refused"},
				{"unknown field", "POST", "/api/v1/sites", `{"url":"http://shop.example/","schedule":"daily","admin":true}`, auth, 400, "bad_request"},
				{"oversize", "POST", "/api/v1/sites", `{"url":"http://shop.example/` + strings.Repeat("a", 20<<10) + `","schedule":"daily"}`, auth, 413, "too_large"},
				{"other member reads", "GET", "/api/v1/sites/" + s.ID, "", boAuth, 403, "forbidden"},
				{"other member history", "GET", "/api/v1/sites/" + s.ID + "/history", "", boAuth, 403, "forbidden"},
				{"other member patch", "PATCH", "/api/v1/sites/" + s.ID, `{"schedule":"weekly"}`, boAuth, 403, "forbidden"},
				{"other member delete", "DELETE", "/api/v1/sites/" + s.ID, "", boAuth, 403, "forbidden"},
				{"other member runs", "POST", "/api/v1/sites/" + s.ID + "/audits", "", boAuth, 403, "forbidden"},
				{"no such site", "GET", "/api/v1/sites/s_nothing", "", auth, 404, "not_found"},
				{"bad limit", "GET", "/api/v1/sites/" + s.ID + "/history?limit=0", "", auth, 400, "bad_request"},
				{"bad patch", "PATCH", "/api/v1/sites/" + s.ID, `{"schedule":"1s"}`, auth, 400, "bad_schedule"},
			}
			for _, tc := range bad {
				before := h.siteCount()
				resp, b := h.do(tc.method, tc.path, tc.body, tc.hdr)
				e := decode[apiErr](t, b)
				if resp.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Message == "" {
					t.Errorf("%s: %d %s; want %d %s", tc.name, resp.StatusCode, b, tc.status, tc.code)
				}
				if strings.Contains(string(b), "js-title") && strings.Contains(tc.name, "other member") {
					t.Errorf("%s: the answer shows the other member's site: %s", tc.name, b)
				}
				if h.siteCount() != before {
					t.Errorf("%s: a site was stored", tc.name)
				}
			}
			if got, _ := h.db.Site(context.Background(), s.ID); got.Schedule != "daily" {
				t.Fatalf("a refused PATCH changed the schedule to %q", got.Schedule)
			}
			// The per-member site limit.
			h.saveSite(auth, `{"url":"http://other.example/","schedule":"weekly"}`)
			if resp, b := h.do("POST", "/api/v1/sites", `{"url":"http://a.example/","schedule":"weekly"}`, auth); resp.StatusCode != 403 || !strings.Contains(string(b), "limit_reached") {
				t.Fatalf("third site with a limit of 2: %d %s", resp.StatusCode, b)
			}
			// Run now: a member-triggered audit recorded in the history.
			resp, b := h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth)
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("run now: %d %s", resp.StatusCode, b)
			}
			ha := h.waitHistory(auth, s.ID, 1)
			e := ha.Entries[0]
			if e.Trigger != "member" || e.Status != "complete" || e.ReportID == "" || e.TextShare == nil || !e.Changes.First {
				t.Fatalf("history entry %+v", e)
			}
			rep := h.waitReport(e.ReportID)
			if rep.Trigger != audit.TriggerMember {
				t.Fatalf("report trigger %q", rep.Trigger)
			}
			// The badge shows the latest re-audit, and never starts one.
			hits := len(h.site.Hits())
			resp, b = h.do("GET", s.BadgeURL, "", nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(b), "AI crawlers: see ") {
				t.Fatalf("badge: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			if resp, _ := h.do("GET", "/badge/"+s.ID+".svg", "", nil); resp.StatusCode != 404 {
				t.Fatalf("the site id opens the badge: %d", resp.StatusCode)
			}
			if len(h.site.Hits()) != hits {
				t.Fatal("a badge request contacted the site")
			}
			// Run-now allowance per hour.
			h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth)
			resp, b = h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("third run now in an hour with 2 allowed: %d %s", resp.StatusCode, b)
			}
			// A revoked key stops at once.
			if err := h.db.RevokeMember(context.Background(), ana.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if resp, b := h.do("GET", "/api/v1/sites", "", auth); resp.StatusCode != 401 || !strings.Contains(string(b), "revoked") {
				t.Fatalf("revoked key: %d %s", resp.StatusCode, b)
			}
			if resp, _ := h.do("GET", "/api/v1/sites", "", boAuth); resp.StatusCode != 200 {
				t.Fatalf("another member's key after a revoke: %d", resp.StatusCode)
			}
		})
	}
}

// TestScheduledReaudits runs a saved site on a seconds-long interval through
// River: each recorded re-audit is one page request at the site (from its
// own log); the per-host window refuses the runs in between, which are
// snoozed and never reach the site; the disallowing site is skipped with
// the rule and only robots.txt is fetched.
func TestScheduledReaudits(t *testing.T) {
	h := newMemberHarness(t, memberOpts{minInterval: time.Second, limits: func(l *cache.Limits) {
		l.Windows = []cache.Window{{N: 1, Per: 3 * time.Second}}
		l.CacheTTL = time.Second
	}})
	_, auth := h.member("ana@example.com")
	allowed := h.saveSite(auth, `{"url":"http://shop.example/js-title.html","schedule":"1s"}`)
	h.site.SetRobots("other.example", 200, "User-agent: *\nDisallow: /private\n")
	blocked := h.saveSite(auth, `{"url":"http://other.example/private/page.html","schedule":"2s"}`)
	ha := h.waitHistory(auth, allowed.ID, 3)
	hb := h.waitHistory(auth, blocked.ID, 1)
	if err := h.sched.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ha = h.waitHistory(auth, allowed.ID, len(ha.Entries))
	for _, e := range ha.Entries {
		if e.Trigger != "scheduled" || e.Status != "complete" {
			t.Fatalf("entry %+v", e)
		}
	}
	pages := h.site.HitsOf("shop.example", "/js-title.html")
	if len(pages) != len(ha.Entries) {
		t.Fatalf("the site saw %d page requests for %d recorded re-audits: a refused or repeated run reached it", len(pages), len(ha.Entries))
	}
	for i := 1; i < len(pages); i++ {
		if gap := pages[i].Start.Sub(pages[i-1].Start); gap < 2500*time.Millisecond {
			t.Fatalf("page requests %d and %d %s apart, inside the 3 s window", i-1, i, gap)
		}
	}
	for _, e := range hb.Entries {
		if e.Status != "skipped" || !strings.Contains(e.Rule, "Disallow: /private") {
			t.Fatalf("disallowed site's entry %+v: want skipped with the rule", e)
		}
	}
	for _, hit := range h.site.Hits() {
		if hit.Host == "other.example" && hit.Path != "/robots.txt" {
			t.Fatalf("the disallowing site was fetched beyond robots.txt: %s", hit.Path)
		}
	}
	if e := hb.Entries[len(hb.Entries)-1]; !e.Regression {
		t.Fatalf("the first re-audit of a skipped page is not a regression: %+v", e)
	}
	fmt.Fprintf(testWriter{t}, "%d re-audits recorded, %d page requests\n", len(ha.Entries), len(pages))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

var _ = json.Marshal

// TestWebhookOnRegression: a re-audit that regresses (the page became
// skipped) posts a lekta.event/v1 event signed with the site's secret to
// the member's endpoint, through the guard; the outcome is on the site.
func TestWebhookOnRegression(t *testing.T) {
	h := newMemberHarness(t, memberOpts{minInterval: time.Second, limits: func(l *cache.Limits) {
		l.Windows = []cache.Window{{N: 10, Per: time.Minute}}
		l.CacheTTL = time.Millisecond
	}})
	type delivery struct {
		sig  string
		body []byte
	}
	got := make(chan delivery, 4)
	h.site.Handle("POST /hook", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64<<10)
		n, _ := io.ReadFull(r.Body, b)
		got <- delivery{r.Header.Get("Lekta-Signature"), b[:n]}
		w.WriteHeader(http.StatusNoContent)
	}))
	_, auth := h.member("ana@example.com")
	s := h.saveSite(auth, `{"url":"http://other.example/page.html","schedule":"daily","webhook_url":"http://hooks.example/hook"}`)
	if resp, b := h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth); resp.StatusCode != 202 {
		t.Fatalf("run now: %d %s", resp.StatusCode, b)
	}
	if first := h.waitHistory(auth, s.ID, 1).Entries[0]; first.Regression {
		t.Fatalf("the first re-audit is a regression: %+v", first)
	}
	// Now robots.txt disallows the page: a new critical finding.
	h.site.SetRobots("other.example", 200, "User-agent: *\nDisallow: /\n")
	time.Sleep(5 * time.Millisecond) // past the 1 ms cache
	if resp, b := h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth); resp.StatusCode != 202 {
		t.Fatalf("run now: %d %s", resp.StatusCode, b)
	}
	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook within 30 s")
	}
	if err := schedule.Verify(s.WebhookSecret, d.sig, d.body, time.Now(), 5*time.Minute); err != nil {
		t.Fatalf("signature %q: %v", d.sig, err)
	}
	var ev schedule.Event
	if err := json.Unmarshal(d.body, &ev); err != nil || ev.Schema != "lekta.event/v1" || ev.Type != "regression" || ev.Site != s.ID ||
		ev.ReportID == "" || ev.ReportURL != "/r/"+ev.ReportID || !ev.Changes.Regression {
		t.Fatalf("event %s (%v)", d.body, err)
	}
	// Member-triggered runs are user-triggered for robots: the page was fetched.
	if len(h.site.HitsOf("other.example", "/page.html")) != 2 {
		t.Fatal("a member's run now of a disallowed page did not run as a user-triggered fetch")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, b := h.do("GET", "/api/v1/sites/"+s.ID, "", auth)
		if a := decode[siteAnswer](t, b); a.LastWebhook != nil && strings.HasPrefix(a.LastWebhook.Result, "delivered, answered 204") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the site does not show the delivery: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
