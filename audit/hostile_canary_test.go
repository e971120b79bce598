package audit

import (
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"lekta.dev/lekta/internal/canary"
	"lekta.dev/lekta/render"
)

// TestHostileCanary audits pages whose markup and script reach for
// internal addresses by every route a page has: fetch, XHR, sendBeacon,
// EventSource, WebSocket, WebTransport, dynamic import, workers, iframes,
// stylesheets, fonts, images, preconnect and prefetch, meta refresh, the
// Refresh header, location=, form submission, WebRTC STUN and TURN, and a
// public-looking name that resolves to the canary. Every audit ends with a
// report, and nothing reaches the canary, through the real guard, plain
// lane, browser and pipeline.
func TestHostileCanary(t *testing.T) {
	h := mustHostile(t, hostileOptions{})
	h.site.Handle("/hostile/refresh-header", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Refresh", "0; url=http://127.0.0.1:"+strconv.Itoa(h.canary.Port())+"/refresh-header")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>refresh-header</title></head><body><h1>refresh-header</h1><p>The Refresh header sends the browser to the canary.</p></body></html>`)
	}))
	tests := []struct {
		name, path string
		// h1 is the rendered page's heading: it shows that the page's
		// script ran to its end and that the page stayed where it was.
		h1 string
		// navigation is true when the page sends the main frame to the canary.
		navigation bool
	}{
		{"script APIs and a worker", "/hostile/canary-js.html", "canary-js done", false},
		{"subresources in markup", "/hostile/canary-markup.html", "canary-markup", false},
		{"meta refresh", "/hostile/canary-meta-refresh.html", "canary-meta-refresh", true},
		{"Refresh header", "/hostile/refresh-header", "refresh-header", true},
		{"location, form and window.open", "/hostile/canary-location.html", "canary-location", true},
		{"WebRTC STUN and TURN", "/hostile/canary-webrtc.html", "canary-webrtc", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.auditURL(t, "http://shop.example"+tc.path)
			if r.Status != StatusComplete {
				t.Fatalf("want a complete report: %s", describe(r))
			}
			rp := r.Lanes.Render.Page
			if rp == nil || len(rp.H1) != 1 || rp.H1[0] != tc.h1 {
				t.Errorf("rendered page: want the page itself with h1 %q, got %+v", tc.h1, rp)
			}
			if r.Lanes.Render.FinalURL != "http://shop.example"+tc.path {
				t.Errorf("render lane ended at %s", r.Lanes.Render.FinalURL)
			}
			if tc.navigation && r.Lanes.Render.BlockedRequests[render.ReasonNavigation] < 1 {
				t.Errorf("the navigation to the canary is not reported as blocked: %v", r.Lanes.Render.BlockedRequests)
			}
			h.canary.CheckZero(t)
		})
	}
	// Only the pages themselves, the worker script and robots.txt were
	// asked of the site: nothing the hostile pages pointed at.
	for _, hit := range h.site.Hits() {
		if hit.Host != "shop.example" || !strings.HasPrefix(hit.Path, "/hostile/") && hit.Path != "/robots.txt" {
			t.Errorf("unexpected request: %s %s%s", hit.Method, hit.Host, hit.Path)
		}
	}
}

// TestHostileDNSRebinding: the page's host name resolves to the test site
// while the lanes fetch the page, then to a canary on another loopback
// address (the same port). The page's own same-origin request afterwards is
// refused at dial time, because every connection checks the address it
// resolved, and the canary is never reached.
func TestHostileDNSRebinding(t *testing.T) {
	var rebound atomic.Bool
	var h *hostileEnv
	var c *canary.Canary
	dyn := func(host string) ([]netip.Addr, bool) {
		if host != "flip.example" {
			return nil, false
		}
		if rebound.Load() {
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, true
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, true
	}
	h = mustHostile(t, hostileOptions{dns: dyn})
	// The canary sits on the site's port of another loopback address, so
	// only the address tells them apart.
	c = canary.Loopback(t, "127.0.0.2:"+strconv.Itoa(int(h.port)))
	renderUA := browser.UserAgent()
	h.site.Handle("/hostile/rebind.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() == renderUA {
			rebound.Store(true)
		}
		// A fresh connection for the next request: it must dial again.
		w.Header().Set("Connection", "close")
		h.servePage(w, r)
	}))
	h.site.Handle("/hostile/after-rebind", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the test site (not the canary)")
	}))
	target := "http://flip.example:" + strconv.Itoa(int(h.port)) + "/hostile/rebind.html"
	r := h.auditURL(t, target)
	if r.Status != StatusComplete {
		t.Fatalf("want a complete report: %s", describe(r))
	}
	if !rebound.Load() {
		t.Fatalf("the render lane never fetched the page, so nothing was rebound")
	}
	// The fetch fails, or (plain http through a proxy) gets the proxy's
	// refusal as its response; either way it never gets the site's answer.
	if rp := r.Lanes.Render.Page; rp == nil || len(rp.H1) != 1 ||
		rp.H1[0] != "rebind refused" && !strings.Contains(rp.H1[0], "refused by the Lekta proxy") {
		t.Errorf("the request after rebinding was not refused: rendered page %+v", rp)
	}
	found := false
	for _, f := range r.Lanes.Render.FailedRequests {
		// The reason names the class, never the address the name resolved to.
		if strings.Contains(f.URL, "/hostile/after-rebind") && strings.Contains(f.Reason, "resolves to a loopback address") && !strings.Contains(f.Reason, "127.0.0.2") {
			found = true
		}
	}
	if !found {
		t.Errorf("the refused request is not reported with the guard's reason: %+v", r.Lanes.Render.FailedRequests)
	}
	if n := len(h.site.HitsOf("flip.example", "/hostile/after-rebind")); n != 0 {
		t.Errorf("the request after rebinding reached the site %d times", n)
	}
	c.CheckZero(t)
	h.canary.CheckZero(t)
}
