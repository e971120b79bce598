package render

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
)

// The tests of this file make hostile pages ask the render lane to break
// the promises of /bot ("never POST, never send cookies or credentials,
// identify yourself on every request, at most 5 redirects") and check the
// test site's own request log: what the site operator would see.

// origins are the page origins the tests run on: a plain-http name, the
// same name over https (through the proxy's TLS interception), and the
// site's own loopback address, a secure context without TLS.
func origins(s *site, host string) map[string]string {
	return map[string]string{
		"http":     "http://" + host,
		"https":    "https://" + host,
		"loopback": "http://" + s.loopback(),
	}
}

// caseHost is a host name for one case of t.
func caseHost(t *testing.T, name string) string {
	label := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	return strings.Trim(label, "-") + "-" + hostFor(t)
}

// hostOf is the host name of a page origin, as the site logs it.
func hostOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		panic(err)
	}
	return u.Hostname()
}

// renderTestPage registers body as a test page and renders it at origin.
func renderTestPage(t *testing.T, b *Browser, s *site, origin, body string, req Request) (*compare.Snapshot, error) {
	t.Helper()
	name := pageName(t)
	s.addPage(name, body)
	req.URL = origin + "/t/" + name
	return renderPage(t, b, req, 30*time.Second)
}

// pageName is the name renderTestPage gives the test's page under /t/.
func pageName(t *testing.T) string {
	return strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-") + ".html"
}

// allowedHit reports whether a hit is one the lane may make: GET, HEAD,
// or a CORS preflight without a body for a GET or HEAD.
func allowedHit(h hit) bool {
	switch h.Method {
	case "GET", "HEAD":
		return true
	case "OPTIONS":
		return h.BodyLen == 0 && (h.ACRM == "GET" || h.ACRM == "HEAD")
	}
	return false
}

// markerQuery is the query a test page marks its own requests with.
func hitsWithQuery(s *site, sub string) []hit {
	return s.hitsMatching(func(h hit) bool { return strings.Contains(h.Query, sub) })
}

func TestRenderNeverSendsOtherMethods(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	tests := []struct {
		name string
		body string // %[1]s: the page's origin, %[2]s: another origin, %[3]s: the case tag
	}{
		{"form submitted by script", `<form method=POST action="/sink?c=%[3]s"><input name=a value=1></form>
			<p id=out>form page</p><script>document.forms[0].submit()</script>`},
		{"fetch with other methods", `<p id=out>fetch page</p><script>
			for (const m of ["POST", "PUT", "DELETE", "PATCH"])
				fetch("/sink?c=%[3]s-" + m, {method: m, body: m === "DELETE" ? undefined : "a=1"}).catch(() => {});
			</script>`},
		{"XHR POST", `<p id=out>xhr page</p><script>
			const x = new XMLHttpRequest(); x.open("POST", "/sink?c=%[3]s"); x.send("a=1");</script>`},
		{"form into an iframe", `<iframe name=f></iframe><form method=POST action="/sink?c=%[3]s" target=f>
			<input name=a value=1></form><p id=out>iframe form</p><script>document.forms[0].submit()</script>`},
		{"cross-origin text/plain form", `<form method=POST enctype=text/plain action="%[2]s/sink?c=%[3]s">
			<input name=a value=1></form><p id=out>text form</p><script>document.forms[0].submit()</script>`},
		{"no-cors cross-origin POST", `<p id=out>no-cors</p><script>
			fetch("%[2]s/sink?c=%[3]s", {method: "POST", mode: "no-cors", body: "a=1"}).catch(() => {});</script>`},
		{"preflighted cross-origin PUT", `<p id=out>preflight</p><script>
			fetch("%[2]s/sink?c=%[3]s", {method: "PUT", body: "a=1"}).catch(() => {});</script>`},
		{"sendBeacon", `<p id=out>beacon</p><script>navigator.sendBeacon("/sink?c=%[3]s", "a=1");</script>`},
	}
	for _, tc := range tests {
		for scheme, origin := range origins(s, caseHost(t, tc.name)) {
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				tag := fmt.Sprintf("m%d", time.Now().UnixNano())
				other := "http://other-" + hostFor(t)
				if scheme == "https" {
					other = "https://other-" + hostFor(t)
				}
				body := fmt.Sprintf(tc.body, origin, other, tag)
				snap, err := renderTestPage(t, b, s, origin, body, Request{})
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				time.Sleep(200 * time.Millisecond) // a request still on its way would show now
				for _, h := range hitsWithQuery(s, tag) {
					if !allowedHit(h) {
						t.Errorf("the site received %s %s?%s with %d body bytes", h.Method, h.Path, h.Query, h.BodyLen)
					}
				}
				refused := snap.Render.Blocked[ReasonMethod] + snap.Render.Blocked[ReasonBeacon]
				if refused < 1 {
					t.Errorf("the report names no refused request: blocked %v", snap.Render.Blocked)
				}
				if !strings.Contains(string(snap.Body), "id=\"out\"") {
					t.Errorf("the page itself is gone: %s", snap.Body)
				}
			})
		}
	}
}

