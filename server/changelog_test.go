package server

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// addRuns records runs of a saved site as the scheduler would, each
// compared with the one before it, oldest first.
func (h *memberHarness) addRuns(siteID string, start time.Time, runs []schedule.Summary, status []string) {
	h.tb.Helper()
	var prev *schedule.Summary
	for i, sum := range runs {
		c := schedule.Compare(prev, sum)
		cj, _ := json.Marshal(c)
		sj, _ := json.Marshal(sum)
		at := start.Add(time.Duration(i) * time.Hour)
		e := records.Entry{ID: records.HistoryID(siteID, at), SiteID: siteID, DueAt: at, RanAt: at, Trigger: "scheduled",
			Status: status[i], TextShare: sum.TextShare, LinkShare: sum.LinkShare, Regression: c.Regression, Changes: cj, Summary: sj}
		if status[i] == "skipped" {
			e.Rule = "Disallow: /"
		}
		if _, err := h.db.AddEntry(h.tb.Context(), e); err != nil {
			h.tb.Fatal(err)
		}
		prev = &runs[i]
	}
}

// TestChangeLogInWords shows a site's history as people read it: fields
// named as the report page names them, findings by their titles, each
// change once, numbers without quotes, "First audit" for the first run and
// a run that fetched nothing saying so.
func TestChangeLogInWords(t *testing.T) {
	h := newMemberHarness(t, memberOpts{})
	m, auth := h.member("ana@example.com")
	site, err := h.db.AddSite(t.Context(), records.Site{MemberID: m.ID, URL: "https://shop.example/p", Schedule: "daily"}, 10, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	lane := func(title string, words int) schedule.LaneSummary {
		return schedule.LaneSummary{Title: title, H1: []string{}, JSONLDTypes: []string{}, WordCount: words, LinkCount: 4, Present: true}
	}
	first := schedule.Summary{Status: "complete", TextShare: share(0.9), LinkShare: share(1), Plain: lane("Shop", 100), Render: lane("Shop", 110),
		Findings: []schedule.FindingKey{}}
	second := schedule.Summary{Status: "complete", TextShare: share(0.5), LinkShare: share(1), Plain: lane("Shop", 300), Render: lane("Shop, now open", 320),
		Findings: []schedule.FindingKey{{Code: "robots.noindex_render_only", Severity: "critical"}}}
	third := schedule.Summary{Status: "skipped", Findings: []schedule.FindingKey{{Code: "robots.disallowed", Severity: "critical"}}}
	h.addRuns(site.ID, time.Now().Add(-3*time.Hour), []schedule.Summary{first, second, third}, []string{"complete", "complete", "skipped"})

	b := &browser{h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/members", nil)
	b.send("POST", "/members/sign-in", map[string][]string{"key": {strings.TrimPrefix(auth["Authorization"], "Bearer ")}, "csrf": {csrfOf(t, page)}})
	_, page = b.send("GET", "/members/sites/"+site.ID, nil)
	_, hist, _ := strings.Cut(page, "<h2>History</h2>")
	hist, _, _ = strings.Cut(hist, "</table>")
	text := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(hist, "\n")
	for _, want := range []string{
		"First audit",
		"Title (rendered): “Shop” → “Shop, now open”",
		"Words of text (plain): 100 → 300",
		"New critical finding: Robots: noindex only after JavaScript.",
		"The share of the text AI crawlers see fell from 90% to 50%.",
		"Blocked by robots.txt",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the history does not say %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "Robots: noindex only after JavaScript"); n != 1 {
		t.Errorf("the new finding is listed %d times, want once:\n%s", n, text)
	}
	for _, bad := range []string{"robots.noindex_render_only", "word_count", `"100"`, "no change", ";\n"} {
		if strings.Contains(text, bad) {
			t.Errorf("the history shows %q:\n%s", bad, text)
		}
	}
}

// TestChangeLogCauses: a finding found in both re-audits whose cause
// changed (another script, another request, another kind of cause) is
// noted in words; a cause that only moved (line, column, page time, the
// query of the script URL) or that the previous run did not record is not.
func TestChangeLogCauses(t *testing.T) {
	t.Parallel()
	ms := func(n int64) *int64 { return &n }
	script := func(u string, line int) *compare.Cause {
		return &compare.Cause{Kind: compare.CauseScript, ScriptURL: u, Line: line, Column: 4, PageTimeMS: ms(int64(100 * line))}
	}
	request := func(path string) *compare.Cause {
		return &compare.Cause{Kind: compare.CauseRequest, ScriptURL: "https://shop.example/js/app.js", RequestPath: path}
	}
	report := func(title, content *compare.Cause) *audit.Report {
		r := &audit.Report{Status: audit.StatusComplete, URL: "https://shop.example/p"}
		r.Findings = []compare.Finding{
			{Code: "title.render_only", Severity: compare.SeverityCritical, Lane: compare.LaneRender, Cause: title},
			{Code: "content.render_only", Severity: compare.SeverityWarning, Lane: compare.LaneRender, Cause: content},
		}
		return r
	}
	cases := []struct {
		name      string
		prev, cur *audit.Report
		want      []string
	}{
		{"another script", report(script("https://shop.example/js/app.js", 3), nil), report(script("https://shop.example/js/new.js", 3), nil),
			[]string{"The title is now set by /js/new.js (was /js/app.js)."}},
		{"a script of another host", report(script("https://shop.example/js/app.js", 3), nil), report(script("https://tags.example/gtm.js", 1), nil),
			[]string{"The title is now set by tags.example/gtm.js (was /js/app.js)."}},
		{"an inline script", report(script("https://shop.example/js/app.js", 3), nil),
			report(&compare.Cause{Kind: compare.CauseScript, ScriptURL: "https://shop.example/p", Inline: true, Line: 9}, nil),
			[]string{"The title is now set by an inline script in the page (was /js/app.js)."}},
		{"another request", report(nil, request("/api/products")), report(nil, request("/api/v2/products")),
			[]string{"The text is now filled from /api/v2/products (was /api/products)."}},
		{"another kind", report(nil, script("https://shop.example/js/app.js", 2)), report(nil, request("/api/products")),
			[]string{"The text is now filled from /api/products (was set by /js/app.js)."}},
		{"same script, other line and time", report(script("https://shop.example/js/app.js", 3), nil), report(script("https://shop.example/js/app.js", 7), nil), nil},
		{"same script, other query", report(script("https://shop.example/js/app.js?v=1", 3), nil), report(script("https://shop.example/js/app.js?v=2", 3), nil), nil},
		{"no cause before", report(nil, nil), report(script("https://shop.example/js/new.js", 3), nil), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			prev := schedule.Summarize(tc.prev)
			c := schedule.Compare(&prev, schedule.Summarize(tc.cur))
			cj, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			got := changeLog(records.Entry{Status: "complete", Changes: cj})
			var causes []string
			for _, l := range got {
				if strings.Contains(l, " now ") {
					causes = append(causes, l)
				}
			}
			if !slices.Equal(causes, tc.want) {
				t.Errorf("the change log says %q, want %q (all of it: %q)", causes, tc.want, got)
			}
			for _, l := range got {
				if bad := internalNames(l); len(bad) > 0 {
					t.Errorf("the change log shows %q: %q", bad, l)
				}
			}
		})
	}
}
