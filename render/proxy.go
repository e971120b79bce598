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
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"lekta.dev/lekta/compare"
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
// absolute-form http requests, dials every upstream connection through dial
// (the SSRF guard), refuses origin-form requests and connections that do not
// come from the browser, and counts requests and bytes against a budget.
type proxy struct {
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	budget budget
	deny   bool
	log    *slog.Logger

	ln        net.Listener
	srv       *http.Server
	transport *http.Transport
	forward   *httputil.ReverseProxy
	ctx       context.Context // ends when the proxy closes; tunnels watch it
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the server and the tunnels

	mu          sync.Mutex
	requests    int
	bytes       int64
	blocked     map[string]int
	blockedURLs []compare.BlockedRequest
	refusals    map[string]error // host:port -> why the dial failed
	tunnels     map[net.Conn]struct{}
	closed      bool
}

// peerCheck decides whether a connection to the proxy comes from the browser.
type peerCheck func(c net.Conn) error

// newProxy starts a proxy on a fresh loopback port.
func newProxy(dial func(context.Context, string, string) (net.Conn, error), b budget, deny bool, peer peerCheck, log *slog.Logger) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxy{
		dial: dial, budget: b, deny: deny, log: log,
		ln: ln, ctx: ctx, cancel: cancel,
		blocked:  make(map[string]int),
		refusals: make(map[string]error),
		tunnels:  make(map[net.Conn]struct{}),
	}
	p.transport = &http.Transport{
		Proxy:                  nil, // environment proxies must not bypass the guard
		DialContext:            p.dialUpstream,
		DisableCompression:     true, // pass the body through as the site sent it
		MaxResponseHeaderBytes: proxyMaxHeaderBytes,
		ResponseHeaderTimeout:  proxyResponseTimeout,
		IdleConnTimeout:        proxyIdleTimeout,
		MaxIdleConnsPerHost:    6,
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = cloneURL(pr.In.URL)
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport:      p.transport,
		ModifyResponse: p.countResponse,
		ErrorHandler:   p.forwardError,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       proxyIdleTimeout,
		MaxHeaderBytes:    proxyMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.srv.Serve(peerListener{Listener: ln, check: peer, log: log})
	}()
	return p, nil
}

// addr is the proxy's host:port.
func (p *proxy) addr() string { return p.ln.Addr().String() }

// close stops the proxy: the listener, every connection, every tunnel.
func (p *proxy) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.srv.Close()
	p.transport.CloseIdleConnections()
	p.wg.Wait()
}

// ServeHTTP handles one request from the browser.
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.deny {
		p.log.Debug("proxy refused browser background request", "method", r.Method, "target", r.RequestURI)
		p.refuse(w, http.StatusForbidden, "not part of an audit")
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		p.refuse(w, http.StatusBadRequest, "only absolute-form http requests and CONNECT are proxied")
		return
	}
	if r.Header.Get("Upgrade") != "" {
		// Chromium tunnels WebSockets with CONNECT; an upgraded plain
		// connection would escape the proxy's accounting.
		p.refuse(w, http.StatusBadRequest, "protocol upgrades go through CONNECT")
		return
	}
	if trackerURL(r.URL) {
		p.block(ReasonAnalytics, r.URL.String())
		p.refuse(w, http.StatusForbidden, ReasonAnalytics)
		return
	}
	if !p.admit() {
		p.block(ReasonBudget, r.URL.String())
		p.refuse(w, http.StatusForbidden, ReasonBudget)
		return
	}
	p.forward.ServeHTTP(w, r)
}

// connect opens a tunnel to the CONNECT target through the guard.
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	target := r.RequestURI
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || port == "" {
		p.refuse(w, http.StatusBadRequest, "CONNECT needs host:port")
		return
	}
	if trackerHost(host) {
		p.block(ReasonAnalytics, "https://"+target+"/")
		p.refuse(w, http.StatusForbidden, ReasonAnalytics)
		return
	}
	if !p.admit() {
		p.block(ReasonBudget, "https://"+target+"/")
		p.refuse(w, http.StatusForbidden, ReasonBudget)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		p.refuse(w, http.StatusInternalServerError, "cannot tunnel")
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, proxyDialTimeout)
	upstream, err := p.dialUpstream(ctx, "tcp", target)
	cancel()
	if err != nil {
		p.refuse(w, http.StatusBadGateway, "dial: "+err.Error())
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		client.Close()
		upstream.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(client, upstream)
		return
	}
	p.wg.Add(2)
	go p.pipe(upstream, bufferedConn{Conn: client, r: buf.Reader}, client, upstream)
	go p.pipe(client, upstream, client, upstream)
}

// pipe copies src to dst, counting bytes against the budget, and closes both
// ends of the tunnel when either side stops or the budget runs out.
func (p *proxy) pipe(dst io.Writer, src io.Reader, client, upstream net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client, upstream)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.spend(int64(n)) {
				p.block(ReasonBudget, "tunnel to "+upstream.RemoteAddr().String())
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.tunnels, c)
	}
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

// forwardError answers a plain-http request whose upstream failed.
func (p *proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errBudget) {
		p.block(ReasonBudget, r.URL.String())
		p.refuse(w, http.StatusForbidden, ReasonBudget)
		return
	}
	p.refuse(w, http.StatusBadGateway, "upstream: "+err.Error())
}

// refuse writes a made-up response marked with refusedHeader.
func (p *proxy) refuse(w http.ResponseWriter, status int, why string) {
	w.Header().Set(refusedHeader, why)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
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
func (p *proxy) block(reason, u string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked[reason]++
	if len(p.blockedURLs) < maxBlockedURLs {
		p.blockedURLs = append(p.blockedURLs, compare.BlockedRequest{URL: truncateURL(u), Reason: reason})
	}
}

// usage is what the proxy counted.
type usage struct {
	requests    int
	bytes       int64
	blocked     map[string]int
	blockedURLs []compare.BlockedRequest
}

func (p *proxy) usage() usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := usage{requests: p.requests, bytes: p.bytes, blocked: make(map[string]int, len(p.blocked))}
	for k, v := range p.blocked {
		u.blocked[k] = v
	}
	u.blockedURLs = append(u.blockedURLs, p.blockedURLs...)
	return u
}

var errBudget = errors.New("audit byte budget exhausted")

// countResponse makes the response body count against the byte budget.
func (p *proxy) countResponse(resp *http.Response) error {
	resp.Body = &countingBody{ReadCloser: resp.Body, p: p}
	return nil
}

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
		b.p.block(ReasonBudget, "response body")
		return 0, errBudget
	}
	return n, err
}

// bufferedConn reads first what the HTTP server already buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

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
