package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"

	"lekta.dev/lekta/internal/canary"
)

// resolverFunc adapts a function to Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// staticDNS answers every name with addrs.
func staticDNS(addrs ...string) Resolver {
	ips := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		ips[i] = netip.MustParseAddr(a)
	}
	return resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
		return ips, nil
	})
}

// mustReach dials addr without the guard and waits until the canary has
// seen the connection, proving a guard failure would have been counted.
func mustReach(tb testing.TB, addr string) {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("unguarded dial %s: %v", addr, err)
	}
	defer conn.Close()
	// Sending nothing more ends the canary's read of the first line at once.
	_ = conn.(*net.TCPConn).CloseWrite()
	_, _ = io.Copy(io.Discard, conn) // returns once the canary closed it
}

// mustBlock asserts that dialling addr through g is refused at dial time
// and that the error names blocked.
func mustBlock(tb testing.TB, g *Guard, addr, blocked string) {
	tb.Helper()
	conn, err := g.DialContext(context.Background(), "tcp", addr)
	if err == nil {
		conn.Close()
		tb.Fatalf("DialContext(%s) connected, want it refused", addr)
	}
	if !errors.Is(err, ErrBlockedAddress) {
		tb.Fatalf("DialContext(%s) = %v, want ErrBlockedAddress", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	if _, lerr := netip.ParseAddr(host); lerr == nil {
		// An address the submitter wrote is named back to them.
		if !strings.Contains(err.Error(), blocked) {
			tb.Errorf("DialContext(%s) error %q does not name %s", addr, err, blocked)
		}
		return
	}
	// The address a name resolved to is not: it may be internal knowledge.
	if strings.Contains(err.Error(), blocked) || !strings.Contains(err.Error(), addr) {
		tb.Errorf("DialContext(%s) error %q names the resolved address %s, or not the name", addr, err, blocked)
	}
}

func TestDialRefusesInternalDNSAnswers(t *testing.T) {
	t.Parallel()
	canary := canary.Listen(t, 0, "127.0.0.1", "127.0.0.2", "::1")
	tests := []struct {
		name    string
		answer  []string
		blocked string // the address the error must name
		reach   string // an answer that reaches the canary when dialled unguarded
	}{
		{"loopback", []string{"127.0.0.1"}, "127.0.0.1", "127.0.0.1"},
		{"other loopback", []string{"127.0.0.2"}, "127.0.0.2", "127.0.0.2"},
		{"IPv6 loopback", []string{"::1"}, "::1", "::1"},
		{"unspecified", []string{"0.0.0.0"}, "0.0.0.0", "0.0.0.0"},
		{"IPv6 unspecified", []string{"::"}, "::", "::"},
		{"IPv4-mapped loopback", []string{"::ffff:127.0.0.1"}, "127.0.0.1", "::ffff:127.0.0.1"},
		{"IPv4-mapped unspecified", []string{"::ffff:0.0.0.0"}, "0.0.0.0", "::ffff:0.0.0.0"},
		{"private 10", []string{"10.0.0.1"}, "10.0.0.1", ""},
		{"private 192.168", []string{"192.168.0.10"}, "192.168.0.10", ""},
		{"this machine's documentation-range address", []string{"192.0.2.2"}, "192.0.2.2", ""},
		{"metadata", []string{"169.254.169.254"}, "169.254.169.254", ""},
		{"IPv6 metadata", []string{"fd00:ec2::254"}, "fd00:ec2::254", ""},
		{"Alibaba metadata", []string{"100.100.100.200"}, "100.100.100.200", ""},
		{"NAT64 loopback", []string{"64:ff9b::7f00:1"}, "64:ff9b::7f00:1", ""},
		{"6to4 loopback", []string{"2002:7f00:1::1"}, "2002:7f00:1::1", ""},
		{"multi-record, loopback second", []string{"93.184.216.34", "127.0.0.1"}, "127.0.0.1", "127.0.0.1"},
		{"multi-record, loopback first", []string{"127.0.0.1", "93.184.216.34"}, "127.0.0.1", "127.0.0.1"},
		{"multi-record IPv6, loopback last", []string{"2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34", "::1"}, "::1", "::1"},
	}
	// lands is the listener an unguarded dial to an answer ends up at.
	lands := map[string]string{"0.0.0.0": "127.0.0.1", "::": "::1", "::ffff:127.0.0.1": "127.0.0.1", "::ffff:0.0.0.0": "127.0.0.1"}
	var reach []string
	t.Run("guarded", func(t *testing.T) {
		for _, tc := range tests {
			listener := tc.reach
			if l, ok := lands[tc.reach]; ok {
				listener = l
			}
			if tc.reach != "" && canary.Bound(listener) {
				reach = append(reach, tc.reach)
			}
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				g := mustGuard(t, GuardConfig{AllowPorts: []uint16{uint16(canary.Port())}, Resolver: staticDNS(tc.answer...)})
				mustBlock(t, g, canary.HostPort("evil.example"), tc.blocked)
			})
		}
	})
	if n := canary.Count(); n != 0 {
		t.Fatalf("canary accepted %d connections through the guard, want 0", n)
	}
	// The same answers dialled without the guard do reach the canary.
	for _, a := range reach {
		mustReach(t, canary.HostPort(a))
	}
	if n, want := canary.Count(), len(reach); n != want {
		t.Fatalf("unguarded dials reached the canary %d times, want %d", n, want)
	}
}

