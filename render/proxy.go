package render

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/endbody"
)

// refusedHeader marks a response the proxy made up instead of forwarding:
// Chrome shows any proxy answer to a plain-http request as the site's, so the
// lane recognises its own refusals by this header.
const refusedHeader = "X-Lekta-Refused"

// Proxy limits. Chromium is the only client, so they only bound misuse.
const (
	proxyMaxHeaderBytes  = 64 << 10
	proxyHeaderTimeout   = 10 * time.Second
	proxyIdleTimeout     = 30 * time.Second
	proxyDialTimeout     = 10 * time.Second
	proxyResponseTimeout = 30 * time.Second
	maxBlockedURLs       = 100
	maxURLLength         = 2048
)

// budget bounds one audit's traffic through the proxy.
type budget struct {
	requests int   // requests and CONNECT tunnels
	bytes    int64 // bytes relayed, both directions
}

// proxy is the in-process forward proxy of one browser context (one audit),
// or, with deny set, the browser-wide default that refuses everything (only
// Chromium's own background traffic uses it). It accepts CONNECT tunnels and
// absolute-form http requests; it terminates the TLS of every tunnel with a
// certificate of its authority, so it sees each request in the clear and
// applies the audit's rules (rules.go) to all of them; it dials every
// upstream connection through dial (the SSRF guard), refuses origin-form
// requests and connections that do not come from the browser, and counts
// requests and bytes against a budget.
type proxy struct {
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	budget budget
	deny   bool
	log    *slog.Logger
	auth   *authority

	ln        net.Listener
	srv       *http.Server // the browser's connections to the proxy
	inner     *http.Server // requests inside CONNECT tunnels
	tunnelLn  *tunnelListener
	tunnelFor sync.Map // net.Conn of a tunnel -> its CONNECT target
	transport *http.Transport
	upgrades  *http.Transport // WebSocket upgrades, always HTTP/1.1
	forward   *httputil.ReverseProxy
	ctx       context.Context // ends when the proxy closes; tunnels watch it
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the servers

	rules     atomic.Pointer[rules]
	redirects redirectBook

	mu          sync.Mutex
	requests    int
	bytes       int64
	blocked     map[string]int
	blockedURLs []compare.BlockedRequest
	refusals    map[string]error // host:port -> why the dial failed
	cookies     int              // Cookie and Set-Cookie headers dropped
	credentials int              // Authorization headers and auth challenges dropped
	closed      bool
}

// peerCheck decides whether a connection to the proxy comes from the browser.
type peerCheck func(c net.Conn) error

// proxyConfig is what a proxy is made of.
type proxyConfig struct {
	dial   func(context.Context, string, string) (net.Conn, error)
	budget budget
	// deny makes the proxy refuse everything.
	deny bool
	peer peerCheck
	// auth makes the certificates of intercepted tunnels; required unless deny.
	auth *authority
	// roots verify the sites' certificates; nil means the system's.
	roots *x509.CertPool
	log   *slog.Logger
}

