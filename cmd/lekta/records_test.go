package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
	"lekta.dev/lekta/records"
)

// recordsCLI runs lekta with the test site's hosts mapped (for audit) and
// the data dir dir.
func recordsCLI(t *testing.T, site *testsite.Site, dir string, args ...string) (int, string, string) {
	t.Helper()
	if args[0] == "audit" {
		resolve, allow := site.ResolveFlags()
		full := []string{"audit", "--allow-addr", allow, "--timeout", "30s"}
		for _, r := range resolve {
			full = append(full, "--resolve", r)
		}
		args = append(full, args[1:]...)
	}
	return runCLIEnv(dataDirEnv(dir), args...)
}

// forge sends a request to the site from 127.0.0.2 with LektaBot's user
// agent, as someone else pretending to be LektaBot would.
func forge(t *testing.T, site *testsite.Site, path, ua string) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", site.URL+path, nil)
	req.Host = "shop.example"
	req.Header.Set("User-Agent", ua)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("forged request: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestRequestRecordsAgreeWithSiteLog is the end-to-end test: a
// real `lekta audit` of a page that redirects to one with a stylesheet, a
// script fetching JSON, a blocked image and a blocked analytics script.
// `lekta records --json` agrees with the test site's own access log
// request for request; a combined-log line from that log verifies as ours,
// and the same line moved 10 s, with another path or another source does
// not, nor does a forged request with LektaBot's user agent; a malformed
// line is refused naming the part that could not be read.
func TestRequestRecordsAgreeWithSiteLog(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	site := testsite.Start(t)
	dir := t.TempDir()
	code, _, errOut := recordsCLI(t, site, dir, "audit", "--json", "http://shop.example/rec/go?utm=secret")
	if code != exitOK {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	hits := site.Hits()
	code, out, errOut := recordsCLI(t, site, dir, "records", "--host", "shop.example", "--json")
	if code != exitOK {
		t.Fatalf("records: exit %d: %s", code, errOut)
	}
	var recs []records.Request
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("records --json: %v\n%s", err, out)
	}
	testsite.WantRecordsMatchHits(t, recs, hits)
	if strings.Contains(out, "secret") {
		t.Errorf("the records hold the query's value:\n%s", out)
	}
	for _, h := range hits {
		if h.Host != "shop.example" || h.Path == "/rec/pic.png" {
			t.Errorf("a blocked request reached the site: %s %s", h.Host, h.Path)
		}
	}
	_, text, _ := recordsCLI(t, site, dir, "records", "--host", "shop.example")
	if !strings.Contains(text, "requests to shop.example") || !strings.Contains(text, "/rec/page.html?#") {
		t.Errorf("records as text:\n%s", text)
	}

	plainUA := policy.DefaultIdentity().PlainUA()
	var page testsite.Hit
	for _, h := range hits {
		if strings.HasPrefix(h.Path, "/rec/page.html") && h.UserAgent != plainUA {
			page = h
		}
	}
	if page.Path == "" {
		t.Fatalf("the render lane's page request is not in the site's log: %+v", hits)
	}
	verifyLine := func(line string, args ...string) (int, string, string) {
		return recordsCLI(t, site, dir, append(append([]string{"records", "verify"}, args...), line)...)
	}
	code, out, errOut = verifyLine(page.CombinedLine(true))
	if code != exitOK || !strings.Contains(out, "A LektaBot request matching this line was made at") ||
		!strings.Contains(out, "from 127.0.0.1 by the browser render (headless Chromium)") {
		t.Fatalf("verify of our line %q: exit %d\n%s%s", page.CombinedLine(true), code, out, errOut)
	}
	if code, out, _ = verifyLine(page.CombinedLine(false), "--host", "shop.example"); code != exitOK {
		t.Errorf("verify of our line without vhost, --host given: exit %d\n%s", code, out)
	}
	moved, other, elsewhere := page, page, page
	moved.Start = moved.Start.Add(10 * time.Second)
	other.Path = "/rec/other.html"
	elsewhere.Remote = netip.MustParseAddrPort("127.0.0.2:40000")
	for name, h := range map[string]testsite.Hit{"moved 10 s": moved, "another path": other, "another source": elsewhere} {
		code, out, errOut := verifyLine(h.CombinedLine(true))
		if code != exitFailure || strings.TrimSpace(out) != "No LektaBot request to shop.example matches within ±5 s: the request was not ours." {
			t.Errorf("verify of our line %s: exit %d\n%s%s", name, code, out, errOut)
		}
	}
	forge(t, site, page.Path, page.UserAgent)
	forged := site.Hits()[len(site.Hits())-1]
	if forged.Remote.Addr() != netip.MustParseAddr("127.0.0.2") || forged.Path != page.Path {
		t.Fatalf("the forged request was logged as %+v", forged)
	}
	if code, out, errOut := verifyLine(forged.CombinedLine(true)); code != exitFailure || !strings.Contains(out, "the request was not ours") {
		t.Errorf("verify of a forged request: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = verifyLine(`shop.example 127.0.0.1 - - [yesterday] "GET / HTTP/1.1" 200 1`)
	if code != exitBadInput || !strings.Contains(errOut, `the time "yesterday" could not be read`) || out != "" {
		t.Errorf("verify of a malformed line: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRequestRecordsOff: with --request-records-ttl 0 an audit records
// nothing, and verification says there is nothing to verify against.
func TestRequestRecordsOff(t *testing.T) {
	serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	site := testsite.Start(t)
	dir := t.TempDir()
	if code, _, errOut := recordsCLI(t, site, dir, "audit", "--request-records-ttl", "0", "http://shop.example/rec/go"); code != exitOK {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	if len(site.Hits()) == 0 {
		t.Fatal("the audit sent nothing")
	}
	code, out, errOut := recordsCLI(t, site, dir, "records", "--host", "shop.example", "--json")
	if code != exitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("records --json with records off: exit %d\n%s%s", code, out, errOut)
	}
	line := site.Hits()[0].CombinedLine(true)
	code, _, errOut = recordsCLI(t, site, dir, "records", "verify", "--request-records-ttl", "0", line)
	if code != exitNotRun || !strings.Contains(errOut, "nothing to verify against") {
		t.Errorf("verify with records off: exit %d\n%s", code, errOut)
	}
}

// TestRecordsFlags: bad request-records flags are refused naming the flag.
func TestRecordsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"records"}, "--host is required"},
		{[]string{"records", "--host", "a b"}, "--host"},
		{[]string{"records", "--host", "shop.example", "--since", "-1h"}, "--since"},
		{[]string{"records", "verify", "--egress-addr", "nope", `h 1.2.3.4 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`}, "--egress-addr"},
		{[]string{"records", "verify", "--request-records-ttl", "-1s", `h 1.2.3.4 - - [01/Dec/2026:12:03:41 +0000] "GET / HTTP/1.1" 200 1`}, "--request-records-ttl"},
		{[]string{"records", "verify", "x"}, "Unreadable log line: the time is missing"},
		{[]string{"audit", "--request-records-ttl", "-1s", "http://shop.example/"}, "--request-records-ttl"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != exitBadInput || !strings.Contains(errOut, tc.want) {
			t.Errorf("lekta %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestServeVerifies: lekta serve records the requests of an audit made
// through its API, and its /api/v1/verify answers yes for the site's log
// line of one of them; /bot names the retention from --request-records-ttl.
func TestServeVerifies(t *testing.T) {
	site := testsite.Start(t)
	s := startServe(t, site, nil, "--request-records-ttl", "48h", "--egress-addr", "203.0.113.9")
	resp, b := s.postAPI("http://shop.example/rec/go")
	s.waitReport(servePendingID(t, resp, b))
	var page testsite.Hit
	for _, h := range site.Hits() {
		if h.Path == "/rec/data.json" {
			page = h
		}
	}
	if page.Path == "" {
		t.Fatalf("the render lane's fetch is not in the site's log: %+v", site.Hits())
	}
	ask := func(line string) map[string]any {
		body, _ := json.Marshal(map[string]string{"line": line})
		resp, b := s.do("POST", "/api/v1/verify", string(body), map[string]string{"Content-Type": "application/json"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("verify: %d %s", resp.StatusCode, b)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := ask(page.CombinedLine(true)); got["match"] != true || got["lane"] != "render" {
		t.Errorf("verify of the site's line: %v", got)
	}
	// An --egress-addr is accepted as our source.
	nat := page
	nat.Remote = netip.MustParseAddrPort("203.0.113.9:1234")
	if got := ask(nat.CombinedLine(true)); got["match"] != true {
		t.Errorf("verify from the egress address: %v", got)
	}
	_, b = s.do("GET", "/bot", "", nil)
	if !strings.Contains(string(b), `<span id="records-ttl">2 days</span>`) || strings.Contains(string(b), "does not know the public address") {
		t.Errorf("/bot does not state the records' retention from the flags, or says the public address is unknown")
	}
}

// TestWriteRecords: the text listing says what each record holds, with the
// query as the start of its hash and stored values escaped.
func TestWriteRecords(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 3, 41, 208e6, time.UTC)
	rs := []records.Request{
		{At: at, Lane: "render", Method: "GET", Scheme: "https", Host: "shop.example", Port: 443, Path: "/a\x1b[2J",
			QueryHash: "0123456789abcdef0123456789abcdef", Remote: netip.MustParseAddrPort("192.0.2.10:443"),
			Local: netip.MustParseAddrPort("198.51.100.4:40123"), Status: 200, Bytes: 12, AuditID: "A1"},
		{At: at, Lane: "plain", Method: "GET", Scheme: "http", Host: "shop.example", Port: 80, Path: "/",
			Remote: netip.MustParseAddrPort("192.0.2.10:80"), Local: netip.MustParseAddrPort("198.51.100.4:40124"), ErrorClass: "timeout", AuditID: "A1"},
	}
	var b strings.Builder
	if err := writeRecords(&b, "shop.example", time.Hour, defaultRequestTTL, rs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"2 requests to shop.example in the last 1 h",
		`2026-12-01 12:03:41.208  render GET  https://shop.example:443"/a\x1b[2J?#0123456789ab"  200  12 B  from 198.51.100.4:40123 to 192.0.2.10:443  audit A1`,
		"http://shop.example:80/  timeout  0 B"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a control character reached the listing:\n%q", out)
	}
}