func TestDialThroughTransportRefusesLoopback(t *testing.T) {
	t.Parallel()
	canary := canary.Listen(t, 0, "127.0.0.1")
	g := mustGuard(t, GuardConfig{AllowPorts: []uint16{uint16(canary.Port())}, Resolver: staticDNS("127.0.0.1")})
	client := &http.Client{Transport: g.Transport()}
	for _, target := range []string{
		"http://" + canary.HostPort("rebind.example") + "/",
		"http://" + canary.HostPort("127.0.0.1") + "/",
		"http://" + canary.HostPort("::ffff:127.0.0.1") + "/",
	} {
		resp, err := client.Get(target)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s succeeded, want it refused", target)
		}
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("GET %s: %v, want ErrBlockedAddress", target, err)
		}
	}
	if n := canary.Count(); n != 0 {
		t.Fatalf("canary accepted %d connections, want 0", n)
	}
}

// With the default resolver, "localhost" is asked for as "localhost.",
// which neither /etc/hosts nor search domains expand; whatever the answer,
// nothing reaches the loopback canary.
func TestDialDefaultResolverNeverReachesLocalhost(t *testing.T) {
	t.Parallel()
	canary := canary.Listen(t, 0, "127.0.0.1")
	g, err := NewGuard(GuardConfig{AllowPorts: []uint16{uint16(canary.Port())}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{"localhost", "LocalHost.", "app.localhost"} {
		conn, err := g.DialContext(ctx, "tcp", canary.HostPort(name))
		if err == nil {
			conn.Close()
			t.Fatalf("dial %s through the default resolver connected", name)
		}
	}
	if n := canary.Count(); n != 0 {
		t.Fatalf("canary accepted %d connections, want 0", n)
	}
}

func TestDialRebindingIsCheckedOnEveryConnection(t *testing.T) {
	t.Parallel()
	// 127.0.0.1:P stands in for the public first answer (allowed exactly);
	// the rebound answer 127.0.0.2 is the internal target.
	site := canary.Listen(t, 0, "127.0.0.1")
	canary := canary.Listen(t, site.Port(), "127.0.0.2")
	if !canary.Bound("127.0.0.2") {
		t.Fatalf("cannot listen on 127.0.0.2:%d", site.Port())
	}
	var calls atomic.Int64
	rebinding := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host != "rebind.example" {
			return nil, fmt.Errorf("unexpected lookup %q", host)
		}
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	})
	g := mustGuard(t, GuardConfig{
		AllowAddrs: []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(site.Port()))},
		Resolver:   rebinding,
	})
	addr := site.HostPort("rebind.example")
	conn, err := g.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	_, _ = io.Copy(io.Discard, conn)
	conn.Close()
	mustBlock(t, g, addr, "127.0.0.2")
	mustBlock(t, g, addr, "127.0.0.2")
	if n := calls.Load(); n != 3 {
		t.Errorf("resolver asked %d times for 3 dials, want 3 (no caching)", n)
	}
	if n := site.Count(); n != 1 {
		t.Errorf("site accepted %d connections, want 1", n)
	}
	if n := canary.Count(); n != 0 {
		t.Fatalf("canary accepted %d connections after rebinding, want 0", n)
	}
	mustReach(t, canary.HostPort("127.0.0.2"))
	if n := canary.Count(); n != 1 {
		t.Fatalf("unguarded dial reached the canary %d times, want 1", n)
	}
}

// siteServer is an httptest server that counts requests and records the
// Accept-Encoding it was sent.
type siteServer struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	enc  []string
}

func startSite(tb testing.TB, body string) *siteServer {
	tb.Helper()
	s := &siteServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		s.enc = append(s.enc, r.Header.Get("Accept-Encoding"))
		s.mu.Unlock()
		if n, err := strconv.Atoi(r.URL.Query().Get("header")); err == nil {
			w.Header().Set("X-Big", strings.Repeat("h", n))
		}
		io.WriteString(w, body)
	}))
	tb.Cleanup(s.Close)
	return s
}

