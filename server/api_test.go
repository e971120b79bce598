package server

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
)

// wantStatus fails unless resp has the status.
func wantStatus(tb testing.TB, resp *http.Response, b []byte, status int) {
	tb.Helper()
	if resp.StatusCode != status {
		tb.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, b)
	}
}

// wantError checks an error answer: status, code, and Retry-After when asked.
func wantError(tb testing.TB, resp *http.Response, b []byte, status int, code string, retry bool) apiErr {
	tb.Helper()
	wantStatus(tb, resp, b, status)
	e := decode[apiErr](tb, b)
	if e.Error.Code != code || e.Error.Message == "" {
		tb.Fatalf("error %+v, want code %q with a message", e.Error, code)
	}
	ra := resp.Header.Get("Retry-After")
	if retry {
		n, err := strconv.Atoi(ra)
		if err != nil || n < 1 || int64(n) != e.Error.RetryAfterS {
			tb.Fatalf("Retry-After %q, retry_after_s %d: want the same positive seconds", ra, e.Error.RetryAfterS)
		}
	} else if ra != "" {
		tb.Fatalf("Retry-After %q on a %d", ra, status)
	}
	return e
}

func TestAPILifecycle(t *testing.T) {
	h := newHarness(t, gated)
	target := "http://shop.example/js-title.html"

	resp, b := h.post(target)
	wantStatus(t, resp, b, http.StatusAccepted)
	p := decode[pending](t, b)
	if len(p.ID) < 26 || p.URL != target || p.Links.Self != "/api/v1/audits/"+p.ID || p.Links.Report != "/r/"+p.ID {
		t.Fatalf("pending answer %+v", p)
	}
	if p.Status != "queued" && p.Status != "running" {
		t.Fatalf("status %q, want queued or running", p.Status)
	}
	if got := resp.Header.Get("Location"); got != p.Links.Self {
		t.Errorf("Location %q, want %q", got, p.Links.Self)
	}
	<-h.rend.started

	t.Run("poll while running", func(t *testing.T) {
		for _, path := range []string{"/api/v1/audits/" + p.ID, "/api/v1/audits/" + p.ID + "?wait=20ms"} {
			resp, b := h.do("GET", path, "", nil)
			wantStatus(t, resp, b, http.StatusAccepted)
			if got := decode[pending](t, b); got.ID != p.ID || got.Status != "running" {
				t.Errorf("GET %s: %+v, want running %s", path, got, p.ID)
			}
			if resp.Header.Get("X-Robots-Tag") == "" {
				t.Errorf("GET %s: no X-Robots-Tag", path)
			}
		}
	})
	t.Run("same URL joins", func(t *testing.T) {
		resp, b := h.post(target)
		wantStatus(t, resp, b, http.StatusAccepted)
		if got := decode[pending](t, b); got.ID != p.ID || !got.Joined {
			t.Errorf("joined answer %+v, want the running %q with joined true", got, p.ID)
		}
	})
	t.Run("same host other URL is rate limited", func(t *testing.T) {
		// The host's next start is a minute on, past the 10 s this
		// harness's submitters wait.
		resp, b := h.post("http://shop.example/index.html")
		e := wantError(t, resp, b, http.StatusTooManyRequests, codeRateLimited, true)
		if !strings.HasPrefix(e.Error.Message, "This host was audited less than a minute ago; try again in ") {
			t.Errorf("message %q does not name the minute window", e.Error.Message)
		}
	})

	h.open()
	rep := h.waitReport(p.ID)
	if rep.Status != audit.StatusComplete || rep.ID != p.ID || rep.Trigger != audit.TriggerAPI || rep.Cached {
		t.Fatalf("report: status %s id %s trigger %s cached %v", rep.Status, rep.ID, rep.Trigger, rep.Cached)
	}
	if rep.Lanes.Plain.Page == nil || rep.Lanes.Plain.Page.Title != "" || rep.Lanes.Render.Page.Title != "Rendered title" {
		t.Fatalf("report lanes do not carry the two titles: %+v", rep.Lanes.Plain.Page)
	}

	t.Run("repeat is answered from the cache", func(t *testing.T) {
		before := h.site.HitsOf("shop.example", "/js-title.html")
		resp, b := h.post(target)
		wantStatus(t, resp, b, http.StatusOK)
		got := decode[*audit.Report](t, b)
		if !got.Cached || got.ID == "" || got.ID == p.ID {
			t.Fatalf("cached answer: cached %v id %s, want true and an id other than %s", got.Cached, got.ID, p.ID)
		}
		resp, b = h.do("GET", "/api/v1/audits/"+got.ID, "", nil)
		wantStatus(t, resp, b, http.StatusOK)
		if byID := decode[*audit.Report](t, b); byID.ID != got.ID || !byID.Cached || byID.Lanes.Render.Page.Title != "Rendered title" {
			t.Errorf("GET of the cached answer's id: id %s cached %v title %q; want %s, true, the result", byID.ID, byID.Cached, byID.Lanes.Render.Page.Title, got.ID)
		}
		if after := h.site.HitsOf("shop.example", "/js-title.html"); len(after) != len(before) {
			t.Errorf("the cached answer contacted the site: %d hits, then %d", len(before), len(after))
		}
		if resp.Header.Get("X-Robots-Tag") != "noindex, nofollow" {
			t.Errorf("X-Robots-Tag %q", resp.Header.Get("X-Robots-Tag"))
		}
	})
	t.Run("finished report by id", func(t *testing.T) {
		resp, b := h.do("GET", "/api/v1/audits/"+p.ID, "", nil)
		wantStatus(t, resp, b, http.StatusOK)
		if got := decode[*audit.Report](t, b); got.ID != p.ID || got.Status != audit.StatusComplete {
			t.Errorf("report %s %s", got.ID, got.Status)
		}
	})
	h.checkSpec(t)
}

