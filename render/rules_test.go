package render

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rulesFixture is an audit proxy in front of one backend served over http
// (*.example:80) and https (*.example:443), with a request log.
type rulesFixture struct {
	p    *proxy
	auth *authority

	mu   sync.Mutex
	seen []*http.Request
}

func newRulesFixture(tb testing.TB, trustBackend bool, allow func(*url.URL) (bool, string)) *rulesFixture {
	tb.Helper()
	f := &rulesFixture{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Clone(context.Background()))
		f.mu.Unlock()
		q := r.URL.Query()
		switch r.URL.Path {
		case "/chain":
			n, _ := strconv.Atoi(q.Get("n"))
			if n > 0 {
				http.Redirect(w, r, fmt.Sprintf("/chain?n=%d", n-1), http.StatusFound)
				return
			}
		case "/type":
			w.Header().Set("Content-Type", q.Get("ct"))
		case "/cookie":
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
		case "/auth":
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "hello from "+r.Host)
	})
	plain := httptest.NewServer(handler)
	tb.Cleanup(plain.Close)
	cert, roots := testCertificate(tb, "*.example")
	secure := httptest.NewUnstartedServer(handler)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	secure.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelDebug)
	secure.StartTLS()
	tb.Cleanup(secure.Close)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		switch {
		case strings.HasSuffix(addr, ".example:80"):
			return d.DialContext(ctx, "tcp", plain.Listener.Addr().String())
		case strings.HasSuffix(addr, ".example:443"):
			return d.DialContext(ctx, "tcp", secure.Listener.Addr().String())
		}
		return nil, fmt.Errorf("dial %s: %w", addr, errTestGuard)
	}
	auth, err := newAuthority()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := proxyConfig{dial: dial, budget: budget{requests: 50}, peer: loopbackOnly, auth: auth, log: slog.New(slog.DiscardHandler)}
	if trustBackend {
		cfg.roots = roots
	}
	p, err := newProxy(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	p.setRules(&rules{userAgent: "Browser/1" + testSuffix, allow: allow})
	tb.Cleanup(p.close)
	f.p, f.auth = p, auth
	return f
}

// client uses the proxy and accepts only certificates of its authority.
func (f *rulesFixture) client() *http.Client {
	pu, _ := url.Parse("http://" + f.p.addr())
	tr := &http.Transport{
		Proxy: http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // checked below: the proxy's own key
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || !f.auth.key.PublicKey.Equal(cs.PeerCertificates[0].PublicKey) {
					return fmt.Errorf("not the proxy's certificate")
				}
				return cs.PeerCertificates[0].VerifyHostname(cs.ServerName)
			},
		},
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func (f *rulesFixture) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.seen...)
}

