package render

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"sync"
	"time"
)

// The proxy terminates every TLS connection the browser opens, so the
// lane's rules (method, credentials, user agent, robots.txt, redirect cap,
// media types) hold for each request inside it, whichever part of the
// browser sent it: page, frame, dedicated, shared or service worker. The
// proxy then makes its own TLS connection to the site through the guard
// and verifies the site's certificate (Options.RootCAs, else the system's).
//
// Chromium is told to accept the proxy's certificates by their public key
// (--ignore-certificate-errors-spki-list). Every certificate the authority
// makes carries the same key, generated at Start and never written to
// disk, so the browser trusts exactly this process's certificates and
// nothing else it would not trust anyway.

// certLifetime is how long a made-up certificate is valid; it is renewed
// well before that.
const (
	certLifetime = 7 * 24 * time.Hour
	certRenew    = 24 * time.Hour
	// maxCerts bounds the certificate cache; past it, the cache starts over.
	maxCerts = 4096
)

// authority makes the certificates the proxy shows the browser, one per
// host, all with one key.
type authority struct {
	key  *ecdsa.PrivateKey
	spki string // base64 SHA-256 of the key's SubjectPublicKeyInfo
	now  func() time.Time

	mu    sync.Mutex
	certs map[string]*tls.Certificate
}

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate proxy key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encode proxy key: %w", err)
	}
	sum := sha256.Sum256(der)
	return &authority{
		key: key, spki: base64.StdEncoding.EncodeToString(sum[:]), now: time.Now,
		certs: make(map[string]*tls.Certificate),
	}, nil
}

// certificate returns a certificate for host (a name or an IP literal).
func (a *authority) certificate(host string) (*tls.Certificate, error) {
	if host == "" {
		return nil, errors.New("no host for the certificate")
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.certs[host]; ok && c.Leaf.NotAfter.Sub(now) > certRenew {
		return c, nil
	}
	tmpl := &x509.Certificate{
		SerialNumber:          new(big.Int).SetInt64(now.UnixNano()),
		Subject:               pkix.Name{CommonName: host, Organization: []string{"Lekta render lane"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		tmpl.IPAddresses = []net.IP{ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &a.key.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("make certificate for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("read certificate for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: a.key, Leaf: leaf}
	if len(a.certs) >= maxCerts {
		clear(a.certs)
	}
	a.certs[host] = c
	return c, nil
}

// tunnelListener hands the connections of CONNECT tunnels, TLS-terminated
// or plain, to the proxy's inner HTTP server.
type tunnelListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  net.Addr
}

func newTunnelListener(addr net.Addr) *tunnelListener {
	return &tunnelListener{conns: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

// push hands c to the server; false once the listener is closed.
func (l *tunnelListener) push(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// Accept returns the next tunnel connection.
func (l *tunnelListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept.
func (l *tunnelListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the proxy's own address.
func (l *tunnelListener) Addr() net.Addr { return l.addr }