func TestAPIErrors(t *testing.T) {
	h := newHarness(t)
	json := map[string]string{"Content-Type": "application/json"}
	cases := []struct {
		name   string
		method string
		path   string
		body   string
		hdr    map[string]string
		status int
		code   string
		retry  bool
	}{
		{"not http", "POST", "/api/v1/audits", `{"url":"ftp://shop.example/"}`, json, 400, codeInvalidURL, false},
		{"not a URL", "POST", "/api/v1/audits", `{"url":"kettles please"}`, json, 400, codeInvalidURL, false},
		{"bad JSON", "POST", "/api/v1/audits", `{"url":`, json, 400, codeBadRequest, false},
		{"two JSON values", "POST", "/api/v1/audits", `{"url":"http://shop.example/"} {}`, json, 400, codeBadRequest, false},
		{"missing url", "POST", "/api/v1/audits", `{"address":"http://shop.example/"}`, json, 400, codeBadRequest, false},
		{"empty url", "POST", "/api/v1/audits", `{"url":"  "}`, json, 400, codeBadRequest, false},
		{"not JSON", "POST", "/api/v1/audits", `url=http://shop.example/`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 400, codeBadRequest, false},
		{"private address", "POST", "/api/v1/audits", `{"url":"http://10.0.0.1/"}`, json, 403, codeTargetRefused, false},
		{"credentials", "POST", "/api/v1/audits", `{"url":"http://user:pw@shop.example/"}`, json, 403, codeTargetRefused, false},
		{"other port", "POST", "/api/v1/audits", `{"url":"http://shop.example:8081/"}`, json, 403, codeTargetRefused, false},
		{"unknown id", "GET", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA", "", nil, 404, codeNotFound, false},
		{"malformed id", "GET", "/api/v1/audits/..%2Fetc", "", nil, 404, codeNotFound, false},
		{"bad wait", "GET", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA?wait=soon", "", nil, 400, codeBadRequest, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := h.do(tc.method, tc.path, tc.body, tc.hdr)
			wantError(t, resp, b, tc.status, tc.code, tc.retry)
		})
	}
	if hits := h.site.Hits(); len(hits) != 0 {
		t.Errorf("refused submissions reached the site: %+v", hits)
	}
	t.Run("store down", func(t *testing.T) {
		h.store.down.Store(true)
		defer h.store.down.Store(false)
		resp, b := h.post("http://c.example/index.html")
		wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true)
		if !strings.Contains(string(b), "no audit can start") {
			t.Errorf("a submission while the store is down: %s; want words that say no audit can start", b)
		}
		resp, b = h.do("GET", "/api/v1/audits/AAAAAAAAAAAAAAAAAAAAAAAAAA", "", nil)
		wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true)
		if !strings.Contains(string(b), "it is not lost") || strings.Contains(string(b), "can start") {
			t.Errorf("a read while the store is down: %s; want words that say the audit is not lost", b)
		}
		resp, b = h.do("GET", "/readyz", "", nil)
		wantStatus(t, resp, b, http.StatusServiceUnavailable)
		if got := decode[readiness](t, b); got.Checks["store"] != "failing" || strings.Contains(string(b), "dial") {
			t.Errorf("readyz %s: want the store failing, without the cause", b)
		}
	})
	t.Run("ready again", func(t *testing.T) {
		resp, b := h.do("GET", "/readyz", "", nil)
		wantStatus(t, resp, b, http.StatusOK)
		resp, b = h.do("GET", "/healthz", "", nil)
		wantStatus(t, resp, b, http.StatusOK)
	})
	h.checkSpec(t)
}

