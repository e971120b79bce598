package audit

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// noSuchHost answers every lookup as NXDOMAIN, as a resolver does for a
// name that does not exist.
type noSuchHost struct{}

func (noSuchHost) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// wantVerdict checks the verdict's first sentence and the finding codes.
func wantVerdict(tb testing.TB, r *Report, lead string, severity compare.Severity, codes ...string) {
	tb.Helper()
	if r.Verdict == nil {
		tb.Fatalf("no verdict: %s", describe(r))
	}
	if b, err := r.Encode(); err != nil || validateReport(tb, b) != nil {
		tb.Errorf("the report does not match openapi.json: %v %v", err, validateReport(tb, b))
	}
	if !strings.HasPrefix(r.Verdict.Summary, lead) {
		tb.Errorf("verdict %q does not open with %q", r.Verdict.Summary, lead)
	}
	if r.Verdict.Severity != severity {
		tb.Errorf("verdict severity %s, want %s", r.Verdict.Severity, severity)
	}
	for _, c := range codes {
		if !hasFinding(r, c) {
			tb.Errorf("no finding %s: %s", c, describe(r))
		}
	}
}

// TestVerdictUnreachableSite: issue 14 point 1. A site that cannot be
// reached is said to be unreachable, each cause in its own words and code,
// and no robots.txt decision is claimed: none was made.
func TestVerdictUnreachableSite(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close() // nothing listens there now: connections are refused
	e := mustEnvGuard(t, func(e *env, gc *policy.GuardConfig) {
		gc.Resolver = noSuchHost{}
		refused, err := policy.ParseResolveRule("down.example:80:" + closedAddr)
		if err != nil {
			t.Fatal(err)
		}
		// https on the test site's plain HTTP port: the TLS handshake fails.
		notTLS, err := policy.ParseResolveRule("tls.example:443:" + e.site.AddrPort().String())
		if err != nil {
			t.Fatal(err)
		}
		gc.Resolve = append(gc.Resolve, refused, notTLS)
		allow, _ := policy.ParseAllowAddr(closedAddr)
		gc.AllowAddrs = append(gc.AllowAddrs, allow)
	}, nil)
	cases := []struct {
		name, url, code, lead string
	}{
		{"name does not resolve", "http://no-such-host.example/page", compare.CodeSiteDNS,
			"The site cannot be reached: " + policy.ReasonNoSuchHost + " (no-such-host.example:80)."},
		{"connection refused", "http://down.example/page", compare.CodeSiteRefused,
			"The site cannot be reached: " + policy.ReasonRefused + " (down.example:80)."},
		{"not TLS", "https://tls.example/page", compare.CodeSiteTLS,
			"The site cannot be reached: the server does not speak TLS on this port (tls.example:443)."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.audit(t, tc.url, TriggerCLI)
			if r.Status != StatusError || r.Robots != nil {
				t.Errorf("status %s, robots %+v: want error and no robots.txt section", r.Status, r.Robots)
			}
			wantVerdict(t, r, tc.lead, compare.SeverityCritical, tc.code)
			if hasFinding(r, compare.CodeRobotsUnreachable) || hasFinding(r, compare.CodeRobotsDisallowed) {
				t.Errorf("a robots.txt finding for a site never reached: %s", describe(r))
			}
			var out bytes.Buffer
			if err := WriteText(&out, r); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"disallowed", "DISALLOWED", "make robots.txt answer", "a person asked"} {
				if strings.Contains(out.String(), bad) {
					t.Errorf("the text report says %q of a site never reached:\n%s", bad, out.String())
				}
			}
		})
	}
	if hits := e.site.Hits(); len(hits) != 0 {
		t.Errorf("the site was reached: %v", hits)
	}
}

