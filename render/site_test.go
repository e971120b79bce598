package render

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/internal/canary"
	"lekta.dev/lekta/internal/testsite"
)

// testSuffix is the user agent suffix of the test browser.
const testSuffix = " LektaBot/0.1 (+https://lekta.dev/bot)"

// hit is one request the test site received.
type hit struct {
	Host, Path, Query, UA, Method string
	// URI is the request target as it arrived (r.RequestURI).
	URI string
	// Scheme is "https" for a request to the TLS listener.
	Scheme string
	// Cookie, Authorization and ACRM (Access-Control-Request-Method) are
	// the request's headers of those names.
	Cookie, Authorization, ACRM string
	// BodyLen is how many body bytes arrived.
	BodyLen int
	// At is when the request arrived.
	At time.Time
	// Lang is the Accept-Language header.
	Lang string
}

// site is the local test web site: pages from testdata and a few dynamic
// endpoints, reached through fake public host names that testDial maps to
// it. It logs every request.
type site struct {
	srv    *httptest.Server
	tls    *httptest.Server // the same site over TLS, for *.example:443
	roots  *x509.CertPool   // trusts tls's certificate
	canary *canary.Canary

	// pages are test pages served at /t/NAME (see addPage).
	pages sync.Map
	// written counts the body bytes /blob handed to the connection, per query.
	written sync.Map

	mu   sync.Mutex
	hits []hit
	// wsBytes counts, per host, the bytes WebSocket clients sent after
	// the handshake: frames of page data.
	wsBytes sync.Map
	// refusedDials counts dials the test guard refused.
	refusedDials atomic.Int64
	// hosts answers for the host names registered on it (the framework
	// corpus) before the site's own paths.
	hosts atomic.Pointer[http.ServeMux]
}

// errTestGuard is the test guard's refusal.
var errTestGuard = errors.New("test guard: address refused")

func newSite(tb testing.TB) *site {
	tb.Helper()
	c, err := canary.NewLoopback()
	if err != nil {
		tb.Fatal(err)
	}
	s := &site{canary: c}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	cert, roots := testCertificate(tb, "*.example")
	s.roots = roots
	s.tls = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.tls.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.tls.StartTLS()
	return s
}

func (s *site) close() {
	s.srv.Close()
	s.tls.Close()
	s.canary.Close()
}

// loopback is the site's own address, which the test guard allows exactly
// (as --allow-addr does): http://loopback is a secure context to Chromium,
// so service workers register there without TLS.
func (s *site) loopback() string { return s.srv.Listener.Addr().String() }

// testPage is one page addPage registered.
type testPage struct {
	contentType string
	body        string
}

// addPage serves body at /t/name; a name ending in .js is served as script.
func (s *site) addPage(name, body string) {
	ct := "text/html; charset=utf-8"
	if strings.HasSuffix(name, ".js") {
		ct = "text/javascript"
	}
	s.pages.Store(name, testPage{contentType: ct, body: body})
}

// testCertificate makes a self-signed certificate for the names and a pool
// that trusts it.
func testCertificate(tb testing.TB, names ...string) (tls.Certificate, *x509.CertPool) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// dial is the test guard: *.example and analytics hosts on port 80 go to
// the test site, everything else is refused, like a public-only guard.
func (s *site) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	host = strings.ToLower(host)
	var d net.Dialer
	public := strings.HasSuffix(host, ".example") || trackerHost(host) || host == "www.facebook.com"
	switch {
	case port == "80" && public, addr == s.loopback():
		return d.DialContext(ctx, "tcp", s.loopback())
	case port == "443" && public:
		return d.DialContext(ctx, "tcp", s.tls.Listener.Addr().String())
	}
	s.refusedDials.Add(1)
	return nil, fmt.Errorf("dial %s: %w", addr, errTestGuard)
}

// checkURL is the test target validation: http(s), a name (no IP literal,
// no localhost), default ports only; and the site's own loopback address,
// allowed exactly.
func (s *site) checkURL(u *url.URL) error {
	if u.Scheme == "http" && u.Host == s.loopback() {
		return nil
	}
	return checkURL(u)
}

// checkURL is checkURL of a site without the loopback exception.
func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q refused", u.Scheme)
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil || host == "localhost" || !strings.Contains(host, ".") {
		return fmt.Errorf("host %q refused", host)
	}
	if last := host[strings.LastIndex(host, ".")+1:]; last != "" && strings.Trim(last, "0123456789x") == "" {
		return fmt.Errorf("host %q is an IP literal", host)
	}
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		return fmt.Errorf("port %s refused", p)
	}
	return nil
}

// hitsFor returns the requests the site received for host.
func (s *site) hitsFor(host string) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hit
	for _, h := range s.hits {
		if h.Host == host {
			out = append(out, h)
		}
	}
	return out
}

