package audit

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/policy"
)

// handleRedirects adds the redirecting endpoints of the hostile site:
// /hostile/redirect?to=LOCATION (sent as is), /hostile/chain?n=N (N hops,
// then a page), /hostile/loop (to itself) and /hostile/loop-a (to loop-b
// and back).
func (h *hostileEnv) handleRedirects() {
	redirect := func(w http.ResponseWriter, to string) {
		w.Header()["Location"] = []string{to} // as is: no cleaning, no escaping
		w.WriteHeader(http.StatusFound)
	}
	h.site.Handle("/hostile/redirect", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirect(w, r.URL.Query().Get("to"))
	}))
	h.site.Handle("/hostile/chain", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 {
			r.URL.Path = "/hostile/ok.html"
			h.servePage(w, r)
			return
		}
		redirect(w, fmt.Sprintf("/hostile/chain?n=%d", n-1))
	}))
	h.site.Handle("/hostile/loop", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirect(w, "/hostile/loop")
	}))
	h.site.Handle("/hostile/loop-a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirect(w, "http://shop.example/hostile/loop-b")
	}))
	h.site.Handle("/hostile/loop-b", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirect(w, "/hostile/loop-a")
	}))
}

// TestHostileRedirects: redirects to internal addresses in several
// spellings, to non-http schemes, protocol-relative and backslash
// locations, a 6-hop chain and loops are refused in both lanes, each
// recorded as a lane finding with the cause, each hop requested once (no
// retry), and nothing reaches the canary.
func TestHostileRedirects(t *testing.T) {
	h := mustHostile(t, hostileOptions{})
	h.handleRedirects()
	c, c6 := strconv.Itoa(h.canary.Port()), strconv.Itoa(h.canary.Port6())
	to := func(loc string) string { return "/hostile/redirect?to=" + url.QueryEscape(loc) }
	tests := []struct {
		name string
		path string
		// plain is what the plain lane's finding must say.
		plain string
		// hops are the paths each lane requests, once each.
		hops []string
	}{
		{"loopback", to("http://127.0.0.1:" + c + "/"), "127.0.0.1 is a loopback address", nil},
		{"loopback decimal", to("http://2130706433:" + c + "/"), "loopback", nil},
		{"loopback hex", to("http://0x7f000001:" + c + "/"), "loopback", nil},
		{"loopback octal", to("http://0177.0.0.1:" + c + "/"), "loopback", nil},
		{"loopback short", to("http://127.1:" + c + "/x"), "loopback", nil},
		{"IPv6 loopback", to("http://[::1]:" + c6 + "/"), "[::1] is a loopback address", nil},
		{"IPv4-mapped IPv6", to("http://[::ffff:7f00:1]:" + c + "/"), "IPv4-mapped", nil},
		{"cloud metadata", to("http://169.254.169.254/latest/meta-data/"), "cloud metadata", nil},
		{"cloud metadata decimal", to("http://2852039166/latest/meta-data/"), "cloud metadata", nil},
		{"localhost", to("http://localhost:" + c + "/"), "localhost is a name for this machine", nil},
		{"name resolving to loopback", to("http://rebind.example:" + c + "/"), "rebind.example:" + c + " resolves to a loopback address", nil},
		{"file", to("file:///etc/passwd"), "is not http(s)", nil},
		{"gopher", to("gopher://127.0.0.1:" + c + "/_INFO"), "is not http(s)", nil},
		{"javascript", to("javascript:alert(document.domain)"), "is not http(s)", nil},
		{"data", to("data:text/html,<script>alert(1)</script>"), "is not http(s)", nil},
		{"protocol-relative", to("//127.0.0.1:" + c + "/"), "loopback", nil},
		{"backslash", to(`/\127.0.0.1:` + c + `/`), "backslash", nil},
		{"backslashes", to(`\\127.0.0.1:` + c + `\x`), "backslash", nil},
		{"six hops", "/hostile/chain?n=6", "more than 5 hops", []string{
			"/hostile/chain?n=6", "/hostile/chain?n=5", "/hostile/chain?n=4",
			"/hostile/chain?n=3", "/hostile/chain?n=2", "/hostile/chain?n=1",
		}},
		{"loop", "/hostile/loop", "redirect loop", []string{"/hostile/loop"}},
		{"two-step loop", "/hostile/loop-a", "redirect loop", []string{"/hostile/loop-a", "/hostile/loop-b"}},
	}
	plainUA, renderUA := policy.DefaultIdentity().PlainUA(), browser.UserAgent()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.site.Hits())
			r := h.auditURL(t, "http://shop.example"+tc.path)
			if r.Status.Ran() {
				t.Fatalf("the redirect was followed: %s", describe(r))
			}
			for _, l := range []struct {
				lane compare.Lane
				lr   *LaneReport
			}{{compare.LanePlain, &r.Lanes.Plain}, {compare.LaneRender, &r.Lanes.Render.LaneReport}} {
				if l.lr.Outcome != OutcomeBlocked && l.lr.Outcome != OutcomeError {
					t.Errorf("%s lane outcome %s, want blocked or error: %s", l.lane, l.lr.Outcome, describe(r))
					continue
				}
				f, ok := laneFinding(r, "lane."+string(l.lr.Outcome), l.lane)
				if !ok || !strings.Contains(f.Message, l.lr.Error) {
					t.Errorf("%s lane: no lane.%s finding with the cause: %+v", l.lane, l.lr.Outcome, r.Findings)
				}
				t.Logf("%s: %s", l.lane, f.Message)
			}
			if !strings.Contains(r.Lanes.Plain.Error, tc.plain) {
				t.Errorf("plain lane error %q does not say %q", r.Lanes.Plain.Error, tc.plain)
			}
			hops := tc.hops
			if hops == nil {
				hops = []string{tc.path}
			}
			checkHopsOnce(t, h.site.Hits()[before:], hops, plainUA, renderUA)
			h.canary.CheckZero(t)
		})
	}
}