func TestRenderNeverSendsCredentials(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	tests := []struct {
		name string
		body string // %[1]s: the case tag
	}{
		{"document.cookie", `<p id=out>cookie</p><script>document.cookie = "a=1; path=/";
			fetch("/sink?c=%[1]s").catch(() => {});</script>`},
		{"Set-Cookie from the site", `<p id=out>set-cookie</p><script>
			fetch("/setcookie?c=%[1]s").then(() => fetch("/sink?c=%[1]s-after")).catch(() => {});</script>`},
		{"XHR with user and password", `<p id=out>xhr auth</p><script>
			const x = new XMLHttpRequest(); x.open("GET", "/auth?c=%[1]s", true, "user", "pass");
			x.onloadend = () => fetch("/sink?c=%[1]s-after").catch(() => {}); x.send();</script>`},
		{"Authorization set by script", `<p id=out>authz</p><script>
			fetch("/sink?c=%[1]s", {headers: {Authorization: "Bearer secret"}}).catch(() => {});</script>`},
	}
	for _, tc := range tests {
		for scheme, origin := range origins(s, caseHost(t, tc.name)) {
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				tag := fmt.Sprintf("c%d", time.Now().UnixNano())
				snap, err := renderTestPage(t, b, s, origin, fmt.Sprintf(tc.body, tag), Request{})
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if snap.Render.CookiesRefused+snap.Render.CredentialsRefused < 1 {
					t.Errorf("the report does not say the page tried: cookies %d, credentials %d", snap.Render.CookiesRefused, snap.Render.CredentialsRefused)
				}
				time.Sleep(200 * time.Millisecond)
				hits := hitsWithQuery(s, tag)
				if len(hits) == 0 {
					t.Fatalf("the page's requests never arrived")
				}
				auth := 0
				for _, h := range hits {
					if h.Cookie != "" || h.Authorization != "" {
						t.Errorf("%s %s?%s carried Cookie %q, Authorization %q", h.Method, h.Path, h.Query, h.Cookie, h.Authorization)
					}
					if h.Path == "/auth" {
						auth++
					}
				}
				if auth > 1 {
					t.Errorf("/auth was requested %d times: the challenge was answered: %+v", auth, hits)
				}
			})
		}
	}
}

// workerScript makes forbidden requests, then a last allowed one the test
// waits for.
const workerScript = `const tag = %q;
const forbidden = [
  fetch("/private/" + tag),
  fetch("/sink?c=" + tag + "-post", {method: "POST", body: "a=1"}),
  fetch("http://www.google-analytics.com/collect?c=" + tag),
];
Promise.allSettled(forbidden).then(() => fetch("/sink?c=" + tag + "-last"));
`

func TestRenderWorkersFollowThePageRules(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	tests := []struct {
		name  string
		start string // page script starting the worker at %[1]s
		// refused: the worker never runs (service workers cannot register,
		// as in Google's renderer); its script must never be fetched.
		refused bool
	}{
		{"dedicated worker", `new Worker("%[1]s");`, false},
		{"shared worker", `new SharedWorker("%[1]s");`, false},
		{"service worker", `navigator.serviceWorker && navigator.serviceWorker.register("%[1]s").catch(e => console.error("sw: " + e));`, true},
	}
	for _, tc := range tests {
		for scheme, origin := range origins(s, caseHost(t, tc.name)) {
			if scheme == "http" {
				continue // a plain-http name is not a secure context: no service or shared workers
			}
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				tag := fmt.Sprintf("w%d", time.Now().UnixNano())
				script := strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-") + ".js"
				s.addPage(script, fmt.Sprintf(workerScript, tag))
				page := fmt.Sprintf(`<p id=out>workers</p><script>`+tc.start+`</script>`, "/t/"+script)
				last := func(ctx context.Context, _ *tab) {
					for ctx.Err() == nil && len(hitsWithQuery(s, tag+"-last")) == 0 {
						time.Sleep(50 * time.Millisecond)
					}
				}
				allow := func(u *url.URL) (bool, string) {
					return !strings.HasPrefix(u.Path, "/private/"), "Disallow: /private/"
				}
				req := Request{AllowSameOrigin: allow, afterSettle: withTimeout(5*time.Second, last)}
				if tc.refused {
					req.afterSettle = nil
				}
				snap, err := renderTestPage(t, b, s, origin, page, req)
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if tc.refused {
					if got := s.hitsMatching(func(h hit) bool { return strings.Contains(h.Path, script) }); len(got) > 0 || !slices.Contains(snap.Render.RefusedFeatures, FeatureServiceWorker) {
						t.Errorf("the service worker script was fetched %d times, refused features %v; want it refused before any request", len(got), snap.Render.RefusedFeatures)
					}
					return
				}
				if len(hitsWithQuery(s, tag+"-last")) == 0 {
					t.Fatalf("the worker never made its last request; hits: %v", s.hitsFor(hostOf(origin)))
				}
				ua := b.UserAgent()
				for _, h := range s.hitsFor(hostOf(origin)) {
					if !strings.Contains(h.Path, script) && !strings.Contains(h.Query, tag) && !strings.Contains(h.Path, tag) {
						continue
					}
					if h.UA != ua {
						t.Errorf("%s %s sent user agent %q, want %q", h.Method, h.Path, h.UA, ua)
					}
					if !allowedHit(h) {
						t.Errorf("the site received %s %s?%s", h.Method, h.Path, h.Query)
					}
					if strings.HasPrefix(h.Path, "/private/") {
						t.Errorf("a robots-disallowed path was fetched: %s", h.Path)
					}
				}
				if tr := s.hitsMatching(func(h hit) bool { return trackerHost(h.Host) && strings.Contains(h.Query, tag) }); len(tr) > 0 {
					t.Errorf("an analytics host was contacted: %v", tr)
				}
			})
		}
	}
}

