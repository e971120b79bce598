package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJoinPagesLayout checks the pages of joining in real Chromium at
// 390 px and 1280 px: the sign-in page with the form asking for a link,
// the link's confirmation page, and the keys page showing a new key once.
// The person signs in as one does: the link opened, its button pressed.
func TestJoinPagesLayout(t *testing.T) {
	sink := startSMTP(t, "")
	h := newJoinHarness(t, JoinOpen, sink, nil)
	askByAPI(h, "a.rather.long.name.for.an.address@example.com")
	link := linkIn(t, sink.waitFor(t, "a.rather.long.name.for.an.address@example.com", 1))
	bctx := mustBrowser(t, 1280, 900)
	for _, width := range []int{390, 1280} {
		for _, p := range []struct{ name, path, ready string }{
			{"sign-in with the join form", "/members", "#email"},
			{"the link's confirmation", link, "button"},
		} {
			t.Run(fmt.Sprintf("%s at %d px", p.name, width), func(t *testing.T) {
				measure(bctx, t, width, h.ts.URL+p.path, p.ready)
			})
		}
	}
	ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 900), chromedp.Navigate(h.ts.URL+link), chromedp.WaitVisible(chromedp.CSS("main form button")),
		chromedp.Click(chromedp.CSS("main form button")), chromedp.WaitVisible(chromedp.CSS("#url")),
		chromedp.Navigate(h.ts.URL+"/members/keys"), chromedp.WaitVisible("#label"),
		chromedp.SendKeys("#label", "the laptop on the kitchen table"), chromedp.Submit("#label"),
		chromedp.WaitVisible("p.secret code")); err != nil {
		t.Fatalf("sign in by the link and make a key: %v", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text("p.secret code"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shown, "lekta_") {
		t.Fatalf("the new key shown is %q", shown)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[pageLayout](pageLayoutScript))
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	if len(got.Broken) > 0 || got.ScrollWidth > 390 {
		t.Errorf("the keys page with a new key at 390 px: words broken %q, %d px wide", got.Broken, got.ScrollWidth)
	}
}