// hitsMatching returns the requests for which keep is true.
func (s *site) hitsMatching(keep func(hit) bool) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hit
	for _, h := range s.hits {
		if keep(h) {
			out = append(out, h)
		}
	}
	return out
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	h := hit{
		Host: host, Path: r.URL.Path, Query: r.URL.RawQuery, UA: r.UserAgent(), Method: r.Method, Scheme: "http", URI: r.RequestURI,
		Cookie: r.Header.Get("Cookie"), Authorization: r.Header.Get("Authorization"),
		ACRM: r.Header.Get("Access-Control-Request-Method"), BodyLen: int(n), At: time.Now(),
		Lang: r.Header.Get("Accept-Language"),
	}
	if r.TLS != nil {
		h.Scheme = "https"
	}
	s.mu.Lock()
	s.hits = append(s.hits, h)
	s.mu.Unlock()
	if m := s.hosts.Load(); m != nil {
		if hh, pattern := m.Handler(r); pattern != "" {
			hh.ServeHTTP(w, r)
			return
		}
	}
	q := r.URL.Query()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/t/"):
		v, ok := s.pages.Load(strings.TrimPrefix(p, "/t/"))
		if !ok {
			http.NotFound(w, nil)
			return
		}
		tp := v.(testPage)
		w.Header().Set("Content-Type", tp.contentType)
		io.WriteString(w, tp.body)
	case strings.HasPrefix(p, "/slow/"):
		// /slow/MS/PATH answers PATH of the shared test site after MS ms.
		testsite.Slow(http.FileServer(http.Dir(testsite.Dir()))).ServeHTTP(w, r)
	case strings.HasPrefix(p, "/delayed/"), strings.HasPrefix(p, "/data/"), strings.HasPrefix(p, "/wrs/"), strings.HasPrefix(p, "/causes/"):
		// The delayed-content and Google-renderer pages of the shared test site.
		http.ServeFile(w, r, filepath.Join(testsite.Dir(), filepath.FromSlash(path.Clean(p))))
	case p == "/events":
		// Server-sent events: one message, then the stream stays open.
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: sse-hello\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case p == "/sink":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"sink":true}`)
	case p == "/auth":
		if r.Header.Get("Authorization") == "" {
			if q.Get("nochallenge") == "" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			}
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "authorized")
	case p == "/setcookie":
		w.Header().Set("Set-Cookie", "b=2; Path=/")
		io.WriteString(w, "cookie set")
	case p == "/blob":
		// A body of the given type and size without a telling extension.
		size, _ := strconv.Atoi(q.Get("size"))
		w.Header().Set("Content-Type", q.Get("type"))
		chunk := make([]byte, 32<<10)
		written := 0
		for written < size {
			k, err := w.Write(chunk[:min(len(chunk), size-written)])
			written += k
			if err != nil {
				break
			}
		}
		s.written.Store(r.URL.RawQuery, written)
	case p == "/framenav":
		i, _ := strconv.Atoi(q.Get("i"))
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!DOCTYPE html><title>frame %d</title><p>frame-%d</p><script>location = "/framenav?i=%d";</script>`, i, i, i+1)
	case strings.HasPrefix(p, "/p/"):
		s.page(w, strings.TrimPrefix(p, "/p/"))
	case p == "/data.json":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"fetched-by-script"}`)
	case p == "/public/ok.js":
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.addEventListener("DOMContentLoaded", () => document.getElementById("out").textContent = "public-script-ran");`)
	case p == "/private/secret.js":
		w.Header().Set("Content-Type", "text/javascript")
		io.WriteString(w, `document.title = "private-script-ran";`)
	case p == "/redirect":
		code, _ := strconv.Atoi(q.Get("code"))
		if code == 0 {
			code = http.StatusFound
		}
		w.Header().Set("Location", q.Get("to"))
		w.WriteHeader(code)
	case strings.HasPrefix(p, "/rc/"):
		serveSpelledChain(w, r)
	case p == "/loop":
		http.Redirect(w, r, "/loop", http.StatusFound)
	case p == "/chain":
		n, _ := strconv.Atoi(q.Get("n"))
		kind := q.Get("k")
		if n > 0 {
			next := fmt.Sprintf("/chain?n=%d", n-1)
			if kind != "" {
				next += "&k=" + kind
			}
			http.Redirect(w, r, next, http.StatusFound)
			return
		}
		switch kind {
		case "script":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, `document.title = "chain-script-ran";`)
		case "style":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, `p { color: red }`)
		case "fetch":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"chain":"end"}`)
		default:
			s.page(w, "small.html")
		}
	case p == "/nav":
		i, _ := strconv.Atoi(q.Get("i"))
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>nav %d</title></head><body><p id=n>nav-%d</p><script>location = "/nav?i=%d";</script></body></html>`, i, i, i+1)
	case p == "/metarefresh":
		i, _ := strconv.Atoi(q.Get("i"))
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>meta %d</title><meta http-equiv="refresh" content="0; url=/metarefresh?i=%d"></head><body><p>meta-%d</p></body></html>`, i, i+1, i)
	case p == "/refreshheader":
		i, _ := strconv.Atoi(q.Get("i"))
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Refresh", fmt.Sprintf("0; url=/refreshheader?i=%d", i+1))
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>refresh %d</title></head><body><p>refresh-%d</p></body></html>`, i, i)
	case p == "/refreshto":
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Refresh", "0; url=http://127.0.0.1:"+strconv.Itoa(s.canary.Port())+"/refreshed")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>refresh header</title></head><body><p id="out">stays here</p></body></html>`)
	case p == "/ws":
		var n atomic.Int64
		v, _ := s.wsBytes.LoadOrStore(host, &n)
		serveWebSocket(w, r, "ws-hello", v.(*atomic.Int64))
	case p == "/gone":
		// A not-found page of the site's own, with a script that is missing too.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Not found</title><script src="/p/missing.js"></script></head><body><h1>Not found</h1></body></html>`)
	case p == "/n":
		io.WriteString(w, "n")
	case p == "/bytes":
		n, _ := strconv.Atoi(q.Get("n"))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		chunk := make([]byte, 64<<10)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	case p == "/download":
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="x.bin"`)
		io.WriteString(w, "binary")
	case p == "/hang":
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	default:
		// Images, fonts, media and analytics scripts: the lane must never ask.
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, "x")
	}
}

// page serves a testdata file, with the canary ports filled in.
func (s *site) page(w http.ResponseWriter, name string) {
	data, err := os.ReadFile(filepath.Join("testdata", filepath.Base(name)))
	if err != nil {
		http.NotFound(w, nil)
		return
	}
	body := strings.NewReplacer("{{CANARY}}", strconv.Itoa(s.canary.Port()), "{{CANARY6}}", strconv.Itoa(s.canary.Port6())).Replace(string(data))
	if strings.HasSuffix(name, ".js") {
		w.Header().Set("Content-Type", "text/javascript")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Header().Set("X-Test-Header", "from-site")
	io.WriteString(w, body)
}

// shared is the browser and site the package's tests share.
var shared struct {
	once    sync.Once
	site    *site
	browser *Browser
	err     error
}

// testLogger writes to stderr when LEKTA_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("LEKTA_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testOptions are the options of test browsers on s.
func testOptions(s *site) Options {
	// LEKTA_TEST_CHROMIUM runs the tests on another binary (the browser
	// rather than its headless shell, say).
	return Options{Dial: s.dial, CheckURL: s.checkURL, UASuffix: testSuffix, Logger: testLogger(), RootCAs: s.roots, ExecPath: os.Getenv("LEKTA_TEST_CHROMIUM")}
}

// mustBrowser returns the shared browser and site. Without Chromium the
// test fails when CI is set and skips otherwise.
func mustBrowser(tb testing.TB) (*Browser, *site) {
	tb.Helper()
	shared.once.Do(func() {
		shared.site = newSite(tb)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		shared.browser, shared.err = Start(ctx, testOptions(shared.site))
	})
	requireBrowser(tb, shared.err)
	return shared.browser, shared.site
}

// requireBrowser fails or skips on a start error.
func requireBrowser(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrBrowserMissing) && os.Getenv("CI") == "" {
		tb.Skipf("no Chromium (install the Debian package chromium-headless-shell): %v", err)
	}
	tb.Fatalf("start browser: %v", err)
}

// renderPage renders http://host+path with a deadline.
func renderPage(tb testing.TB, b *Browser, req Request, timeout time.Duration) (*compare.Snapshot, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	snap, err := b.Render(ctx, req)
	if snap != nil && snap.Render != nil && snap.Render.WriteMark != "" {
		// The write marks are for the extractor; the tests read the page.
		snap.Body = unmarked(snap.Body, snap.Render.WriteMark)
	}
	return snap, err
}

// unmarked is body without the write mark's attributes.
func unmarked(body []byte, mark string) []byte {
	return regexp.MustCompile(` `+regexp.QuoteMeta(mark)+`="[0-9]+"`).ReplaceAll(body, nil)
}

// hostFor is a fake host name unique to the test.
func hostFor(tb testing.TB) string {
	name := strings.ToLower(tb.Name())
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, name)
	return strings.Trim(name, "-") + ".example"
}

// paths lists the paths of hits.
func paths(hs []hit) []string {
	var out []string
	for _, h := range hs {
		p := h.Path
		if h.Query != "" {
			p += "?" + h.Query
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.browser != nil {
		shared.browser.Close()
	}
	if shared.site != nil {
		shared.site.close()
	}
	os.Exit(code)
}

// serveWebSocket accepts a WebSocket, sends one text message and keeps the
// connection open until the client goes, counting what the client sends
// into received.
func serveWebSocket(w http.ResponseWriter, r *http.Request, msg string, received *atomic.Int64) {
	sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
	buf.Write(append([]byte{0x81, byte(len(msg))}, msg...))
	buf.Flush()
	b := make([]byte, 512)
	for {
		n, err := conn.Read(b)
		received.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// wsReceived is how many bytes WebSocket clients sent the site for host.
func (s *site) wsReceived(host string) int64 {
	if v, ok := s.wsBytes.Load(host); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}
