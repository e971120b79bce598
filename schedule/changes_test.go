package schedule

import (
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/compare"
)

func f(v float64) *float64 { return &v }

func report(status audit.Status, title string, words int, text, links float64, findings ...compare.Finding) *audit.Report {
	r := &audit.Report{Status: status, Findings: findings,
		Verdict: &compare.Conclusion{TextShare: f(text), LinkShare: f(links)}}
	r.Lanes.Plain.Page = &compare.Page{Title: title, WordCount: words, LinkCount: 3, H1: []string{"Kettle"}, JSONLDTypes: []string{"Product"}}
	r.Lanes.Render.Page = &compare.Page{Title: title, WordCount: words, LinkCount: 5}
	return r
}

func TestCompare(t *testing.T) {
	crit := compare.Finding{Code: "robots.noindex_render_only", Severity: compare.SeverityCritical, Lane: compare.LaneRender}
	warn := compare.Finding{Code: "title.render_only", Severity: compare.SeverityWarning}
	base := Summarize(report(audit.StatusComplete, "Kettle", 100, 0.9, 0.8, warn))
	for _, tc := range []struct {
		name       string
		cur        *audit.Report
		fields     []string
		appeared   int
		resolved   int
		regression string
	}{
		{"same", report(audit.StatusComplete, "Kettle", 105, 0.9, 0.8, warn), nil, 0, 0, ""},
		{"words within 10%", report(audit.StatusComplete, "Kettle", 109, 0.9, 0.8, warn), nil, 0, 0, ""},
		{"words beyond 10%", report(audit.StatusComplete, "Kettle", 111, 0.9, 0.8, warn), []string{"plain word_count", "render word_count"}, 0, 0, ""},
		{"title changed, finding resolved", report(audit.StatusComplete, "Teapot", 100, 0.9, 0.8), []string{"plain title", "render title"}, 0, 1, ""},
		{"new critical", report(audit.StatusComplete, "Kettle", 100, 0.9, 0.8, warn, crit), nil, 1, 0, "new critical finding robots.noindex_render_only"},
		{"text share down 11 points", report(audit.StatusComplete, "Kettle", 100, 0.79, 0.8, warn), nil, 0, 0, "text share"},
		{"text share down 10 points", report(audit.StatusComplete, "Kettle", 100, 0.80, 0.8, warn), nil, 0, 0, ""},
		{"link share down", report(audit.StatusComplete, "Kettle", 100, 0.9, 0.5, warn), nil, 0, 0, "link share"},
		{"became skipped", &audit.Report{Status: audit.StatusSkipped}, []string{"plain document", "render document"}, 0, 1, "became skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(&base, Summarize(tc.cur))
			var got []string
			for _, fc := range c.Fields {
				got = append(got, fc.Lane+" "+fc.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") || len(c.Appeared) != tc.appeared || len(c.Resolved) != tc.resolved {
				t.Fatalf("fields %v, appeared %v, resolved %v; want %v, %d, %d", got, c.Appeared, c.Resolved, tc.fields, tc.appeared, tc.resolved)
			}
			if c.Regression != (tc.regression != "") || (tc.regression != "" && !strings.Contains(strings.Join(c.Reasons, "; "), tc.regression)) {
				t.Fatalf("regression %v %v; want %q", c.Regression, c.Reasons, tc.regression)
			}
		})
	}
	if c := Compare(nil, base); !c.First || c.Regression {
		t.Fatalf("first re-audit: %+v", c)
	}
}

func TestSignVerify(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"regression"}`)
	sig := Sign("whsec_x", at, body)
	if !strings.HasPrefix(sig, "t=1800000000,v1=") || len(sig) != len("t=1800000000,v1=")+64 {
		t.Fatalf("signature %q", sig)
	}
	if err := Verify("whsec_x", sig, body, at.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		secret, header string
		body           []byte
		now            time.Time
	}{
		"other secret": {"whsec_y", sig, body, at},
		"other body":   {"whsec_x", sig, []byte(`{"type":"other"}`), at},
		"too old":      {"whsec_x", sig, body, at.Add(10 * time.Minute)},
		"malformed":    {"whsec_x", "v1=abc", body, at},
	} {
		if err := Verify(c.secret, c.header, c.body, c.now, 5*time.Minute); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}