func (s *siteServer) addrPort(tb testing.TB) netip.AddrPort {
	tb.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return netip.MustParseAddrPort(u.Host)
}

func mustGet(tb testing.TB, client *http.Client, target string) string {
	tb.Helper()
	resp, err := client.Get(target)
	if err != nil {
		tb.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: read body: %v", target, err)
	}
	return string(b)
}

func TestAllowAddrsAndResolveRules(t *testing.T) {
	t.Parallel()
	site := startSite(t, "site")
	siteAddr := site.addrPort(t)
	other := canary.Listen(t, 0, "127.0.0.1")
	otherAddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(other.Port()))

	g := mustGuard(t, GuardConfig{
		Resolve:    []ResolveRule{{Host: "shop.example", Port: 80, Addr: siteAddr}},
		AllowAddrs: []netip.AddrPort{siteAddr},
	})
	client := &http.Client{Transport: g.Transport()}
	t.Run("rule to allowed pair connects", func(t *testing.T) {
		u, err := g.ParseTarget("http://Shop.Example/")
		if err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, client, u.String()); got != "site" {
			t.Fatalf("body %q, want %q", got, "site")
		}
	})
	t.Run("allowed literal pair connects", func(t *testing.T) {
		u, err := g.ParseTarget(site.URL + "/page")
		if err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, client, u.String()); got != "site" {
			t.Fatalf("body %q, want %q", got, "site")
		}
	})
	t.Run("same IP on another port refused", func(t *testing.T) {
		mustBlock(t, g, otherAddr.String(), otherAddr.Addr().String())
		if _, err := g.ParseTarget("http://" + otherAddr.String() + "/"); !errors.Is(err, ErrTargetRefused) {
			t.Fatalf("ParseTarget of the other port: %v, want ErrTargetRefused", err)
		}
	})
	t.Run("rule to a pair not allowed refused", func(t *testing.T) {
		g2 := mustGuard(t, GuardConfig{
			Resolve:    []ResolveRule{{Host: "shop.example", Port: 80, Addr: otherAddr}},
			AllowAddrs: []netip.AddrPort{siteAddr},
		})
		_, err := (&http.Client{Transport: g2.Transport()}).Get("http://shop.example/")
		if !errors.Is(err, ErrBlockedAddress) {
			t.Fatalf("GET through a rule to %s: %v, want ErrBlockedAddress", otherAddr, err)
		}
	})
	t.Run("allowed pair among refused answers", func(t *testing.T) {
		// A name resolving to ::1 and 127.0.0.1 with only 127.0.0.1:port
		// allowed: one refused address refuses the whole name, and nothing
		// is dialled.
		g3 := mustGuard(t, GuardConfig{AllowAddrs: []netip.AddrPort{siteAddr}, Resolver: staticDNS("::1", "127.0.0.1")})
		target := "http://" + net.JoinHostPort("dev.example", strconv.Itoa(int(siteAddr.Port()))) + "/"
		resp, err := (&http.Client{Transport: g3.Transport()}).Get(target)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s: %s, want the name refused (::1 is not allowed)", target, resp.Status)
		}
		if !errors.Is(err, ErrBlockedAddress) {
			t.Fatalf("GET %s: %v, want ErrBlockedAddress", target, err)
		}
	})
	if n := other.Count(); n != 0 {
		t.Fatalf("the other port accepted %d connections, want 0", n)
	}
	if n := site.hits.Load(); n != 2 {
		t.Errorf("site served %d requests, want 2", n)
	}
	mustReach(t, otherAddr.String())
	if n := other.Count(); n != 1 {
		t.Fatalf("unguarded dial reached the other port %d times, want 1", n)
	}
}

func TestTransportIgnoresEnvironmentProxy(t *testing.T) {
	// t.Setenv: not parallel.
	site := startSite(t, "site")
	proxy := startSite(t, "proxy")
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	siteAddr := site.addrPort(t)
	g := mustGuard(t, GuardConfig{
		Resolve:    []ResolveRule{{Host: "shop.example", Port: 80, Addr: siteAddr}},
		AllowAddrs: []netip.AddrPort{siteAddr},
	})
	tr := g.Transport()
	if tr.Proxy != nil {
		t.Fatal("Transport().Proxy is set")
	}
	if got := mustGet(t, &http.Client{Transport: tr}, "http://shop.example/"); got != "site" {
		t.Fatalf("body %q, want the site's", got)
	}
	if n := proxy.hits.Load(); n != 0 {
		t.Fatalf("proxy saw %d requests, want 0", n)
	}
	// A transport that honours the environment does go to the proxy.
	envProxy := httpproxy.FromEnvironment().ProxyFunc()
	honouring := &http.Transport{Proxy: func(r *http.Request) (*url.URL, error) { return envProxy(r.URL) }}
	defer honouring.CloseIdleConnections()
	if got := mustGet(t, &http.Client{Transport: honouring}, "http://shop.example/"); got != "proxy" {
		t.Fatalf("environment-honouring transport got %q, want the proxy's answer", got)
	}
}

