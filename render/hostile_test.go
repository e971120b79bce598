package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// TestRenderHostilePages: pages that never yield, eat memory or crash end
// the render with a clear error in bounded time, and the browser serves
// the next render.
func TestRenderHostilePages(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	crash := func(ctx context.Context, tb *tab) {
		// chrome://crash is refused by CheckURL, so crash it from CDP.
		cdp.Call(ctx, tb.target, page.Crash, cdp.Empty{})
	}
	tests := []struct {
		name        string
		path        string
		afterSettle func(context.Context, *tab)
		timeout     time.Duration
		want        []error // any of
	}{
		{"the page never answers", "/hang", nil, 3 * time.Second, []error{ErrRenderTimeout}},
		{"script never yields", "/p/spin.html", nil, 4 * time.Second, []error{ErrRenderTimeout}},
		{"script spins after load", "/p/spin-late.html", nil, 4 * time.Second, []error{ErrRenderTimeout}},
		{"runaway memory", "/p/memory.html", nil, 20 * time.Second, []error{ErrPageCrashed, ErrRenderTimeout}},
		{"renderer crash", "/p/small.html", crash, 10 * time.Second, []error{ErrPageCrashed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{URL: "http://" + hostFor(t) + tc.path, afterSettle: tc.afterSettle}
			start := time.Now()
			snap, err := renderPage(t, b, req, tc.timeout)
			took := time.Since(start)
			if snap != nil || !anyIs(err, tc.want) {
				t.Fatalf("render: snapshot %v, err = %v, want one of %v", snap != nil, err, tc.want)
			}
			if errors.Is(err, ErrRenderTimeout) && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a render that hit the caller's deadline should say so: %v", err)
			}
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
			// The browser survived and renders the next page.
			next, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/p/small.html"}, 20*time.Second)
			if err != nil || !bytes.Contains(next.Body, []byte("rendered by script")) {
				t.Fatalf("next render: %v", err)
			}
		})
	}
}

// TestRenderUnsettled: a page whose network never goes quiet is
// snapshotted before the caller's deadline and marked not settled.
func TestRenderUnsettled(t *testing.T) {
	t.Parallel()
	b, _ := mustBrowser(t)
	snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/p/hangfetch.html"}, 4*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if snap.Render.Settled || !bytes.Contains(snap.Body, []byte("content before the hang")) {
		t.Errorf("settled %v, body %s", snap.Render.Settled, snap.Body)
	}
}

func anyIs(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// TestRenderClosesPopups: a window that gets past the popup blocker (here
// opened with a user gesture from CDP) is never created: counted, and
// nothing of it loads.
func TestRenderClosesPopups(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	var pages int
	open := func(ctx context.Context, tb *tab) {
		for i := range 3 {
			cdp.Call(ctx, tb.target, runtime.Evaluate, runtime.EvaluateParams{
				Expression:  fmt.Sprintf("window.open('/p/popup-target.html?g=%d')", i),
				UserGesture: new(true),
			})
		}
		// Let the popups appear, then wait for them to be gone.
		time.Sleep(300 * time.Millisecond)
		deadline := time.Now().Add(5 * time.Second)
		for pages = countPages(t, tb); pages != 1 && time.Now().Before(deadline); pages = countPages(t, tb) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	snap, err := renderPage(t, b, Request{URL: "http://" + host + "/p/small.html", afterSettle: open}, 20*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if pages != 1 {
		t.Errorf("%d pages in the audit's context after the popups, want 1", pages)
	}
	if snap.Render.Blocked[ReasonPopup] != 3 {
		t.Errorf("blocked popups = %d, want 3 (%v)", snap.Render.Blocked[ReasonPopup], snap.Render.Blocked)
	}
	for _, h := range s.hitsFor(host) {
		if strings.Contains(h.Path, "popup-target") {
			t.Errorf("a popup loaded: %s?%s", h.Path, h.Query)
		}
	}
}

// TestRenderBudget: requests and bytes past the per-audit budget are
// refused and reported.
func TestRenderBudget(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	t.Run("requests", func(t *testing.T) {
		host := hostFor(t)
		snap, err := renderPage(t, b, Request{URL: "http://" + host + "/p/budget.html"}, 60*time.Second)
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		hits := len(s.hitsFor(host))
		if hits > DefaultMaxRequests {
			t.Errorf("site got %d requests, budget is %d", hits, DefaultMaxRequests)
		}
		if got := snap.Render.Blocked[ReasonBudget]; got != 321-DefaultMaxRequests || got+hits != 321 {
			t.Errorf("blocked budget = %d with %d hits, want %d", got, hits, 321-DefaultMaxRequests)
		}
		if !bytes.Contains(snap.Body, []byte("all-settled")) {
			t.Errorf("refused fetches did not fail cleanly")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		snap, err := renderPage(t, b, Request{URL: "http://" + hostFor(t) + "/p/bigbody.html"}, 60*time.Second)
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if snap.Render.Blocked[ReasonBudget] < 1 || !bytes.Contains(snap.Body, []byte("fetch-failed")) {
			t.Errorf("a 60 MB body passed a 50 MB budget: blocked %v", snap.Render.Blocked)
		}
	})
}
