package render

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

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
	u := &url.URL{Scheme: scheme, Host: canonicalHost(scheme, target), Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery, ForceQuery: r.URL.ForceQuery}
	if target == "" || !sameAuthority(u, r.Host) {
		// Each tunnel belongs to one host; Chromium never coalesces
		// connections across the proxy's single-name certificates.
		p.refuse(w, r, http.StatusMisdirectedRequest, "the request does not match its tunnel")
		return
	}
	p.serveRequest(w, r, u, scheme+"://"+u.Host+r.RequestURI)
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

// bufferedConn reads first what the HTTP server already buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// errPeerGone: the client closed its end of the connection before the
// peer check could attribute it; nothing will arrive on it.
var errPeerGone = errors.New("the connection was closed before it could be checked")

// peerListener drops connections that the check refuses. A connection
// whose client already closed it is dropped too, but counted in gone
// rather than reported as a stranger's: it is usually the browser's own.
type peerListener struct {
	net.Listener
	check peerCheck
	log   *slog.Logger
	gone  *atomic.Int64
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
		err = l.check(c)
		switch {
		case err == nil:
			return c, nil
		case errors.Is(err, errPeerGone):
			l.gone.Add(1)
			l.log.Debug("proxy connection closed before the peer check", "remote", c.RemoteAddr().String())
		default:
			l.log.Warn("proxy refused a connection that is not from the browser", "remote", c.RemoteAddr().String(), "err", err)
		}
		c.Close()
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