// newProxy starts a proxy on a fresh loopback port.
func newProxy(cfg proxyConfig) (*proxy, error) {
	if !cfg.deny && cfg.auth == nil {
		return nil, errors.New("start proxy: no certificate authority")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxy{
		dial: cfg.dial, budget: cfg.budget, deny: cfg.deny, log: cfg.log, auth: cfg.auth,
		ln: ln, ctx: ctx, cancel: cancel,
		blocked:  make(map[string]int),
		refusals: make(map[string]error),
	}
	tlsConfig := &tls.Config{RootCAs: cfg.roots, MinVersion: tls.VersionTLS12}
	p.transport = &http.Transport{
		Proxy:                  nil, // environment proxies must not bypass the guard
		DialContext:            p.dialUpstream,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    proxyDialTimeout,
		ForceAttemptHTTP2:      true,
		DisableCompression:     true, // pass the body through as the site sent it
		MaxResponseHeaderBytes: proxyMaxHeaderBytes,
		ResponseHeaderTimeout:  proxyResponseTimeout,
		IdleConnTimeout:        proxyIdleTimeout,
		MaxIdleConnsPerHost:    6,
		// As many connections to one host as a browser would open.
		MaxConnsPerHost: 6,
	}
	p.upgrades = p.transport.Clone()
	p.upgrades.ForceAttemptHTTP2 = false
	p.upgrades.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	p.upgrades.TLSClientConfig.NextProtos = []string{"http/1.1"}
	p.forward = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      upgradeSplit{plain: p.transport, upgrade: p.upgrades},
		ModifyResponse: p.inspectResponse,
		ErrorHandler:   p.forwardError,
		ErrorLog:       slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       proxyIdleTimeout,
		MaxHeaderBytes:    proxyMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug),
	}
	p.tunnelLn = newTunnelListener(ln.Addr())
	p.inner = &http.Server{
		Handler:           http.HandlerFunc(p.serveTunneled),
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       proxyIdleTimeout,
		MaxHeaderBytes:    proxyMaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if t, ok := p.tunnelFor.Load(c); ok {
				return context.WithValue(ctx, tunnelKey{}, t.(string))
			}
			return ctx
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateClosed || st == http.StateHijacked {
				p.tunnelFor.Delete(c)
			}
		},
		ErrorLog: slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug),
	}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		p.srv.Serve(peerListener{Listener: ln, check: cfg.peer, log: cfg.log})
	}()
	go func() {
		defer p.wg.Done()
		p.inner.Serve(p.tunnelLn)
	}()
	return p, nil
}

// tunnelKey is the context key of a tunnelled request's CONNECT target.
type tunnelKey struct{}

// upgradeSplit sends WebSocket upgrades over HTTP/1.1 and the rest over
// the transport that may speak HTTP/2.
type upgradeSplit struct{ plain, upgrade http.RoundTripper }

func (u upgradeSplit) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Upgrade") != "" {
		return u.upgrade.RoundTrip(r)
	}
	return u.plain.RoundTrip(r)
}

// addr is the proxy's host:port.
func (p *proxy) addr() string { return p.ln.Addr().String() }

// setRules installs the rules of the audit that uses this proxy; until
// then every request is refused.
func (p *proxy) setRules(r *rules) { p.rules.Store(r) }

// close stops the proxy: the listener, every connection, every tunnel.
func (p *proxy) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.tunnelLn.Close()
	p.srv.Close()
	p.inner.Close()
	p.transport.CloseIdleConnections()
	p.upgrades.CloseIdleConnections()
	p.wg.Wait()
}

// ServeHTTP handles one request from the browser.
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.deny {
		p.log.Debug("proxy refused browser background request", "method", r.Method, "target", r.RequestURI)
		p.refuse(w, r, http.StatusForbidden, "not part of an audit")
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		p.refuse(w, r, http.StatusBadRequest, "only absolute-form http requests and CONNECT are proxied")
		return
	}
	if r.Header.Get("Upgrade") != "" {
		// Chromium tunnels WebSockets with CONNECT; an upgraded plain
		// connection would escape the proxy's accounting.
		p.refuse(w, r, http.StatusBadRequest, "protocol upgrades go through CONNECT")
		return
	}
	p.serveRequest(w, r, cloneURL(r.URL))
}

// connect accepts a CONNECT tunnel and hands what the browser sends in it
// to the inner server: through a TLS server of the proxy's own when it
// starts a TLS handshake, as plain HTTP otherwise (ws:// WebSockets).
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	target := r.RequestURI
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || port == "" {
		p.refuse(w, r, http.StatusBadRequest, "CONNECT needs host:port")
		return
	}
	if trackerHost(host) {
		p.block(ReasonAnalytics, "https://"+target+"/", "")
		p.refuse(w, r, http.StatusForbidden, ReasonAnalytics)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		p.refuse(w, r, http.StatusInternalServerError, "cannot tunnel")
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		client.Close()
		return
	}
	bc := &bufferedConn{Conn: client, r: buf.Reader}
	client.SetReadDeadline(time.Now().Add(proxyHeaderTimeout))
	first, err := bc.r.Peek(1)
	client.SetReadDeadline(time.Time{})
	if err != nil {
		client.Close()
		return
	}
	var c net.Conn = bc
	if first[0] == 0x16 { // a TLS handshake record
		c = tls.Server(bc, &tls.Config{
			NextProtos: []string{"h2", "http/1.1"},
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				return p.auth.certificate(strings.Trim(host, "[]"))
			},
		})
	}
	p.tunnelFor.Store(c, target)
	if !p.tunnelLn.push(c) {
		p.tunnelFor.Delete(c)
		c.Close()
	}
}

