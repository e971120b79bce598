package server

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/verify"
)

// verifyT0 is when the stored request was sent.
var verifyT0 = time.Date(2026, 12, 1, 12, 3, 41, 208e6, time.UTC)

// withRecords gives the server a verifier over a real SQLite database
// holding one render-lane request to shop.example and one plain-lane
// request to another path, both of audit SECRETAUDIT.
func withRecords(tb testing.TB) harnessOpt {
	db, err := records.Open(context.Background(), records.Config{DataDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	src := netip.MustParseAddrPort("198.51.100.4:40123")
	err = db.PutRequests(context.Background(), []records.Request{
		{At: verifyT0, Lane: verify.LaneRender, Method: "GET", Scheme: "https", Host: "shop.example", Port: 443,
			Path: "/page", QueryHash: verify.QueryHash("a=1"), Remote: netip.MustParseAddrPort("192.0.2.10:443"), Local: src,
			Status: 200, Bytes: 10, AuditID: "SECRETAUDIT"},
		{At: verifyT0.Add(2 * time.Second), Lane: verify.LanePlain, Method: "GET", Scheme: "https", Host: "shop.example", Port: 443,
			Path: "/private-other-path", Remote: netip.MustParseAddrPort("192.0.2.10:443"), Local: src, Status: 200, AuditID: "SECRETAUDIT"},
	})
	if err != nil {
		tb.Fatal(err)
	}
	id := policy.DefaultIdentity()
	v := verify.New(db, verify.Config{Token: id.Token, PlainUA: id.PlainUA()})
	return func(c *harnessConfig) {
		c.Verifier = v
		c.Policy.RequestRecordsTTL = 7 * 24 * time.Hour
	}
}

// logLine is a combined-log line of shop.example from src at at.
func logLine(at time.Time, src, target string) string {
	return `shop.example ` + src + ` - - [` + at.Format("02/Jan/2006:15:04:05 -0700") + `] "GET ` + target +
		` HTTP/1.1" 200 10 "-" "Mozilla/5.0 Chrome/140 LektaBot/0.1 (+https://lekta.dev/bot)"`
}

// postVerify asks the API about body.
func (h *harness) postVerify(body map[string]string) (*http.Response, []byte) {
	h.tb.Helper()
	b, _ := json.Marshal(body)
	return h.do("POST", "/api/v1/verify", string(b), map[string]string{"Content-Type": "application/json"})
}

// TestVerifyAPI: our line is a yes with time, source and lane and nothing
// else; the same line 10 s off, with another path or another source is a
// no; an unreadable line is a 400 naming the part.
func TestVerifyAPI(t *testing.T) {
	h := newHarness(t, withRecords(t))
	ours := logLine(verifyT0, "198.51.100.4", "/page?a=1")
	resp, b := h.postVerify(map[string]string{"line": ours})
	wantStatus(t, resp, b, http.StatusOK)
	got := decode[map[string]any](t, b)
	if got["match"] != true || got["verifiable"] != true || got["lane"] != "render" || got["source"] != "198.51.100.4" ||
		got["time"] != "2026-12-01T12:03:41.208Z" ||
		got["message"] != "A LektaBot request matching this line was made at 12:03:41.208 UTC from 198.51.100.4 by the browser render (headless Chromium)." {
		t.Errorf("answer to our line: %s", b)
	}
	if len(got) != 6 {
		t.Errorf("the answer has fields beyond match, verifiable, message, time, source, lane: %s", b)
	}
	for name, line := range map[string]string{
		"10 s later":     logLine(verifyT0.Add(10*time.Second), "198.51.100.4", "/page?a=1"),
		"another path":   logLine(verifyT0, "198.51.100.4", "/other"),
		"another query":  logLine(verifyT0, "198.51.100.4", "/page?a=2"),
		"another source": logLine(verifyT0, "203.0.113.50", "/page?a=1"),
	} {
		resp, b := h.postVerify(map[string]string{"line": line})
		wantStatus(t, resp, b, http.StatusOK)
		got := decode[map[string]any](t, b)
		if got["match"] != false || got["message"] != "No LektaBot request to shop.example matches within ±5 s: the request was not ours." || len(got) != 3 {
			t.Errorf("%s: %s", name, b)
		}
	}
	resp, b = h.postVerify(map[string]string{"time": "2026-12-01T13:03:41.5+01:00", "client": "198.51.100.4", "method": "GET",
		"path": "/page?a=1", "host": "shop.example"})
	wantStatus(t, resp, b, http.StatusOK)
	if decode[map[string]any](t, b)["match"] != true {
		t.Errorf("fields of our request: %s", b)
	}
	resp, b = h.postVerify(map[string]string{"line": `198.51.100.4 - - [01/Dec/2026:12:03:41 +0000] "GET /page HTTP/1.1" 200 1`})
	wantStatus(t, resp, b, http.StatusBadRequest)
	if e := decode[apiErr](t, b); e.Error.Code != codeUnreadableLine || !strings.Contains(e.Error.Message, "the host is missing") {
		t.Errorf("line without host: %s", b)
	}
	resp, b = h.postVerify(map[string]string{"line": "garbage", "host": "shop.example"})
	wantStatus(t, resp, b, http.StatusBadRequest)
	if e := decode[apiErr](t, b); e.Error.Code != codeUnreadableLine || !strings.Contains(e.Error.Message, "time") {
		t.Errorf("garbage line: %s", b)
	}
	resp, b = h.do("POST", "/api/v1/verify", `{"line": "x"}`, map[string]string{"Content-Type": "text/plain"})
	wantStatus(t, resp, b, http.StatusBadRequest)
	resp, b = h.do("POST", "/api/v1/verify", `{"audit_id": "x"}`, map[string]string{"Content-Type": "application/json"})
	wantStatus(t, resp, b, http.StatusBadRequest)
	_, m := h.do("GET", "/metrics", "", nil)
	for _, want := range []string{`lekta_verifications_total{answer="yes"} 2`, `lekta_verifications_total{answer="no"} 4`,
		`lekta_verifications_total{answer="unreadable"} 2`} {
		if !strings.Contains(string(m), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ex := range h.exchange {
		if strings.Contains(string(ex.body), "SECRETAUDIT") || strings.Contains(string(ex.body), "private-other-path") {
			t.Errorf("an answer leaks another request or the audit id: %s", ex.body)
		}
	}
}

// TestVerifyForm: the page is a form without JavaScript, answers under it,
// escapes what was pasted and refuses cross-site posts.
func TestVerifyForm(t *testing.T) {
	h := newHarness(t, withRecords(t))
	resp, b := h.do("GET", "/bot/verify", "", nil)
	wantStatus(t, resp, b, http.StatusOK)
	page := string(b)
	if !strings.Contains(page, `<form class="verify" method="post" action="/bot/verify">`) || strings.Contains(page, "<script") ||
		!strings.Contains(page, "recorded for 7 days") {
		t.Errorf("/bot/verify:\n%s", page)
	}
	post := func(v url.Values, hdr map[string]string) (*http.Response, string) {
		all := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		for k, x := range hdr {
			all[k] = x
		}
		resp, b := h.do("POST", "/bot/verify", v.Encode(), all)
		return resp, string(b)
	}
	resp, page = post(url.Values{"line": {logLine(verifyT0, "198.51.100.4", "/page?a=1")}}, nil)
	wantStatus(t, resp, []byte(page), http.StatusOK)
	if !strings.Contains(page, `data-match="true"`) || !strings.Contains(page, "by the browser render (headless Chromium)") || strings.Contains(page, "SECRETAUDIT") {
		t.Errorf("answer page:\n%s", page)
	}
	resp, page = post(url.Values{"line": {logLine(verifyT0, "198.51.100.4", "/other")}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `data-match="false"`) || !strings.Contains(html.UnescapeString(page), "the request was not ours") {
		t.Errorf("no-match page:\n%s", page)
	}
	resp, page = post(url.Values{"line": {`<script>alert(1)</script> - - [x] "GET / HTTP/1.1" 200 1`}, "host": {"shop.example"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(page, "<script>alert") || !strings.Contains(page, `id="verify-error"`) {
		t.Errorf("hostile line: status %d\n%s", resp.StatusCode, page)
	}
	resp, page = post(url.Values{"line": {logLine(verifyT0, "198.51.100.4", "/page?a=1")}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != http.StatusForbidden || strings.Contains(page, `data-match`) {
		t.Errorf("cross-site post: status %d\n%s", resp.StatusCode, page)
	}
}

// TestVerifyClientLimit: verifications count against a per-client limit
// of their own, with Retry-After, on the API and the form.
func TestVerifyClientLimit(t *testing.T) {
	h := newHarness(t, withRecords(t), func(c *harnessConfig) { c.ClientRate = []cache.Window{{N: 2, Per: time.Minute}} })
	line := logLine(verifyT0, "198.51.100.4", "/page?a=1")
	for range 2 {
		resp, b := h.postVerify(map[string]string{"line": line})
		wantStatus(t, resp, b, http.StatusOK)
	}
	resp, b := h.postVerify(map[string]string{"line": line})
	wantStatus(t, resp, b, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(decode[apiErr](t, b).Error.Message, "verifications") {
		t.Errorf("limited: Retry-After %q, %s", resp.Header.Get("Retry-After"), b)
	}
	resp, b = h.do("POST", "/bot/verify", url.Values{"line": {line}}.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	wantStatus(t, resp, b, http.StatusTooManyRequests)
	// Submissions have their own limit.
	resp, b = h.post("http://shop.example/index.html")
	if resp.StatusCode == http.StatusTooManyRequests {
		t.Errorf("verifications used up the submission limit: %s", b)
	}
}

// TestVerifyRecordsOff: with records off, /bot and /bot/verify say there
// is nothing to verify against, and the API says so instead of a no.
func TestVerifyRecordsOff(t *testing.T) {
	h := newHarness(t, func(c *harnessConfig) { c.Policy.PublicAddrUnknown = true })
	resp, b := h.postVerify(map[string]string{"line": logLine(verifyT0, "198.51.100.4", "/page")})
	wantStatus(t, resp, b, http.StatusOK)
	if got := decode[map[string]any](t, b); got["verifiable"] != false || got["match"] != false || !strings.Contains(got["message"].(string), "nothing to verify against") {
		t.Errorf("records off: %s", b)
	}
	_, b = h.do("GET", "/bot", "", nil)
	page := html.UnescapeString(string(b))
	for _, want := range []string{"It keeps no record of the requests it sends", "has nothing to verify against", "does not know the public address"} {
		if !strings.Contains(page, want) {
			t.Errorf("/bot with records off lacks %q", want)
		}
	}
	_, b = h.do("GET", "/bot/verify", "", nil)
	if page := html.UnescapeString(string(b)); !strings.Contains(page, `id="records-off"`) || !strings.Contains(page, "does not know the public address") {
		t.Errorf("/bot/verify with records off:\n%s", page)
	}
}

// TestBotPageRecords: /bot says what records hold and for how long, from
// the configuration in force.
func TestBotPageRecords(t *testing.T) {
	h := newHarness(t, withRecords(t), func(c *harnessConfig) { c.Policy.RequestRecordsTTL = 36 * time.Hour })
	_, b := h.do("GET", "/bot", "", nil)
	page := html.UnescapeString(string(b))
	for _, want := range []string{`for <span id="records-ttl">1 day 12 hours</span>`, "a hash of the query string (never its values)",
		`<a href="/bot/verify">Check a line of your access log</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("/bot lacks %q", want)
		}
	}
	if strings.Contains(page, "does not know the public address") {
		t.Error("/bot says the public address is unknown, but the policy knows it")
	}
}
