package server

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

var update = flag.Bool("update", false, "rewrite the golden badges in testdata/badges")

func share(f float64) *float64 { return &f }

func summaryOf(tb testing.TB, status string, codes ...string) json.RawMessage {
	tb.Helper()
	s := schedule.Summary{Status: status, Findings: []schedule.FindingKey{}}
	for _, c := range codes {
		s.Findings = append(s.Findings, schedule.FindingKey{Code: c, Severity: "critical"})
	}
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// badgeStates are the entries of every state a badge can show.
func badgeStates(tb testing.TB) []struct {
	name  string
	entry *records.Entry
	want  string
} {
	e := func(status string, ts *float64, rule string, codes ...string) *records.Entry {
		return &records.Entry{Status: status, TextShare: ts, LinkShare: ts, Rule: rule, Summary: summaryOf(tb, status, codes...)}
	}
	return []struct {
		name  string
		entry *records.Entry
		want  string
	}{
		{"not-run-yet", nil, "not run yet"},
		{"good", e("complete", share(0.97), ""), "see 97%"},
		{"warn", e("complete", share(0.62), ""), "see 62%"},
		{"bad", e("complete", share(0.2), ""), "see 20%"},
		// A person's request fetched the page once: the shares exist, but
		// robots.txt keeps LektaBot out, and so the badge says.
		{"robots-disallowed-ran", e("complete", share(1), "", "robots.disallowed"), "blocked by robots.txt"},
		{"robots-disallowed-skipped", e("skipped", nil, "Disallow: /", "robots.disallowed"), "blocked by robots.txt"},
		{"robots-unreachable", e("skipped", nil, "", "robots.unreachable"), "robots.txt unreachable"},
		{"site-unreachable", e("error", nil, "", "site.dns"), "site unreachable"},
		{"failed", e("error", nil, "", "lane.error"), "audit failed"},
		{"address-refused", e("blocked", nil, ""), "address refused"},
		{"rate-limited", e("rate_limited", nil, ""), "not run: rate limited"},
		{"cancelled", e("cancelled", nil, ""), "cancelled"},
		{"timed-out", e("timeout", nil, ""), "timed out"},
		{"not-compared", e("partial", nil, "", "lane.timeout"), "not compared"},
		{"noindex-render-only", e("complete", share(1), "", "robots.noindex_render_only"), "noindex only in render"},
	}
}

// TestBadgeStates draws the badge of every state and compares it with its
// golden SVG: a page that was not fetched, or that robots.txt keeps
// LektaBot out of, never shows a share.
func TestBadgeStates(t *testing.T) {
	for _, tc := range badgeStates(t) {
		t.Run(tc.name, func(t *testing.T) {
			st := notRunYet
			if tc.entry != nil {
				st = stateOf(*tc.entry)
			}
			if st.Words != tc.want {
				t.Errorf("badge says %q, want %q", st.Words, tc.want)
			}
			if tc.entry != nil && tc.entry.Status != "complete" && strings.Contains(st.Words, "%") {
				t.Errorf("a %s run shows a share: %q", tc.entry.Status, st.Words)
			}
			got := badgeSVG("AI crawlers", st.Words, badgeColors[st.Tone])
			path := filepath.Join("testdata", "badges", tc.name+".svg")
			if *update {
				if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./server -run TestBadgeStates -update)", err)
			}
			if strings.TrimSpace(string(want)) != got {
				t.Errorf("badge differs from %s:\n got %s\nwant %s", path, got, want)
			}
		})
	}
}

// TestBadgeAndDashboardOfABlockedPage runs a member's "Run now" on a page
// robots.txt disallows for LektaBot: the audit ran once because a person
// asked, but the badge and the dashboard say "blocked by robots.txt",
// never a share.
func TestBadgeAndDashboardOfABlockedPage(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	h.site.SetRobots("shop.example", 200, "User-agent: LektaBot\nDisallow: /\n")
	_, auth := h.member("ana@example.com")
	s := h.saveSite(auth, `{"url":"http://shop.example/js-title.html","schedule":"daily"}`)
	if resp, b := h.do("POST", "/api/v1/sites/"+s.ID+"/audits", "", auth); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("run now: %d %s", resp.StatusCode, b)
	}
	h.waitHistory(auth, s.ID, 1)
	_, b := h.do("GET", s.BadgeURL, "", nil)
	if !strings.Contains(string(b), "AI crawlers: blocked by robots.txt") || strings.Contains(string(b), "%") {
		t.Errorf("badge of a disallowed page: %s", b)
	}
	page := h.dashboardOf(auth)
	if !strings.Contains(page, "blocked by robots.txt") || strings.Contains(page, "% of the text") || strings.Contains(page, `<svg class="trend"`) {
		t.Errorf("dashboard of a disallowed page:\n%s", page)
	}
}

// dashboardOf signs in with the member's key and returns the dashboard.
func (h *memberHarness) dashboardOf(auth map[string]string) string {
	h.tb.Helper()
	_, page := h.signIn(auth).send("GET", "/members/sites", nil)
	return page
}

// signIn returns a browser signed in with the member's key.
func (h *memberHarness) signIn(auth map[string]string) *browser {
	h.tb.Helper()
	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	key := strings.TrimPrefix(auth["Authorization"], "Bearer ")
	if resp, _ := b.send("POST", "/members/sign-in", map[string][]string{"key": {key}, "csrf": {csrfOf(h.tb, page)}}); resp.StatusCode != http.StatusSeeOther {
		h.tb.Fatalf("sign in: %d", resp.StatusCode)
	}
	return b
}