// TestUnreachableSiteTLSReasons checks the words for certificate failures
// against a real TLS server with a certificate nobody trusts.
func TestUnreachableSiteTLSReasons(t *testing.T) {
	e := mustEnv(t, nil)
	srv := newTLSSite(t)
	rule, _ := policy.ParseResolveRule("selfsigned.example:443:" + srv)
	gc := e.site.GuardConfig()
	gc.Resolve = append(gc.Resolve, rule)
	allow, _ := policy.ParseAllowAddr(srv)
	gc.AllowAddrs = append(gc.AllowAddrs, allow)
	g, err := policy.NewGuard(gc)
	if err != nil {
		t.Fatal(err)
	}
	res := policy.FetchRobots(context.Background(), policy.RobotsFetchConfig{Transport: g.Transport(), CheckURL: g.CheckURL},
		mustURL(t, "https://selfsigned.example/"), "test")
	f, ok := unreachableSite(res, mustURL(t, "https://selfsigned.example/"))
	if !ok || f.code != compare.CodeSiteTLS || !strings.Contains(f.reason, "certificate") {
		t.Fatalf("unreachableSite = %+v %v for %v", f, ok, res.Err)
	}
}

// newTLSSite starts an HTTPS server with httptest's own certificate, which
// the system roots do not trust, and returns its address.
func newTLSSite(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	tb.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func mustURL(tb testing.TB, raw string) *url.URL {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// TestVerdictNotFoundEverywhere: issue 14 point 2. A page answering 404 to
// both lanes leads with that, and the verdict claims no difference.
func TestVerdictNotFoundEverywhere(t *testing.T) {
	e := mustEnv(t, nil)
	e.site.Handle("/gone.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `<!doctype html><html lang="en"><head><title>Not found</title></head><body><h1>Not found</h1></body></html>`)
	}))
	r := e.audit(t, "http://shop.example/gone.html", TriggerCLI)
	wantVerdict(t, r, "The page answers 404 to every visitor", compare.SeverityCritical, compare.CodeStatusNotOK)
	if strings.Contains(r.Verdict.Summary, "differ") || hasFinding(r, compare.CodeStatusDiffers) {
		t.Errorf("verdict %q claims the lanes differ", r.Verdict.Summary)
	}
}

// TestVerdictDisallowedPage: issue 14 point 3. A page robots.txt
// disallows, audited because a person asked, leads with the rule and the
// crawlers it stops, and renders with its own scripts: the rule that
// disallows the page does not block them. Another rule still does, and an
// allowed page's disallowed script stays blocked.
func TestVerdictDisallowedPage(t *testing.T) {
	e := mustEnv(t, nil)
	e.site.SetRobots("shop.example", http.StatusOK, "User-agent: *\nDisallow: /app/\nDisallow: /blocked/\n\nUser-agent: Googlebot\nAllow: /\n")
	e.site.Handle("/app/page.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html lang="en"><head><title>App</title><meta name="description" content="An app page whose text comes from its own script."></head>
<body><div id="app"></div><script src="/app/main.js"></script><script src="/blocked/extra.js"></script></body></html>`)
	}))
	e.site.Handle("/app/main.js", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.getElementById("app").innerHTML = "<h1>Glazes</h1><p>Celadon, tenmoku and shino glazes fired in our own kiln every week of the year.</p>";`)
	}))
	e.site.Handle("/blocked/extra.js", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.title = "extra";`)
	}))
	r := e.audit(t, "http://shop.example/app/page.html", TriggerForm)
	if r.Status != StatusComplete {
		t.Fatalf("audit: %s", describe(r))
	}
	wantVerdict(t, r, "robots.txt disallows this page for LektaBot: line 2, “Disallow: /app/”, in the group “User-agent: *”; it also keeps out Bingbot, Applebot and 11 more.",
		compare.SeverityCritical, compare.CodeRobotsDisallowed, compare.CodeRenderBlockedRobots)
	if r.Lanes.Render.Page == nil || r.Lanes.Render.Page.WordCount < 10 || len(r.Lanes.Render.Page.H1) == 0 {
		t.Errorf("the rendered view lacks the script's content: %+v", r.Lanes.Render.Page)
	}
	if got := r.Lanes.Render.BlockedRequests["robots"]; got != 1 {
		t.Errorf("%d requests blocked by robots.txt, want 1 (/blocked/extra.js): %v", got, r.Lanes.Render.BlockedURLs)
	}
	if n := len(e.site.HitsOf("shop.example", "/app/main.js")); n != 1 {
		t.Errorf("/app/main.js fetched %d times, want once", n)
	}
	if n := len(e.site.HitsOf("shop.example", "/blocked/")); n != 0 {
		t.Errorf("/blocked/extra.js was fetched %d times", n)
	}
	if strings.Contains(r.Verdict.Summary, "AI crawlers that do not run JavaScript see") || strings.Count(r.Verdict.Summary, "Applebot") != 1 {
		t.Errorf("verdict %q tells what AI crawlers see of a page robots.txt keeps them out of", r.Verdict.Summary)
	}

	// An allowed page keeps its disallowed subresources blocked.
	e.site.Handle("/shop.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html lang="en"><head><title>Shop</title></head><body><h1>Shop</h1><script src="/app/main.js"></script></body></html>`)
	}))
	r = e.audit(t, "http://shop.example/shop.html", TriggerForm)
	if !hasFinding(r, compare.CodeRenderBlockedRobots) || hasFinding(r, compare.CodeRobotsDisallowed) {
		t.Errorf("allowed page: %s", describe(r))
	}
	if n := len(e.site.HitsOf("shop.example", "/app/main.js")); n != 1 {
		t.Errorf("/app/main.js fetched %d times in all, want once (only for the disallowed page)", n)
	}
}