func TestProxyRules(t *testing.T) {
	t.Parallel()
	noPrivate := func(u *url.URL) (bool, string) {
		return !strings.HasPrefix(u.Path, "/private/"), "Disallow: /private/"
	}
	tests := []struct {
		name    string
		method  string
		path    string
		header  map[string]string
		status  int
		refused string // the refusedHeader's value, "" when forwarded
	}{
		{"GET is forwarded", "GET", "/a", nil, 200, ""},
		{"HEAD is forwarded", "HEAD", "/a", nil, 200, ""},
		{"POST is refused", "POST", "/a", nil, 405, ReasonMethod},
		{"PUT is refused", "PUT", "/a", nil, 405, ReasonMethod},
		{"DELETE is refused", "DELETE", "/a", nil, 405, ReasonMethod},
		{"a preflight for GET is forwarded", "OPTIONS", "/a", map[string]string{"Access-Control-Request-Method": "GET"}, 200, ""},
		{"a preflight for PUT is refused", "OPTIONS", "/a", map[string]string{"Access-Control-Request-Method": "PUT"}, 405, ReasonMethod},
		{"an OPTIONS that is no preflight is refused", "OPTIONS", "/a", nil, 405, ReasonMethod},
		{"a prefetch is refused", "GET", "/a", map[string]string{"Sec-Purpose": "prefetch"}, 403, ReasonPrefetch},
		{"an image destination is refused", "GET", "/a", map[string]string{"Sec-Fetch-Dest": "image"}, 403, ReasonImage},
		{"a video destination is refused", "GET", "/a", map[string]string{"Sec-Fetch-Dest": "video"}, 403, ReasonMedia},
		{"an image response is refused", "GET", "/type?ct=image%2Fpng", nil, 403, ReasonImage},
		{"a video response is refused", "GET", "/type?ct=video%2Fmp4", nil, 403, ReasonMedia},
		{"a font response is refused", "GET", "/type?ct=font%2Fwoff2", nil, 403, ReasonFont},
		{"a script response is forwarded", "GET", "/type?ct=text%2Fjavascript", nil, 200, ""},
		{"robots.txt disallows", "GET", "/private/x", nil, 403, ReasonRobots},
		{"an analytics host", "GET", "http://www.google-analytics.com/collect", nil, 403, ReasonAnalytics},
	}
	for _, tc := range tests {
		for _, scheme := range []string{"http", "https"} {
			t.Run(tc.name+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				f := newRulesFixture(t, true, noPrivate)
				target := scheme + "://shop.example" + tc.path
				if strings.HasPrefix(tc.path, "http") {
					target = strings.Replace(tc.path, "http:", scheme+":", 1)
				}
				req, _ := http.NewRequest(tc.method, target, nil)
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				resp, err := f.client().Do(req)
				if err != nil && tc.refused == ReasonAnalytics && scheme == "https" {
					// The tunnel itself is refused: the CONNECT gets the 403.
					resp, err = &http.Response{StatusCode: 403, Header: http.Header{refusedHeader: {ReasonAnalytics}}, Body: http.NoBody}, nil
				}
				if err != nil {
					t.Fatalf("%s %s: %v", tc.method, target, err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.status || resp.Header.Get(refusedHeader) != tc.refused {
					t.Errorf("%s %s: %d %q, want %d %q", tc.method, target, resp.StatusCode, resp.Header.Get(refusedHeader), tc.status, tc.refused)
				}
				seen := f.requests()
				switch {
				case tc.refused != "" && strings.HasPrefix(tc.refused, "image") || tc.refused == ReasonMedia || tc.refused == ReasonFont:
					// Refused by the response: the site answered once.
					if strings.Contains(tc.path, "/type") && len(seen) != 1 {
						t.Errorf("site got %d requests, want 1", len(seen))
					}
				case tc.refused != "":
					if len(seen) != 0 {
						t.Errorf("site got %s %s", seen[0].Method, seen[0].URL)
					}
				default:
					if len(seen) != 1 || seen[0].Method != tc.method {
						t.Errorf("site got %d requests, want one %s", len(seen), tc.method)
					}
				}
				if tc.refused != "" && f.p.usage().blocked[tc.refused] != 1 {
					t.Errorf("blocked %v, want one %s", f.p.usage().blocked, tc.refused)
				}
			})
		}
	}
}

func TestProxyScrubsCredentialsAndSetsTheUserAgent(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			f := newRulesFixture(t, true, nil)
			c := f.client()
			req, _ := http.NewRequest("GET", scheme+"://shop.example/cookie", nil)
			req.Header.Set("Cookie", "session=1")
			req.Header.Set("Authorization", "Bearer secret")
			req.Header.Set("Proxy-Authorization", "Basic eDp5")
			req.Header.Set("User-Agent", "Bare/1")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if v := resp.Header.Values("Set-Cookie"); len(v) != 0 {
				t.Errorf("Set-Cookie reached the browser: %v", v)
			}
			resp, err = c.Get(scheme + "://shop.example/auth")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("auth: %d, challenge %q reached the browser", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
			for _, r := range f.requests() {
				for _, h := range []string{"Cookie", "Authorization", "Proxy-Authorization"} {
					if v := r.Header.Get(h); v != "" {
						t.Errorf("%s %s carried %s: %q", r.Method, r.URL, h, v)
					}
				}
				if ua := r.UserAgent(); ua != "Browser/1"+testSuffix {
					t.Errorf("%s sent user agent %q", r.URL, ua)
				}
			}
			if u := f.p.usage(); u.cookies != 3 || u.credentials != 3 {
				t.Errorf("counted %d cookies and %d credentials, want 3 (one Cookie, two Set-Cookie) and 3 (two headers, one challenge)", u.cookies, u.credentials)
			}
		})
	}
}