// serveTunneled handles a request that arrived inside a CONNECT tunnel.
func (p *proxy) serveTunneled(w http.ResponseWriter, r *http.Request) {
	target, _ := r.Context().Value(tunnelKey{}).(string)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := &url.URL{Scheme: scheme, Host: canonicalHost(scheme, target), Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	if target == "" || !sameAuthority(u, r.Host) {
		// Each tunnel belongs to one host; Chromium never coalesces
		// connections across the proxy's single-name certificates.
		p.refuse(w, r, http.StatusMisdirectedRequest, "the request does not match its tunnel")
		return
	}
	p.serveRequest(w, r, u)
}

// canonicalHost is host:port without the scheme's default port, as URLs
// write it.
func canonicalHost(scheme, hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		if strings.Contains(host, ":") {
			return "[" + host + "]"
		}
		return host
	}
	return hostport
}

// sameAuthority reports whether a Host header names u's host and port.
func sameAuthority(u *url.URL, host string) bool {
	h, err := url.Parse(u.Scheme + "://" + host)
	if err != nil {
		return false
	}
	return strings.EqualFold(h.Hostname(), u.Hostname()) && hostPort(h) == hostPort(u)
}

// dialUpstream dials through the guard and remembers why a dial failed, so
// a failed navigation can say so (and wrap the guard's error).
func (p *proxy) dialUpstream(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := p.dial(ctx, network, addr)
	if err != nil {
		p.mu.Lock()
		if len(p.refusals) < maxBlockedURLs {
			p.refusals[addr] = err
		}
		p.mu.Unlock()
		p.log.Debug("proxy dial failed", "addr", addr, "err", err)
		return nil, err
	}
	return c, nil
}

// refusal returns the dial error recorded for host:port, if any.
func (p *proxy) refusal(hostport string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusals[hostport]
}

// exchange is what the proxy knows of one forwarded request, carried in
// its context from serveRequest to the response.
type exchange struct {
	url *url.URL
	// hops is how many redirects led to this request.
	hops int
	// sent reports the request once it left (nil: nobody asked).
	sent *sentTrace
}

type exchangeKey struct{}

// serveRequest applies the audit's rules to one request for u and
// forwards it, or refuses it.
func (p *proxy) serveRequest(w http.ResponseWriter, r *http.Request, u *url.URL) {
	rl := p.rules.Load()
	if rl == nil {
		p.refuse(w, r, http.StatusForbidden, "not part of an audit")
		return
	}
	hops := p.redirects.take(u)
	if reason, rule := p.check(r, u, hops, rl); reason != "" {
		p.block(reason, u.String(), rule)
		status := http.StatusForbidden
		if reason == ReasonMethod {
			status = http.StatusMethodNotAllowed
		}
		p.refuse(w, r, status, reason)
		return
	}
	p.scrub(r.Header, rl)
	x := &exchange{url: u, hops: hops, sent: newSentTrace(rl.sent, r.Method, u)}
	ctx := x.sent.with(context.WithValue(r.Context(), exchangeKey{}, x))
	p.forward.ServeHTTP(w, r.WithContext(ctx))
}