// checkHopsOnce checks that each lane requested each hop exactly once and
// nothing else but robots.txt.
func checkHopsOnce(tb testing.TB, hits []testsite.Hit, hops []string, plainUA, renderUA string) {
	tb.Helper()
	count := map[string]map[string]int{plainUA: {}, renderUA: {}}
	for _, h := range hits {
		if h.Path == "/robots.txt" {
			continue
		}
		if count[h.UserAgent] == nil {
			tb.Errorf("request with user agent %q: %s", h.UserAgent, h.Path)
			continue
		}
		count[h.UserAgent][h.Path]++
	}
	for ua, lane := range map[string]string{plainUA: "plain", renderUA: "render"} {
		for _, hop := range hops {
			if n := count[ua][hop]; n != 1 {
				tb.Errorf("%s lane requested %s %d times, want once", lane, hop, n)
			}
			delete(count[ua], hop)
		}
		for p, n := range count[ua] {
			tb.Errorf("%s lane requested %s %d times, want never", lane, p, n)
		}
	}
}

// TestHostileTargetResolvingInternally: a submitted URL whose name
// resolves to an internal address ends blocked, with the guard's reason in
// both lanes and their lane.blocked findings, not skipped as if robots.txt
// were merely unreachable; nothing reaches the canary.
func TestHostileTargetResolvingInternally(t *testing.T) {
	h := mustHostile(t, hostileOptions{dns: func(host string) ([]netip.Addr, bool) {
		if host == "intranet.example" {
			return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, true
		}
		return nil, false
	}})
	for _, tc := range []struct{ host, class string }{
		{"rebind.example", "loopback"},
		{"intranet.example", "private"},
	} {
		r := h.auditURL(t, "http://"+tc.host+":"+strconv.Itoa(h.canary.Port())+"/")
		if r.Status != StatusBlocked {
			t.Errorf("%s: status %s (%s), want blocked", tc.host, r.Status, r.Reason)
		}
		for _, l := range []struct {
			lane compare.Lane
			lr   *LaneReport
		}{{compare.LanePlain, &r.Lanes.Plain}, {compare.LaneRender, &r.Lanes.Render.LaneReport}} {
			if l.lr.Outcome != OutcomeBlocked || !strings.Contains(l.lr.Error, "resolves to a "+tc.class) {
				t.Errorf("%s: %s lane %s %q, want blocked saying it resolves to a %s address", tc.host, l.lane, l.lr.Outcome, l.lr.Error, tc.class)
			}
			if _, ok := laneFinding(r, "lane.blocked", l.lane); !ok {
				t.Errorf("%s: no lane.blocked finding for the %s lane: %+v", tc.host, l.lane, r.Findings)
			}
		}
	}
	h.canary.CheckZero(t)
}
