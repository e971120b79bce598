package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"lekta.dev/lekta/audit"
)

// cutTablesScript finds the tables a reader cannot see whole: wider than
// the viewport, or wider than a box that scrolls or clips them.
const cutTablesScript = `(() => {
  const cut = [];
  for (const t of document.querySelectorAll("table")) {
    const r = t.getBoundingClientRect();
    if (r.width === 0) continue;
    let clipped = r.right > document.documentElement.clientWidth + 1;
    for (let p = t.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if ((o === "auto" || o === "scroll" || o === "hidden") && p.scrollWidth > p.clientWidth + 1) clipped = true;
    }
    if (clipped) cut.push(t.id || t.className || t.querySelector("th")?.textContent || "table");
  }
  return cut;
})()`

// TestReportPageLayout lays out a report with every section filled — the
// verdict, the fields, findings with their causes, the crawler table, the
// lanes' details and robots.txt — in real Chromium at a 390 px phone and a
// 1280 px desktop: no word broken inside, no table header on two lines at
// desktop width, no sideways scroll and no table cut off. The running
// page is measured too.
func TestReportPageLayout(t *testing.T) {
	p, r := causesFixture(t)
	// Long values where they make columns narrow: a long title in the
	// crawler table, directives, a long script path in a cause.
	for i := range r.Crawlers {
		if r.Crawlers[i].Renders {
			r.Crawlers[i].Title = "Blue Stoneware Kettle, hand-thrown in our Devon workshop and glazed in three colours | Lekta Test Shop"
			r.Crawlers[i].Directives = []string{"meta robots: max-image-preview:large, max-snippet:-1"}
		}
	}
	for i := range r.Findings {
		if c := r.Findings[i].Cause; c != nil && c.ScriptURL != "" && !c.Inline {
			c.ScriptURL = "http://shop.example/static/js/vendor/chunks/react-dom.production.min.3f9c1d2e.js"
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/style.css", staticFile("web/style.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /r/report", func(w http.ResponseWriter, _ *http.Request) {
		p.renderPage(w, http.StatusOK, "report", layout{Title: "Audit of " + r.URL, NoIndex: true, Data: newReportView(r)})
	})
	mux.HandleFunc("GET /r/running", func(w http.ResponseWriter, _ *http.Request) {
		v := progressView{ID: "01JRUNNING", URL: "https://shop.example/products/garden/outdoor-furniture-collection-2026?colour=green",
			State: "running", Elapsed: "less than a second", Steps: stepViews(audit.StepRender),
			Typical: "Audits here took 350 ms to 1.2 s lately (the median and the 95th percentile of the last 12 audits)."}
		p.renderPage(w, http.StatusOK, "progress", layout{Title: "Auditing", NoIndex: true, Data: v})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	bctx := mustBrowser(t, 1280, 900)
	for _, width := range []int{390, 1280} {
		t.Run(fmt.Sprintf("running page at %d px", width), func(t *testing.T) {
			measure(bctx, t, width, ts.URL+"/r/running", "#steps")
		})
		t.Run(fmt.Sprintf("report at %d px", width), func(t *testing.T) {
			measure(bctx, t, width, ts.URL+"/r/report", "#crawlers")
			ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
			defer cancel()
			cut, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](cutTablesScript))
			if err != nil {
				t.Fatalf("measure: %v", err)
			}
			if len(cut) > 0 {
				t.Errorf("tables cut off at %d px: %q", width, cut)
			}
		})
	}
}
