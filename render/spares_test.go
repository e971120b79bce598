package render

import (
	"bytes"
	"context"
	"os"
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

func TestBrowserUA(t *testing.T) {
	t.Parallel()
	const head, tail = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) ", " Safari/537.36"
	for _, tc := range []struct{ name, in, want string }{
		{"headless shell, full version", "HeadlessChrome/156.0.8078.114", "HeadlessChrome/156.0.0.0"},
		{"browser's headless mode", "HeadlessChrome/156.0.0.0", "HeadlessChrome/156.0.0.0"},
		{"a browser that says Chrome", "Chrome/157.0.1.2", "HeadlessChrome/157.0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := browserUA(head + tc.in + tail); got != head+tc.want+tail {
				t.Errorf("browserUA = %q, want %q", got, head+tc.want+tail)
			}
		})
	}
}

// TestFindBrowserPrefersHeadlessShell: with Debian's headless shell
// installed (make test installs it), it is the browser found.
func TestFindBrowserPrefersHeadlessShell(t *testing.T) {
	const shell = "/usr/lib/chromium/chromium-headless-shell"
	if _, err := os.Stat(shell); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no headless shell at %s (the Debian package chromium-headless-shell): %v", shell, err)
		}
		t.Skipf("no headless shell: %v", err)
	}
	got, err := FindBrowser("")
	if err != nil || got != shell {
		t.Errorf("FindBrowser = %q, %v; want %s", got, err, shell)
	}
}