func TestQueueFullIsNotCharged(t *testing.T) {
	h := newHarness(t, gated, func(c *harnessConfig) { c.renderers, c.queueLimit = 1, 1 })
	first, b := h.post("http://a.example/index.html")
	wantStatus(t, first, b, http.StatusAccepted)
	firstID := decode[pending](t, b).ID
	<-h.rend.started // the only renderer is busy
	// The pool's one worker now holds a.example; its one queue slot takes
	// b.example; c.example finds no slot.
	resp, b := h.post("http://b.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	resp, b = h.post("http://c.example/index.html")
	wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true)

	h.open()
	h.waitReport(firstID)
	// c.example was never admitted, so its windows are untouched: it is
	// accepted now instead of being refused by the 1/1m window.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, b = h.post("http://c.example/index.html")
		if resp.StatusCode == http.StatusAccepted || time.Now().After(deadline) {
			break
		}
		wantError(t, resp, b, http.StatusServiceUnavailable, codeUnavailable, true) // b.example still queued
		time.Sleep(50 * time.Millisecond)
	}
	wantStatus(t, resp, b, http.StatusAccepted)
	if n := len(h.site.HitsOf("c.example", "/index.html")); n > 1 {
		t.Errorf("c.example was fetched %d times", n)
	}
	h.checkSpec(t)
}

func TestClientRateLimit(t *testing.T) {
	h := newHarness(t, func(c *harnessConfig) { c.ClientRate = []cache.Window{{N: 2, Per: time.Minute}} })
	var first string
	for i, host := range []string{"a.example", "b.example"} {
		resp, b := h.post("http://" + host + "/index.html")
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("submission %d: %d %s", i+1, resp.StatusCode, b)
		}
		if i == 0 {
			first = decode[pending](t, b).ID
		}
	}
	resp, b := h.post("http://c.example/index.html")
	e := wantError(t, resp, b, http.StatusTooManyRequests, codeRateLimited, true)
	if e.Error.RetryAfterS > 60 {
		t.Errorf("retry after %ds, more than the 1m window", e.Error.RetryAfterS)
	}
	if want := "You have submitted more audits than this service takes from one address (2 per 1 min); try again in "; !strings.HasPrefix(e.Error.Message, want) || strings.Contains(e.Error.Message, "2/1m") {
		t.Errorf("message %q, want it in words starting %q", e.Error.Message, want)
	}
	if n := len(h.site.HitsOf("c.example", "/")); n != 0 {
		t.Errorf("a client-limited submission reached the site %d times", n)
	}
	// Cached answers count against no limit: the client over its limit
	// still gets a.example's finished report from the cache, as often as it asks.
	h.waitReport(first)
	for range 3 {
		resp, b := h.post("http://a.example/index.html")
		wantStatus(t, resp, b, http.StatusOK)
		if r := decode[*audit.Report](t, b); !r.Cached {
			t.Errorf("answer is not from the cache: %+v", r)
		}
	}
	h.checkSpec(t)
}

// TestCachedAnswersAreNotCounted: a client whose submissions are answered
// from the cache keeps its whole submission allowance.
func TestCachedAnswersAreNotCounted(t *testing.T) {
	h := newHarness(t, func(c *harnessConfig) { c.ClientRate = []cache.Window{{N: 2, Per: time.Minute}} })
	resp, b := h.post("http://a.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	h.waitReport(decode[pending](t, b).ID)
	for range 5 {
		resp, b := h.post("http://a.example/index.html")
		wantStatus(t, resp, b, http.StatusOK)
	}
	// One submission counted so far: one more new audit is allowed.
	resp, b = h.post("http://b.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	resp, b = h.post("http://c.example/index.html")
	wantError(t, resp, b, http.StatusTooManyRequests, codeRateLimited, true)
	h.checkSpec(t)
}

// TestFormTakesAddressWithoutScheme: example.com/page is taken as
// https://, as a browser's address bar does, and the report says which
// URL was audited.
func TestFormTakesAddressWithoutScheme(t *testing.T) {
	h := newHarness(t)
	resp, b := h.postForm("shop.example/index.html", nil)
	wantStatus(t, resp, b, http.StatusSeeOther)
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/r/")
	h.waitReport(id)
	resp, b = h.do("GET", "/r/"+id, "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	if !strings.Contains(string(b), `id="audited-url" href="https://shop.example/index.html"`) {
		t.Errorf("the report does not say it audited https://shop.example/index.html:\n%s", b)
	}
}

func TestLongPollIsCapped(t *testing.T) {
	h := newHarness(t, gated, func(c *harnessConfig) { c.MaxWait = 30 * time.Millisecond })
	resp, b := h.post("http://shop.example/index.html")
	wantStatus(t, resp, b, http.StatusAccepted)
	id := decode[pending](t, b).ID
	// An hour asked, 30 ms granted: the answer comes while the gate is shut.
	resp, b = h.do("GET", "/api/v1/audits/"+id+"?wait=1h", "", nil)
	wantStatus(t, resp, b, http.StatusAccepted)
}
