package render

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// proxyFixture is a proxy in front of a backend, with a dial that maps
// *.example:80 to the backend and refuses the rest.
type proxyFixture struct {
	p       *proxy
	backend *httptest.Server
	seen    chan *http.Request
}

func newProxyFixture(tb testing.TB, b budget, deny bool, peer peerCheck) *proxyFixture {
	tb.Helper()
	f := &proxyFixture{seen: make(chan *http.Request, 16)}
	f.backend = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.seen <- r
		if n := r.URL.Query().Get("n"); n != "" {
			var size int
			fmt.Sscan(n, &size)
			w.Write([]byte(strings.Repeat("x", size)))
			return
		}
		io.WriteString(w, "hello from "+r.Host)
	}))
	tb.Cleanup(f.backend.Close)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasSuffix(addr, ".example:80") || strings.HasSuffix(addr, ".example:443") {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", f.backend.Listener.Addr().String())
		}
		return nil, fmt.Errorf("dial %s: %w", addr, errTestGuard)
	}
	if peer == nil {
		peer = loopbackOnly
	}
	auth, err := newAuthority()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := newProxy(proxyConfig{dial: dial, budget: b, deny: deny, peer: peer, auth: auth, log: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	p.setRules(&rules{userAgent: "test-agent" + testSuffix})
	tb.Cleanup(p.close)
	f.p = p
	return f
}

// client is an HTTP client that uses the proxy.
func (f *proxyFixture) client() *http.Client {
	pu, _ := url.Parse("http://" + f.p.addr())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, Timeout: 10 * time.Second}
}

// raw sends a raw request to the proxy and returns the status line and headers.
func (f *proxyFixture) raw(tb testing.TB, request string) *http.Response {
	tb.Helper()
	c, err := net.Dial("tcp", f.p.addr())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	io.WriteString(c, request)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	return resp
}

func TestProxyRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		request    string
		status     int
		refused    string // substring of the refusedHeader, "" for a forwarded request
		forwarded  bool
		blockedKey string
	}{
		{"absolute-form GET", "GET http://shop.example/a HTTP/1.1\r\nHost: shop.example\r\nProxy-Connection: keep-alive\r\n\r\n", 200, "", true, ""},
		{"origin-form GET", "GET /a HTTP/1.1\r\nHost: shop.example\r\n\r\n", 400, "absolute-form", false, ""},
		{"other scheme", "GET ftp://shop.example/a HTTP/1.1\r\nHost: shop.example\r\n\r\n", 400, "absolute-form", false, ""},
		{"guard refuses", "GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n", 502, "test guard", false, ""},
		{"analytics host", "GET http://www.google-analytics.com/collect HTTP/1.1\r\nHost: www.google-analytics.com\r\n\r\n", 403, ReasonAnalytics, false, ReasonAnalytics},
		{"analytics tunnel", "CONNECT stats.g.doubleclick.net:443 HTTP/1.1\r\nHost: stats.g.doubleclick.net:443\r\n\r\n", 403, ReasonAnalytics, false, ReasonAnalytics},
		{"malformed CONNECT", "CONNECT nohost HTTP/1.1\r\nHost: nohost\r\n\r\n", 400, "host:port", false, ""},
		{"websocket", "GET http://shop.example/ws HTTP/1.1\r\nHost: shop.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", 403, ReasonWebSocket, false, ReasonWebSocket},
		{"other upgrade", "GET http://shop.example/ HTTP/1.1\r\nHost: shop.example\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", 403, ReasonMethod, false, ReasonMethod},
		{"header bomb", "GET http://shop.example/ HTTP/1.1\r\nHost: shop.example\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n", 431, "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newProxyFixture(t, budget{requests: 10}, false, nil)
			resp := f.raw(t, tc.request)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get(refusedHeader); !strings.Contains(got, tc.refused) || (tc.refused == "") != (got == "") {
				t.Errorf("%s = %q, want it to contain %q", refusedHeader, got, tc.refused)
			}
			select {
			case r := <-f.seen:
				if !tc.forwarded {
					t.Errorf("backend got %s %s", r.Method, r.URL)
				} else if r.Header.Get("Proxy-Connection") != "" || r.Header.Get("X-Forwarded-For") != "" || r.Host != "shop.example" {
					t.Errorf("forwarded request has headers %v, host %s", r.Header, r.Host)
				}
			default:
				if tc.forwarded {
					t.Errorf("backend got nothing")
				}
			}
			if tc.blockedKey != "" && f.p.usage().blocked[tc.blockedKey] != 1 {
				t.Errorf("blocked = %v, want one %s", f.p.usage().blocked, tc.blockedKey)
			}
		})
	}
}

