package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/schedule"
)

// wantInfoURL checks, from the test site's own request log, that both lanes
// of the audits of path named infoURL in their user agents: the plain lane
// exactly as /bot says, the render lane as the browser's agent with the
// LektaBot suffix.
func wantInfoURL(t *testing.T, site *testsite.Site, host, path, infoURL string) {
	t.Helper()
	plain := "Mozilla/5.0 (compatible; LektaBot/0.1; +" + infoURL + ")"
	suffix := " LektaBot/0.1 (+" + infoURL + ")"
	var plainSeen, renderSeen bool
	for _, h := range site.HitsOf(host, path) {
		switch {
		case h.UserAgent == plain:
			plainSeen = true
		case strings.HasSuffix(h.UserAgent, suffix) && strings.Contains(h.UserAgent, "Chrome/"):
			renderSeen = true
		default:
			t.Errorf("%s%s was requested as %q, which names no %s", host, path, h.UserAgent, infoURL)
		}
	}
	if !plainSeen || !renderSeen {
		t.Errorf("%s%s: plain lane with %q seen %v, render lane ending %q seen %v", host, path, plain, plainSeen, suffix, renderSeen)
	}
}

// TestServePublicURL runs lekta serve with --public-url and checks where
// it reaches outside: both lanes' user agents (at the site) name its /bot,
// /bot shows those user agents and links absolutely, a saved site's badge
// address is absolute, and a webhook event's report_url, as the member's
// receiver gets it, is the report's absolute address.
func TestServePublicURL(t *testing.T) {
	site := testsite.Start(t)
	site.SetRobots("other.example", http.StatusServiceUnavailable, "")
	events := make(chan []byte, 4)
	site.Handle("POST /hook", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		events <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	dir := t.TempDir()
	key := mustMemberKey(t, dir)
	s := startServe(t, site, []string{"shop.example", "other.example", "hooks.example"},
		"--data-dir", dir, "--public-url", "https://audit.example.com/")
	const public = "https://audit.example.com"

	resp, b := s.postAPI("http://shop.example/js-title.html")
	id := servePendingID(t, resp, b)
	if r := s.waitReport(id); r.Lanes.Render.Page == nil || r.Lanes.Plain.Page == nil {
		t.Fatalf("report %s: a lane has no page (%s)", id, r.Status)
	}
	wantInfoURL(t, site, "shop.example", "/js-title.html", public+"/bot")

	resp, b = s.do("GET", "/bot", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/bot: %d", resp.StatusCode)
	}
	bot := string(b)
	for _, want := range []string{
		`<code id="plain-ua">Mozilla/5.0 (compatible; LektaBot/0.1; &#43;` + public + `/bot)</code>`,
		` LektaBot/0.1 (&#43;` + public + `/bot)</code>`,
		`<a href="` + public + `/bot/verify">`,
	} {
		if !strings.Contains(bot, want) {
			t.Errorf("/bot lacks %s", want)
		}
	}

	auth := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	resp, b = s.do("POST", "/api/v1/sites", `{"url":"http://other.example/page.html","schedule":"daily","webhook_url":"http://hooks.example/hook"}`, auth)
	var saved struct {
		ID       string `json:"id"`
		BadgeURL string `json:"badge_url"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &saved) != nil {
		t.Fatalf("save site: %d %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(saved.BadgeURL, public+"/badge/") || !strings.HasSuffix(saved.BadgeURL, ".svg") {
		t.Errorf("badge_url %q, want it under %s/badge/", saved.BadgeURL, public)
	}
	// robots.txt answers 503, so the run is skipped: a regression on the
	// first run, which the webhook reports.
	if resp, b := s.do("POST", "/api/v1/sites/"+saved.ID+"/audits", "", auth); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("run now: %d %s", resp.StatusCode, b)
	}
	var ev schedule.Event
	select {
	case body := <-events:
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatalf("event %s: %v", body, err)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("no webhook within 90 s\n%s", s.stderr)
	}
	if ev.ReportID == "" || ev.ReportURL != public+"/r/"+ev.ReportID {
		t.Errorf("webhook report_url %q (report %q), want %s/r/<report id>", ev.ReportURL, ev.ReportID, public)
	}
}

// TestAuditBotInfoURL: lekta audit --bot-info-url sends that address in
// both lanes' user agents, as the site's request log shows.
func TestAuditBotInfoURL(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	site := testsite.Start(t)
	const info = "https://ops.example.org/lektabot"
	if code, _, errOut := auditCLI(t, site, "--json", "--bot-info-url", info, "http://shop.example/js-title.html"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantInfoURL(t, site, "shop.example", "/js-title.html", info)
}
