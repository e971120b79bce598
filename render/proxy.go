package render

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
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
	forward   *httputil.ReverseProxy
	ctx       context.Context // ends when the proxy closes; tunnels watch it
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the servers

	rules atomic.Pointer[rules]
	// peersGone counts connections closed by the browser before the peer
	// check could attribute them.
	peersGone atomic.Int64
	redirects redirectBook
	// bodies is what the causes read of the bodies relayed (bodies.go).
	bodies bodyBook

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
	p.transport = upstreamTransport(p.dialUpstream, cfg.roots)
	errorLog := slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug)
	p.forward = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      p.transport,
		ModifyResponse: p.inspectResponse,
		ErrorHandler:   p.forwardError,
		ErrorLog:       errorLog,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       proxyIdleTimeout,
		MaxHeaderBytes:    proxyMaxHeaderBytes,
		ErrorLog:          errorLog,
	}
	p.tunnelLn = newTunnelListener(ln.Addr())
	p.inner = p.tunnelServer(errorLog)
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		p.srv.Serve(peerListener{Listener: ln, check: cfg.peer, log: cfg.log, gone: &p.peersGone})
	}()
	go func() {
		defer p.wg.Done()
		p.inner.Serve(p.tunnelLn)
	}()
	return p, nil
}

// upstreamTransport is the proxy's client to the sites: every connection
// dialled by dial (the guard), none through an environment proxy.
func upstreamTransport(dial func(context.Context, string, string) (net.Conn, error), roots *x509.CertPool) *http.Transport {
	return &http.Transport{
		Proxy:                  nil, // environment proxies must not bypass the guard
		DialContext:            dial,
		TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
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
}

// tunnelServer serves the requests inside CONNECT tunnels, each knowing
// the target its tunnel was opened for.
func (p *proxy) tunnelServer(errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           http.HandlerFunc(p.serveTunneled),
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       proxyIdleTimeout,
		MaxHeaderBytes:    proxyMaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
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
		ErrorLog: errorLog,
	}
}

// tunnelKey is the context key of a tunnelled request's CONNECT target.
type tunnelKey struct{}

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
	p.serveRequest(w, r, cloneURL(r.URL), r.RequestURI)
}

// exchange is what the proxy knows of one forwarded request, carried in
// its context from serveRequest to the response.
type exchange struct {
	url *url.URL
	// raw is the URL as the browser sent it, which redirect chains are
	// matched by.
	raw string
	// hops is how many redirects led to this request.
	hops int
	// sent reports the request once it left (nil: nobody asked).
	sent *sentTrace
}

type exchangeKey struct{}

// serveRequest applies the audit's rules to one request for u, which the
// browser sent as raw (an absolute URL), and forwards it, or refuses it.
func (p *proxy) serveRequest(w http.ResponseWriter, r *http.Request, u *url.URL, raw string) {
	rl := p.rules.Load()
	if rl == nil {
		p.refuse(w, r, http.StatusForbidden, "not part of an audit")
		return
	}
	hops := p.redirects.take(raw)
	if reason, rule := p.check(r, u, hops, rl); reason != "" {
		p.block(reason, u.String(), rule)
		status := http.StatusForbidden
		if reason == ReasonMethod && !upgrade(r) {
			status = http.StatusMethodNotAllowed
		}
		p.refuse(w, r, status, reason)
		return
	}
	p.scrub(r.Header, rl)
	x := &exchange{url: u, raw: raw, hops: hops, sent: newSentTrace(rl.sent, r.Method, u)}
	ctx := x.sent.with(context.WithValue(r.Context(), exchangeKey{}, x))
	p.forward.ServeHTTP(w, r.WithContext(ctx))
}

// rewrite makes the outbound request: the URL the rules were checked for.
func (p *proxy) rewrite(pr *httputil.ProxyRequest) {
	x := pr.In.Context().Value(exchangeKey{}).(*exchange)
	pr.Out.URL = cloneURL(x.url)
	pr.Out.Host = x.url.Host
}

// forwardError answers a request whose upstream failed or whose response
// the rules refused.
func (p *proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	if x, ok := r.Context().Value(exchangeKey{}).(*exchange); ok {
		x.sent.finish(0, 0, err) // a no-op when a response was reported
	}
	var mr mediaRefusal
	var lr locationRefusal
	switch {
	case errors.As(err, &lr):
		p.refuse(w, r, http.StatusForbidden, lr.Error())
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
