package audit

import (
	"slices"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
)

// TestHostileBrowserPages audits pages that attack the browser itself:
// dialogs (which hang every CDP call when left open), a script that never
// yields, runaway memory, and a flood of window.open. Each audit ends with
// a report that keeps the plain lane, the tab is closed, no popup target
// survives, no goroutine is left over, and the next audit on the same
// browser works.
func TestHostileBrowserPages(t *testing.T) {
	h := mustHostile(t, hostileOptions{config: func(c *Config) { c.Timeout = 8 * time.Second }})
	tests := []struct {
		name, path string
		// status is the status the audit must end with.
		status Status
		// render is the render lane's outcome, any of.
		render []Outcome
		// h1 is the rendered page's heading when the render lane finished.
		h1 string
	}{
		{"dialogs", "/hostile/dialogs.html", StatusComplete, []Outcome{OutcomeOK}, "dialogs after confirm=false prompt=null"},
		{"popup flood", "/hostile/popups.html", StatusComplete, []Outcome{OutcomeOK}, "popups opened=0"},
		{"script never yields", "/hostile/spin.html", StatusPartial, []Outcome{OutcomeTimeout}, ""},
		// The 512 MB heap cap crashes the tab, or the deadline ends it first.
		{"runaway memory", "/hostile/memory.html", StatusPartial, []Outcome{OutcomeError, OutcomeTimeout}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idle := waitIdle(t)
			r := h.auditURL(t, "http://shop.example"+tc.path)
			t.Logf("%s", describe(r))
			if r.Status != tc.status || !slices.Contains(tc.render, r.Lanes.Render.Outcome) {
				t.Fatalf("want status %s with render lane %v: %s", tc.status, tc.render, describe(r))
			}
			if r.Lanes.Plain.Outcome != OutcomeOK || r.Lanes.Plain.Page == nil || r.Lanes.Plain.Page.Title == "" {
				t.Errorf("the plain lane's page was not kept: %s", describe(r))
			}
			if tc.h1 != "" {
				if rp := r.Lanes.Render.Page; rp == nil || len(rp.H1) != 1 || rp.H1[0] != tc.h1 {
					t.Errorf("rendered page: want h1 %q, got %+v", tc.h1, rp)
				}
			}
			if r.Lanes.Render.Outcome != OutcomeOK {
				code := "lane." + string(r.Lanes.Render.Outcome)
				if _, ok := laneFinding(r, code, compare.LaneRender); !ok {
					t.Errorf("no %s finding for the render lane", code)
				}
			}
			checkBackToIdle(t, idle)

			// The browser still serves the next audit.
			next := h.auditURL(t, "http://shop.example/hostile/ok.html?after="+tc.path)
			if next.Status != StatusComplete {
				t.Fatalf("the next audit failed: %s", describe(next))
			}
			if rp := next.Lanes.Render.Page; rp == nil || len(rp.H1) != 1 || rp.H1[0] != "ok rendered" {
				t.Errorf("the next audit's rendered page: %+v", rp)
			}
			checkBackToIdle(t, idle)
		})
	}
	if hits := h.site.HitsOf("shop.example", "/hostile/popup-target.html"); len(hits) > 0 {
		t.Errorf("a popup loaded its page %d times", len(hits))
	}
}