func TestProxyRecordsRefusals(t *testing.T) {
	t.Parallel()
	f := newProxyFixture(t, budget{}, false, nil)
	f.raw(t, "GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
	if err := f.p.refusal("127.0.0.1:9"); !errors.Is(err, errTestGuard) {
		t.Errorf("refusal = %v, want the dial error", err)
	}
	if err := f.p.refusal("shop.example:80"); err != nil {
		t.Errorf("refusal for an unrefused host = %v", err)
	}
}

func TestProxyTunnel(t *testing.T) {
	t.Parallel()
	f := newProxyFixture(t, budget{}, false, nil)
	c, err := net.Dial("tcp", f.p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The request to the backend rides in the same packet as the CONNECT:
	// bytes the server buffered must reach the tunnel too.
	io.WriteString(c, "CONNECT shop.example:80 HTTP/1.1\r\nHost: shop.example:80\r\n\r\nGET /t HTTP/1.1\r\nHost: shop.example\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("through the tunnel: %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 100))
	if string(body) != "hello from shop.example" {
		t.Errorf("body %q", body)
	}
	// Closing the proxy closes its tunnels.
	f.p.close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("tunnel still open after close: %v", err)
	}
}

func TestProxyBudget(t *testing.T) {
	t.Parallel()
	t.Run("requests", func(t *testing.T) {
		t.Parallel()
		f := newProxyFixture(t, budget{requests: 2}, false, nil)
		c := f.client()
		var statuses []int
		for range 3 {
			resp, err := c.Get("http://shop.example/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		if statuses[0] != 200 || statuses[1] != 200 || statuses[2] != 403 {
			t.Errorf("statuses %v, want 200 200 403", statuses)
		}
		if u := f.p.usage(); u.requests != 2 || u.blocked[ReasonBudget] != 1 {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		t.Parallel()
		f := newProxyFixture(t, budget{bytes: 1000}, false, nil)
		// The body is cut at the budget: the client sees a broken
		// response (or none, when the cut comes before the headers went out).
		resp, err := f.client().Get("http://shop.example/?n=100000")
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil || len(body) >= 100000 {
				t.Errorf("read %d bytes, err %v: want the body cut at the budget", len(body), rerr)
			}
		}
		if f.p.usage().blocked[ReasonBudget] != 1 {
			t.Errorf("blocked %v", f.p.usage().blocked)
		}
	})
}

func TestProxyDeny(t *testing.T) {
	t.Parallel()
	f := newProxyFixture(t, budget{}, true, nil)
	for _, req := range []string{
		"GET http://shop.example/ HTTP/1.1\r\nHost: shop.example\r\n\r\n",
		"CONNECT shop.example:443 HTTP/1.1\r\nHost: shop.example:443\r\n\r\n",
	} {
		if resp := f.raw(t, req); resp.StatusCode != 403 || resp.Header.Get(refusedHeader) == "" {
			t.Errorf("deny proxy answered %d to %q", resp.StatusCode, req)
		}
	}
	select {
	case r := <-f.seen:
		t.Errorf("backend got %s", r.URL)
	default:
	}
}

// TestProxyPeerCheck: only the browser's own sockets may use the proxy.
func TestProxyPeerCheck(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc")
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	tests := []struct {
		name string
		root int
		ok   bool
	}{
		{"this process owns the socket", os.Getpid(), true},
		{"another process tree", other.Process.Pid, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newProxyFixture(t, budget{}, false, newPeerCheck(tc.root))
			resp, err := f.client().Get("http://shop.example/")
			if tc.ok && (err != nil || resp.StatusCode != 200) {
				t.Fatalf("own connection refused: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatalf("a connection from outside the browser was served: %d", resp.StatusCode)
			}
		})
	}
}