// check returns why the request must not leave, or "": the rules in the
// order that names the most specific reason.
func (p *proxy) check(r *http.Request, u *url.URL, hops int, rl *rules) (reason, rule string) {
	switch {
	case trackerURL(u):
		return ReasonAnalytics, ""
	case !allowedMethod(r):
		return ReasonMethod, r.Method
	case prefetch(r.Header):
		return ReasonPrefetch, ""
	case destReasons[r.Header.Get("Sec-Fetch-Dest")] != "":
		return destReasons[r.Header.Get("Sec-Fetch-Dest")], ""
	case hops > MaxRedirects:
		return ReasonRedirects, ""
	}
	if rl.allow != nil {
		if ok, rule := rl.allow(u); !ok {
			return ReasonRobots, rule
		}
	}
	if !p.admit() {
		return ReasonBudget, ""
	}
	return "", ""
}

// scrub removes credentials and cookies from a request the lane forwards,
// counting what the page tried, and sets the lane's user agent.
func (p *proxy) scrub(h http.Header, rl *rules) {
	cookies, creds := 0, 0
	if len(h.Values("Cookie")) > 0 {
		cookies++
	}
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		if len(h.Values(name)) > 0 {
			creds++
		}
	}
	h.Del("Cookie")
	h.Del("Authorization")
	h.Del("Proxy-Authorization")
	h.Set("User-Agent", rl.userAgent)
	p.count(cookies, creds)
}

// rewrite makes the outbound request: the URL the rules were checked for.
func (p *proxy) rewrite(pr *httputil.ProxyRequest) {
	x := pr.In.Context().Value(exchangeKey{}).(*exchange)
	pr.Out.URL = cloneURL(x.url)
	pr.Out.Host = x.url.Host
}

// mediaRefusal is inspectResponse's error for a response of a blocked type.
type mediaRefusal struct{ reason string }

func (m mediaRefusal) Error() string { return "refused response type: " + m.reason }

// inspectResponse applies the rules to a response before the browser sees
// it: images, media and fonts are refused by their Content-Type, whatever
// asked for them; cookies and authentication challenges are dropped (the
// lane answers none); a redirect's Location is noted for the chain cap;
// and the body counts against the byte budget.
func (p *proxy) inspectResponse(resp *http.Response) error {
	x := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if reason := mediaReason(resp.Header.Get("Content-Type")); reason != "" {
		// It reached the site, which answered; the browser gets nothing.
		x.sent.finish(resp.StatusCode, 0, nil)
		return mediaRefusal{reason: reason}
	}
	cookies, creds := len(resp.Header.Values("Set-Cookie")), 0
	resp.Header.Del("Set-Cookie")
	for _, name := range []string{"WWW-Authenticate", "Proxy-Authenticate"} {
		if len(resp.Header.Values(name)) > 0 {
			creds++
			resp.Header.Del(name)
		}
	}
	p.count(cookies, creds)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			p.redirects.note(x.url, loc, x.hops)
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		x.sent.finish(resp.StatusCode, 0, nil)
		if rwc, ok := resp.Body.(io.ReadWriteCloser); ok {
			resp.Body = &countingStream{ReadWriteCloser: rwc, p: p}
		}
		return nil
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, p: p}
	if x.sent != nil {
		sent, status := x.sent, resp.StatusCode
		resp.Body = &endbody.Body{ReadCloser: resp.Body, Done: func(n int64, err error) { sent.finish(status, n, err) }}
	}
	return nil
}

// count adds to the cookie and credential counters.
func (p *proxy) count(cookies, credentials int) {
	if cookies == 0 && credentials == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cookies += cookies
	p.credentials += credentials
}

// forwardError answers a request whose upstream failed or whose response
// the rules refused.
func (p *proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
		x.sent.finish(0, 0, err) // a no-op when a response was reported
	}
	var mr mediaRefusal
	switch {
	case errors.As(err, &mr):
		p.block(mr.reason, r.URL.String(), "")
		p.refuse(w, r, http.StatusForbidden, mr.reason)
	case errors.Is(err, errBudget):
		p.block(ReasonBudget, r.URL.String(), "")
		p.refuse(w, r, http.StatusForbidden, ReasonBudget)
	default:
		p.refuse(w, r, http.StatusBadGateway, "upstream: "+err.Error())
	}
}

