package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
)

// TestServeMembers is a member's whole flow through a real lekta serve on
// the SQLite default with real Chromium and River: the operator adds the
// member, the member saves a site on a seconds-long schedule over the API,
// River re-audits it, the history shows the scheduled re-audits, each one
// page request at the site (its own log), and /bot names the window and
// the minimum interval in force.
func TestServeMembers(t *testing.T) {
	site := testsite.Start(t)
	dir := t.TempDir()
	key := mustMemberKey(t, dir)
	s := startServe(t, site, []string{"shop.example"}, "--data-dir", dir, "--rate", "1/2s", "--cache-ttl", "1s",
		"--reaudit-min-interval", "2s", "--reaudit-window", "02:00-04:30", "--reaudit-timezone", "Europe/Berlin")
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	st, b := do("POST", "/api/v1/sites", `{"url":"http://shop.example/js-title.html","schedule":"1s"}`)
	if st != 400 || !strings.Contains(string(b), "bad_schedule") {
		t.Fatalf("a schedule below --reaudit-min-interval: %d %s", st, b)
	}
	st, b = do("POST", "/api/v1/sites", `{"url":"http://shop.example/js-title.html","schedule":"2s"}`)
	if st != 201 {
		t.Fatalf("save site: %d %s", st, b)
	}
	var saved struct{ ID string }
	json.Unmarshal(b, &saved)
	var hist struct {
		Entries []struct {
			Trigger, Status string
			ReportID        string `json:"report_id"`
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(hist.Entries) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d re-audits after 90 s, want 2\n%s", len(hist.Entries), s.stderr)
		}
		time.Sleep(300 * time.Millisecond)
		_, b = do("GET", "/api/v1/sites/"+saved.ID+"/history", "")
		json.Unmarshal(b, &hist)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, e := range hist.Entries {
		if e.Trigger != "scheduled" || (e.Status != "complete" && e.Status != "partial") || e.ReportID == "" {
			t.Fatalf("entry %+v", e)
		}
	}
	// One plain and one rendered request per recorded re-audit, at most
	// (the history read last may miss one that was recorded after it).
	pages := site.HitsOf("shop.example", "/js-title.html")
	if len(pages) < 2*len(hist.Entries) || len(pages) > 2*len(hist.Entries)+2 {
		t.Fatalf("the site saw %d page requests for %d re-audits", len(pages), len(hist.Entries))
	}
	s2 := startServe(t, site, []string{"shop.example"}, "--data-dir", dir, "--reaudit-min-interval", "6h", "--reaudit-window", "02:00-04:30", "--reaudit-timezone", "Europe/Berlin")
	resp, err := s2.client.Get(s2.base + "/bot")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "night window 02:00-04:30 (Europe/Berlin)") || !strings.Contains(string(page), "more often than every 6 h") {
		t.Fatalf("/bot does not name the re-audit window and interval:\n%s", page)
	}
}