// TestVerdictWorstLeads: issue 14 point 4. A critical finding opens the
// verdict, with the counts, never good news.
func TestVerdictWorstLeads(t *testing.T) {
	e := mustEnv(t, nil)
	r := e.audit(t, "http://shop.example/js-title.html", TriggerCLI)
	wantVerdict(t, r, "The title “Blue Stoneware Kettle | Lekta Test Shop” is set by JavaScript;", compare.SeverityCritical, compare.CodeTitleRenderOnly)
	if r.Verdict.Critical != 1 || r.Verdict.TextShare == nil {
		t.Errorf("verdict %+v: want 1 critical and the shares", r.Verdict)
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "VERDICT  CRITICAL  (1 critical · ") {
		t.Errorf("text verdict line:\n%s", out.String())
	}
}

// TestVerdictSlowAndCutLanes: issue 14 point 6. A page slow to its first
// byte gets page.slow; a lane stopped by the deadline says so and keeps
// the time it ran instead of a total of 0 ms.
func TestVerdictSlowAndCutLanes(t *testing.T) {
	plainUA := policy.DefaultIdentity().PlainUA()
	e := mustEnv(t, func(c *Config) { c.Timeout = 15 * time.Second })
	e.site.Handle("/slow.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() == plainUA {
			time.Sleep(compare.SlowTTFB + 300*time.Millisecond)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html lang="en"><head><title>Slow</title></head><body><h1>Slow</h1></body></html>`)
	}))
	e.site.Handle("/hang.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() == plainUA {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html lang="en"><head><title>Hang</title></head><body><h1>Hang</h1></body></html>`)
	}))
	r := e.audit(t, "http://shop.example/slow.html", TriggerCLI)
	f, ok := laneFinding(r, compare.CodePageSlow, compare.LanePlain)
	if !ok || !strings.HasPrefix(f.Message, "The server took 5.") {
		t.Errorf("page.slow for the plain lane: %+v in %s", f, describe(r))
	}

	r = e.audit(t, "http://shop.example/hang.html", TriggerCLI)
	pl := r.Lanes.Plain
	if pl.Outcome != OutcomeTimeout || !pl.CutByDeadline || pl.DurationMS < 1000 {
		t.Fatalf("plain lane %+v: want a timeout cut by the deadline with its time", pl)
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "stopped by the deadline after ") || strings.Contains(out.String(), "total 0 ms") {
		t.Errorf("text report of a cut lane:\n%s", out.String())
	}
}