// refuse writes a made-up response marked with refusedHeader.
func (p *proxy) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	w.Header().Set(refusedHeader, why)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.ProtoMajor < 2 {
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(status)
	io.WriteString(w, "refused by the Lekta proxy: "+why+"\n")
}

// admit counts one request and reports whether it fits the budget.
func (p *proxy) admit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.budget.requests > 0 && p.requests >= p.budget.requests {
		return false
	}
	p.requests++
	return true
}

// spend counts n relayed bytes and reports whether they fit the budget.
func (p *proxy) spend(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes += n
	return p.budget.bytes <= 0 || p.bytes <= p.budget.bytes
}

// block records a refused request.
func (p *proxy) block(reason, u, rule string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked[reason]++
	if len(p.blockedURLs) < maxBlockedURLs {
		p.blockedURLs = append(p.blockedURLs, compare.BlockedRequest{URL: truncateURL(u), Reason: reason, Rule: rule})
	}
}

// usage is what the proxy counted.
type usage struct {
	requests    int
	bytes       int64
	blocked     map[string]int
	blockedURLs []compare.BlockedRequest
	cookies     int
	credentials int
}

func (p *proxy) usage() usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := usage{requests: p.requests, bytes: p.bytes, blocked: make(map[string]int, len(p.blocked)),
		cookies: p.cookies, credentials: p.credentials}
	for k, v := range p.blocked {
		u.blocked[k] = v
	}
	u.blockedURLs = append(u.blockedURLs, p.blockedURLs...)
	return u
}

var errBudget = errors.New("audit byte budget exhausted")

// countingBody is a response body that stops when the budget runs out.
type countingBody struct {
	io.ReadCloser
	p    *proxy
	over bool
}

func (b *countingBody) Read(buf []byte) (int, error) {
	if b.over {
		return 0, errBudget
	}
	n, err := b.ReadCloser.Read(buf)
	if n > 0 && !b.p.spend(int64(n)) {
		b.over = true
		b.p.block(ReasonBudget, "response body", "")
		return 0, errBudget
	}
	return n, err
}

// countingStream is an upgraded connection (a WebSocket) whose traffic in
// both directions counts against the budget.
type countingStream struct {
	io.ReadWriteCloser
	p *proxy
}

func (s *countingStream) Read(buf []byte) (int, error) {
	n, err := s.ReadWriteCloser.Read(buf)
	if n > 0 && !s.p.spend(int64(n)) {
		s.p.block(ReasonBudget, "upgraded connection", "")
		s.Close()
		return 0, errBudget
	}
	return n, err
}

func (s *countingStream) Write(buf []byte) (int, error) {
	if !s.p.spend(int64(len(buf))) {
		s.p.block(ReasonBudget, "upgraded connection", "")
		s.Close()
		return 0, errBudget
	}
	return s.ReadWriteCloser.Write(buf)
}

// bufferedConn reads first what the HTTP server already buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// peerListener drops connections that the check refuses.
type peerListener struct {
	net.Listener
	check peerCheck
	log   *slog.Logger
}

// Accept returns the next connection that passes the check.
func (l peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.check == nil {
			return c, nil
		}
		if err := l.check(c); err != nil {
			l.log.Warn("proxy refused a connection that is not from the browser", "remote", c.RemoteAddr().String(), "err", err)
			c.Close()
			continue
		}
		return c, nil
	}
}

// loopbackOnly accepts connections from loopback addresses only.
func loopbackOnly(c net.Conn) error {
	a, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok || !a.IP.IsLoopback() {
		return fmt.Errorf("remote %s is not loopback", c.RemoteAddr())
	}
	return nil
}

func cloneURL(u *url.URL) *url.URL {
	c := *u
	return &c
}

func truncateURL(s string) string {
	if len(s) > maxURLLength {
		return s[:maxURLLength]
	}
	return s
}

// hostPort returns u's host:port with the scheme's default port filled in.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
