package render

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// TestRenderPreparesContextsAfterReading: the pool holds Options.Spares
// prepared browser contexts; a render takes one and its replacement is
// prepared once the render has read its page, never while it loads — so
// during the navigation and the settling the browser holds only the
// render's own context besides the ready ones.
func TestRenderPreparesContextsAfterReading(t *testing.T) {
	t.Parallel()
	_, s := mustBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := testOptions(s)
	opts.Spares = 2
	b, err := Start(ctx, opts)
	requireBrowser(t, err)
	t.Cleanup(func() { b.Close() })
	in := waitSpares(t, b, 2)

	contexts := func() int {
		res, err := cdp.Call(ctx, in.cdp, target.GetBrowserContexts, cdp.Empty{})
		if err != nil {
			t.Fatalf("list browser contexts: %v", err)
		}
		return len(res.BrowserContextIDs)
	}
	if got := contexts(); got != 2 {
		t.Fatalf("%d browser contexts after start, want the 2 prepared", got)
	}
	var during, ready int
	req := Request{URL: "http://" + hostFor(t) + "/p/small.html", afterSettle: func(context.Context, *tab) {
		during, ready = contexts(), len(in.spare)
	}}
	snap, err := renderPage(t, b, req, 20*time.Second)
	if err != nil || !bytes.Contains(snap.Body, []byte("rendered by script")) {
		t.Fatalf("render: %v", err)
	}
	if during != 2 || ready != 1 {
		t.Errorf("while the page loaded: %d browser contexts, %d ready; want 2 (the render's and the one left ready), 1 ready — nothing prepared during the navigation", during, ready)
	}
	waitSpares(t, b, 2)
	// The render's own context is disposed of in the background.
	deadline := time.Now().Add(10 * time.Second)
	for contexts() != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := contexts(); got != 2 {
		t.Errorf("%d browser contexts after the render, want the 2 prepared", got)
	}
}

// waitSpares waits until n browser contexts are ready, without taking one.
// Taking one to look would start preparing another.
func waitSpares(tb testing.TB, b *Browser, n int) *instance {
	tb.Helper()
	in, err := b.instance(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(in.spare) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%d browser contexts ready, want %d", len(in.spare), n)
		}
	}
	return in
}