func TestTransportLimits(t *testing.T) {
	t.Parallel()
	site := startSite(t, "site")
	siteAddr := site.addrPort(t)
	g := mustGuard(t, GuardConfig{AllowAddrs: []netip.AddrPort{siteAddr}})
	tr := g.Transport()
	if !tr.DisableCompression || tr.MaxResponseHeaderBytes != 64<<10 || !tr.ForceAttemptHTTP2 || tr.TLSHandshakeTimeout == 0 || tr.ResponseHeaderTimeout == 0 {
		t.Fatalf("Transport() = %+v, want compression off, 64 KiB header cap, HTTP/2 attempted, TLS and header timeouts", tr)
	}
	client := &http.Client{Transport: tr}
	if got := mustGet(t, client, site.URL+"/?header=32768"); got != "site" {
		t.Fatalf("32 KiB header: body %q", got)
	}
	resp, err := client.Get(site.URL + "/?header=100000")
	if err == nil {
		resp.Body.Close()
		t.Fatal("100 KB response header accepted, want the 64 KiB cap to refuse it")
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	for _, e := range site.enc {
		if e != "" {
			t.Errorf("request sent Accept-Encoding %q, want none (the plain lane sets its own)", e)
		}
	}
}

func TestControlChecksTheSocketAddress(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{
		AllowAddrs:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080")},
		AllowPorts:   []uint16{8443},
		DenyPrefixes: []netip.Prefix{netip.MustParsePrefix("93.184.216.0/24")},
	})
	tests := []struct {
		name, network, address string
		ok                     bool
	}{
		{"public", "tcp4", "8.8.8.8:443", true},
		{"public v6", "tcp6", "[2606:4700:4700::1111]:80", true},
		{"allowed port", "tcp4", "8.8.8.8:8443", true},
		{"allowed pair", "tcp4", "127.0.0.1:8080", true},
		{"loopback", "tcp4", "127.0.0.1:80", false},
		{"mapped loopback", "tcp6", "[::ffff:127.0.0.1]:80", false},
		{"allowed address other port", "tcp4", "127.0.0.1:8081", false},
		{"port", "tcp4", "8.8.8.8:25", false},
		{"udp", "udp4", "8.8.8.8:443", false},
		{"operator deny", "tcp4", "93.184.216.34:80", false},
		{"AMT (ssrf list)", "tcp4", "192.52.193.1:80", false},
		{"garbage", "tcp4", "not-an-address", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := g.control(tc.network, tc.address, nil)
			if tc.ok && err != nil {
				t.Fatalf("control(%s, %s) = %v, want nil", tc.network, tc.address, err)
			}
			if !tc.ok && !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("control(%s, %s) = %v, want ErrBlockedAddress", tc.network, tc.address, err)
			}
		})
	}
}

func TestDialRefusesOtherNetworks(t *testing.T) {
	t.Parallel()
	g := mustGuard(t, GuardConfig{Resolver: staticDNS("8.8.8.8")})
	for _, network := range []string{"udp", "udp4", "unix", "ip4:icmp"} {
		conn, err := g.DialContext(context.Background(), network, "example.com:443")
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("DialContext(%q) = %v, want ErrBlockedAddress", network, err)
		}
	}
}

func TestDialAsksCustomResolverForTheNameAsWritten(t *testing.T) {
	t.Parallel()
	var got []string
	var mu sync.Mutex
	r := resolverFunc(func(_ context.Context, network, host string) ([]netip.Addr, error) {
		mu.Lock()
		got = append(got, network+" "+host)
		mu.Unlock()
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	g := mustGuard(t, GuardConfig{Resolver: r})
	for _, c := range []struct{ network, addr string }{{"tcp", "Shop.Example.:80"}, {"tcp4", "shop.example:443"}, {"tcp6", "shop.example:80"}} {
		conn, err := g.DialContext(context.Background(), c.network, c.addr)
		if err == nil {
			conn.Close()
			t.Fatalf("dial %s connected", c.addr)
		}
	}
	want := []string{"ip shop.example", "ip4 shop.example", "ip6 shop.example"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("resolver asked %q, want %q", got, want)
	}
}
