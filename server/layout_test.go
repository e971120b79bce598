package server

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// layoutScript measures the report page as laid out: every word of a
// field name, a table header cell or a finding title must sit on one line
// (a word broken across lines has more than one client rect), and nothing
// may make the page wider than the viewport.
const layoutScript = `(() => {
  const broken = [];
  for (const el of document.querySelectorAll("th, dt, h2, h3")) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const re = /\S+/g;
      let m;
      while ((m = re.exec(n.data)) !== null) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const lines = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return {broken, scrollWidth: document.documentElement.scrollWidth, fields: document.querySelectorAll("th.field").length};
})()`

// mustBrowser starts real Chromium for tb with a w x h window and returns
// a tab's context with the browser running (it lives as long as the
// context of its first action, so that one has no deadline). Without
// Chromium the test is skipped, or fails under CI.
func mustBrowser(tb testing.TB, w, h int) context.Context {
	tb.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("chromium is required under CI: %v", err)
		}
		tb.Skip("chromium not installed")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(w, h))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("chromium: %v", err)
	}
	return ctx
}

// TestReportPageOnAPhone lays the report page out in real Chromium at the
// width of a 390 px phone and checks that no word of a field name is
// broken mid-word and that the page does not scroll sideways.
func TestReportPageOnAPhone(t *testing.T) {
	h := newHarness(t)
	resp, b := h.post("http://shop.example/js-title.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	id := decode[pending](t, b).ID
	h.waitReport(id)

	ctx, cancel := context.WithTimeout(mustBrowser(t, 390, 844), 60*time.Second)
	defer cancel()
	type layout struct {
		Broken      []string `json:"broken"`
		ScrollWidth int      `json:"scrollWidth"`
		Fields      int      `json:"fields"`
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(h.ts.URL+"/r/"+id),
		chromedp.WaitVisible("#fields")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[layout](layoutScript))
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot("body"))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if got.Fields < 10 {
		t.Fatalf("the page has %d field rows; the report did not render", got.Fields)
	}
	if len(got.Broken) > 0 {
		t.Errorf("words broken across lines at 390 px: %q", got.Broken)
	}
	if got.ScrollWidth > 390 {
		t.Errorf("the page is %d px wide at a 390 px viewport", got.ScrollWidth)
	}
	if dir := os.Getenv("LEKTA_SCREENSHOTS"); dir != "" {
		os.WriteFile(dir+"/report-390.png", png, 0o644)
	}
}
