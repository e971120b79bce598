package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/schedule"
)

// BenchmarkDashboard is the server time of the dashboard of a member with
// 50 sites and 90 days of daily history each (4,500 entries), on SQLite and
// PostgreSQL; it reports p50 and p99 of the handler's time.
func BenchmarkDashboard(b *testing.B) {
	for _, pg := range []bool{false, true} {
		b.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(b *testing.B) {
			h := newMemberHarness(b, memberOpts{postgres: pg, sites: 50})
			ctx := context.Background()
			m, _, err := h.db.AddMember(ctx, "ana@example.com", time.Now())
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			summary, _ := json.Marshal(schedule.Summary{Status: "complete", Findings: []schedule.FindingKey{{Code: "robots.noindex_render_only", Severity: "critical"}}})
			changes, _ := json.Marshal(schedule.Compare(nil, schedule.Summary{Status: "complete"}))
			for i := range 50 {
				s, err := h.db.AddSite(ctx, records.Site{MemberID: m.ID, URL: fmt.Sprintf("https://shop%d.example/p", i), Schedule: "daily"}, 50, now)
				if err != nil {
					b.Fatal(err)
				}
				for d := range 90 {
					at := now.Add(-time.Duration(d) * 24 * time.Hour)
					ts, ls := 0.5+float64(d%10)/20, 0.9
					if _, err := h.db.AddEntry(ctx, records.Entry{ID: records.HistoryID(s.ID, at), SiteID: s.ID, DueAt: at, RanAt: at,
						Trigger: "scheduled", ReportID: "R", Status: "complete", TextShare: &ts, LinkShare: &ls, Critical: 1,
						Summary: summary, Changes: changes}); err != nil {
						b.Fatal(err)
					}
				}
			}
			token, _, err := h.db.NewSession(ctx, m.ID, now, time.Hour)
			if err != nil {
				b.Fatal(err)
			}
			handler := h.srv.Handler()
			var took []time.Duration
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/members/sites", nil)
				req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
				rec := httptest.NewRecorder()
				start := time.Now()
				handler.ServeHTTP(rec, req)
				took = append(took, time.Since(start))
				if rec.Code != 200 {
					b.Fatalf("dashboard: %d", rec.Code)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