// withTimeout bounds an afterSettle hook.
func withTimeout(d time.Duration, f func(context.Context, *tab)) func(context.Context, *tab) {
	return func(ctx context.Context, tb *tab) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		f(ctx, tb)
	}
}

func TestRenderRedirectCapForEveryRequest(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	page := `<!DOCTYPE html><title>chains</title>
		<link rel=stylesheet href="/chain?n=15&k=style">
		<script src="/chain?n=15&k=script"></script>
		<iframe src="/chain?n=15&k=iframe"></iframe>
		<iframe src="/framenav?i=0"></iframe>
		<p id=out>chains</p><script>fetch("/chain?n=15&k=fetch").catch(() => {});</script>`
	snap, err := renderTestPage(t, b, s, "http://"+host, page, Request{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if snap.Render.Blocked[ReasonRedirects] < 4 || snap.Render.Blocked[ReasonNavigation] < 1 {
		t.Errorf("blocked %v, want at least 4 redirects (one per chain) and 1 navigation", snap.Render.Blocked)
	}
	for _, kind := range []string{"style", "script", "iframe", "fetch"} {
		n := len(s.hitsMatching(func(h hit) bool { return h.Host == host && h.Path == "/chain" && strings.Contains(h.Query, "k="+kind) }))
		if n > 1+MaxRedirects {
			t.Errorf("the %s chain was followed for %d requests, want at most %d (the first and %d redirects)", kind, n, 1+MaxRedirects, MaxRedirects)
		}
	}
	if n := len(s.hitsMatching(func(h hit) bool { return h.Host == host && h.Path == "/framenav" })); n > 1+MaxFrameLoads {
		t.Errorf("an iframe navigated itself %d times, want at most %d loads", n, 1+MaxFrameLoads)
	}
}

func TestRenderBlocksImagesAndMediaByWhatTheyAre(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	page := `<!DOCTYPE html><title>gaps</title>
		<object data="/img/object.png" type="image/png"></object>
		<embed src="/media/embed.mp4">
		<iframe src="/img/frame.png"></iframe>
		<link rel=prefetch href="/img/prefetch.png">
		<object data="/blob?k=object&type=image/png&size=33554432"></object>
		<iframe src="/blob?k=iframe&type=video/mp4&size=33554432"></iframe>
		<p id=out>gaps</p>`
	snap, err := renderTestPage(t, b, s, "http://"+host, page, Request{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if bl := snap.Render.Blocked; bl[ReasonPrefetch]+bl[ReasonImage] < 4 || bl[ReasonMedia] < 2 {
		t.Errorf("blocked %v, want the 4 images (one as a prefetch) and 2 videos", bl)
	}
	for _, h := range s.hitsFor(host) {
		if strings.HasPrefix(h.Path, "/img/") || strings.HasPrefix(h.Path, "/media/") {
			t.Errorf("the site was asked for %s", h.Path)
		}
	}
	s.written.Range(func(k, v any) bool {
		if q := k.(string); strings.Contains(q, "k=object") || strings.Contains(q, "k=iframe") {
			if n := v.(int); n >= 33554432 {
				t.Errorf("the site sent the whole %d-byte body of /blob?%s", n, q)
			}
		}
		return true
	})
}

func TestRenderBlobAndAboutNavigations(t *testing.T) {
	t.Parallel()
	b, s := mustBrowser(t)
	host := hostFor(t)
	page := `<!DOCTYPE html><title>first</title><p id=out>first</p><script>
		setTimeout(() => { location = URL.createObjectURL(new Blob(["<title>blob page</title><p>blob</p>"], {type: "text/html"})); }, 50);
		</script>`
	name := "blob-nav.html"
	s.addPage(name, page)
	snap, err := renderPage(t, b, Request{URL: "http://" + host + "/t/" + name}, 30*time.Second)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if !strings.HasPrefix(snap.FinalURL, "http://"+host+"/") {
		t.Errorf("final URL = %q, want the page's own http URL", snap.FinalURL)
	}
	if snap.Render.Navigations != 1 {
		t.Errorf("navigations = %d, want the blob: navigation counted", snap.Render.Navigations)
	}
}
