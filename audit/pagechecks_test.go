package audit

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"lekta.dev/lekta/compare"
)

// TestAuditUnavailableAfterBothLanes: a past unavailable_after date in the
// server HTML is judged in both lanes against one clock, so a static page
// gets one finding for both lanes, not a noindex "added by scripts".
func TestAuditUnavailableAfterBothLanes(t *testing.T) {
	e := mustEnv(t, nil)
	e.site.Handle("/expired.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Old offer</title>`+
			`<meta name="robots" content="unavailable_after: `+r.URL.Query().Get("date")+`">`+
			`<meta name="description" content="An offer that ended in 2007, kept for the record."></head>`+
			`<body><h1>Old offer</h1><p>This offer ended long ago.</p></body></html>`)
	}))
	for _, date := range []string{"2007-08-25", "25-Aug-2007 15:00:00 EST"} {
		t.Run(date, func(t *testing.T) {
			r := e.audit(t, "http://shop.example/expired.html?date="+url.QueryEscape(date), TriggerCLI)
			checkUnavailableBothLanes(t, r)
		})
	}
}

func checkUnavailableBothLanes(t *testing.T, r *Report) {
	t.Helper()
	if r.Status != StatusComplete {
		t.Fatalf("status %s: %s", r.Status, r.Reason)
	}
	var both bool
	for _, f := range r.Findings {
		switch {
		case f.Code == compare.CodeRobotsNoindexRenderOnly || f.Code == compare.CodeRobotsNoindexPlainOnly:
			t.Errorf("a static page judged differently per lane: %s: %s", f.Code, f.Message)
		case f.Code == compare.CodeRobotsUnavailableAfter && f.Lane == "":
			both = true
		}
	}
	if !both {
		t.Errorf("no robots.unavailable_after finding for both lanes: %v", codes(r))
	}
}