func TestProxyCutsRedirectChains(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			f := newRulesFixture(t, true, nil)
			resp, err := f.client().Get(scheme + "://shop.example/chain?n=8")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 403 || resp.Header.Get(refusedHeader) != ReasonRedirects {
				t.Errorf("after the cap: %d %q, want 403 %q", resp.StatusCode, resp.Header.Get(refusedHeader), ReasonRedirects)
			}
			if n := len(f.requests()); n != 1+MaxRedirects {
				t.Errorf("site got %d requests, want %d (the first and %d redirects)", n, 1+MaxRedirects, MaxRedirects)
			}
			// A fresh request for a URL of the chain starts a chain of its own.
			resp, err = f.client().Get(scheme + "://shop.example/chain?n=0")
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("a later request of the chain's last URL: %v %v", resp, err)
			}
		})
	}
}

func TestProxyTunnelChecks(t *testing.T) {
	t.Parallel()
	t.Run("the site's certificate is verified", func(t *testing.T) {
		t.Parallel()
		f := newRulesFixture(t, false, nil)
		resp, err := f.client().Get("https://shop.example/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 502 || !strings.Contains(resp.Header.Get(refusedHeader), "certificate") {
			t.Errorf("untrusted site: %d %q, want 502 naming the certificate", resp.StatusCode, resp.Header.Get(refusedHeader))
		}
		if n := len(f.requests()); n != 0 {
			t.Errorf("site got %d requests over an unverified connection", n)
		}
	})
	t.Run("a request for another host inside a tunnel", func(t *testing.T) {
		t.Parallel()
		f := newRulesFixture(t, true, nil)
		c, err := net.Dial("tcp", f.p.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "CONNECT shop.example:80 HTTP/1.1\r\nHost: shop.example:80\r\n\r\nGET /a HTTP/1.1\r\nHost: other.example\r\n\r\n")
		buf := make([]byte, 4096)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var got strings.Builder
		for !strings.Contains(got.String(), "refused by the Lekta proxy") {
			n, err := c.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if !strings.Contains(got.String(), " 421 ") {
			t.Errorf("answer %q, want 421", got.String())
		}
		if n := len(f.requests()); n != 0 {
			t.Errorf("site got %d requests", n)
		}
	})
	t.Run("no rules, no requests", func(t *testing.T) {
		t.Parallel()
		f := newRulesFixture(t, true, nil)
		f.p.setRules(nil)
		resp, err := f.client().Get("https://shop.example/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 || len(f.requests()) != 0 {
			t.Errorf("a proxy without an audit answered %d, site got %d", resp.StatusCode, len(f.requests()))
		}
	})
}

func TestChainKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ base, loc, want string }{
		{"HTTP://Shop.Example:80/a?b=c#frag", "", "http://shop.example/a?b=c"},
		{"https://shop.example:443", "", "https://shop.example/"},
		{"https://shop.example:8443/x", "", "https://shop.example:8443/x"},
		{"http://shop.example/a?b=c d\"e", "", "http://shop.example/a?b=c d\"e"},
		{"http://shop.example/a?b=c%20d%22e", "", "http://shop.example/a?b=c d\"e"},
		{"http://shop.example/a?é", "", "http://shop.example/a?é"},
		{"http://shop.example/r/2", "/x/%2e%2e/r/%31", "http://shop.example/r/1"},
		{"http://shop.example/r/2", `\r\1?%3c`, "http://shop.example/r/1?<"},
		{"http://shop.example/r/1?%3C", "", "http://shop.example/r/1?<"},
		// A Location and the request Chromium makes for it, escaped
		// differently, meet under one key.
		{"http://shop.example/r/2", "/r/1/a^b|c", "http://shop.example/r/1/a^b|c"},
		{"http://shop.example/r/1/a%5Eb%7cc", "", "http://shop.example/r/1/a^b|c"},
		{"http://shop.example/r/2", "/r/1/a\xffb?q=\xc0\xaf", "http://shop.example/r/1/a\xffb?q=\xc0\xaf"},
		{"http://shop.example/r/1/a%FFb?q=%C0%AF", "", "http://shop.example/r/1/a\xffb?q=\xc0\xaf"},
		{"http://shop.example/r/2", "/r/1/%c3%a9\xfc", "http://shop.example/r/1/é\xfc"},
		{"http://shop.example/r/1/%c3%a9%FC", "", "http://shop.example/r/1/é\xfc"},
	}
	for _, tc := range tests {
		if got, ok := chainKey(tc.base, tc.loc); !ok || got != tc.want {
			t.Errorf("chainKey(%q, %q) = %q, %v; want %q", tc.base, tc.loc, got, ok, tc.want)
		}
	}
}
