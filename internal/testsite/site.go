// Package testsite serves testdata/site for tests of every package: one
// httptest server that answers for any host name, records each request
// (host, path, user agent, overlap per host) and lets a test set robots.txt
// per host and add handlers. Tests map fake public names (shop.example,
// www.google-analytics.com, ...) to it through the SSRF guard's resolve rules.
package testsite

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/policy"
)

// Hosts are the names tests map to the site by default.
var Hosts = []string{
	"shop.example", "other.example", "www.google-analytics.com",
	"www.googletagmanager.com", "static.hotjar.com",
}

// Hit is one request the site received.
type Hit struct {
	Method    string
	Host      string // without port
	Path      string // path and query as sent
	UserAgent string
	Referer   string
	// Accept is the request's Accept header: a browser's navigation asks
	// for "text/html,…" first, its fetch() and XHR for "*/*" unless the
	// script says otherwise.
	Accept string
	// IfNoneMatch and IfModifiedSince are the request's validators.
	IfNoneMatch     string
	IfModifiedSince string
	// Remote is the client's address and port: the connection's other end.
	Remote netip.AddrPort
	// Status and Bytes are what the site answered (Bytes: body bytes written).
	Status int
	Bytes  int64
	Start  time.Time
	End    time.Time
}

// CombinedLine is the hit as a combined-log-format line, as Apache's and
// nginx's access logs write it, led by the virtual host when vhost is set
// (Apache's vhost_combined).
func (h Hit) CombinedLine(vhost bool) string {
	q := func(s string) string {
		if s == "" {
			return `"-"`
		}
		return strconv.Quote(s)
	}
	line := fmt.Sprintf("%s - - [%s] %s %d %d %s %s", h.Remote.Addr(), h.Start.Format("02/Jan/2006:15:04:05 -0700"),
		q(h.Method+" "+h.Path+" HTTP/1.1"), h.Status, h.Bytes, q(h.Referer), q(h.UserAgent))
	if vhost {
		line = h.Host + " " + line
	}
	return line
}

// statusWriter notes a response's status and body size for the hit.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush, Hijack and Unwrap keep what handlers of the site use working.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type robots struct {
	status int
	body   string
}

// Site is a running test site.
type Site struct {
	*httptest.Server

	dir string
	mux *http.ServeMux

	mu          sync.Mutex
	hits        []Hit
	inflight    map[string]int
	maxInflight map[string]int
	robots      map[string]robots
}

// Dir returns the absolute path of testdata/site.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "site")
}

// Start serves testdata/site until the test ends.
func Start(tb testing.TB) *Site {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// New serves testdata/site until Close; tests use Start.
func New() *Site {
	s := &Site{
		dir:         Dir(),
		mux:         http.NewServeMux(),
		inflight:    map[string]int{},
		maxInflight: map[string]int{},
		robots:      map[string]robots{},
	}
	s.mux.Handle("/", http.FileServer(http.Dir(s.dir)))
	// The request-records page: /rec/go redirects to it, query and all.
	s.mux.Handle("/rec/go", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := "/rec/page.html"
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusFound)
	}))
	s.mux.Handle("/kettle.html", http.HandlerFunc(serveKettle))
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// KettleETag is the ETag of /kettle.html, which answers 304 Not Modified
// to a request whose If-None-Match carries it.
const KettleETag = `"kettle-v1"`

// kettlePage is /kettle.html: the same text and links with or without scripts.
const kettlePage = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>The copper kettle</title><meta name="description" content="A kettle that keeps its shine."></head>
<body><h1>The copper kettle</h1>
<p>Our copper kettle boils a litre of water in four minutes and keeps its shine for years.</p>
<p>It whistles when the water is ready, and the handle stays cool.</p>
<a href="/index.html">Home</a> <a href="/links-added.html">More kettles</a>
</body></html>`

// serveKettle answers /kettle.html with KettleETag, or 304 to a matching
// If-None-Match (RFC 9110, 13.1.2).
func serveKettle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("ETag", KettleETag)
	w.Header().Set("Last-Modified", "Tue, 01 Dec 2026 08:00:00 GMT")
	w.Header().Set("Cache-Control", "no-cache")
	for _, tag := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if strings.TrimSpace(tag) == KettleETag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, kettlePage)
}

// Handle adds a handler for pattern (http.ServeMux syntax, host-less).
func (s *Site) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// SetRobots makes host answer /robots.txt with status and body. Without it
// /robots.txt is 404.
func (s *Site) SetRobots(host string, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robots[host] = robots{status: status, body: body}
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	hit := Hit{Method: r.Method, Host: host, Path: r.RequestURI, UserAgent: r.UserAgent(), Referer: r.Referer(), Start: time.Now(),
		Accept:      r.Header.Get("Accept"),
		IfNoneMatch: r.Header.Get("If-None-Match"), IfModifiedSince: r.Header.Get("If-Modified-Since")}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		hit.Remote = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	sw := &statusWriter{ResponseWriter: w}
	w = sw
	s.enter(host)
	defer func() {
		hit.End, hit.Status, hit.Bytes = time.Now(), sw.status, sw.bytes
		if hit.Status == 0 {
			hit.Status = http.StatusOK
		}
		s.leave(host, hit)
	}()
	if r.URL.Path == "/robots.txt" {
		s.serveRobots(w, host)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/slow/") {
		Slow(s.mux).ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Slow wraps next so that /slow/MS/PATH is answered by next as /PATH after
// MS milliseconds; MS 0 never answers (until the client goes). Other paths
// go to next at once. The render package's test site uses it too.
func Slow(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/slow/")
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		msText, file, _ := strings.Cut(rest, "/")
		ms, err := strconv.Atoi(msText)
		if err != nil || ms < 0 {
			http.NotFound(w, r)
			return
		}
		var after <-chan time.Time
		if ms > 0 {
			after = time.After(time.Duration(ms) * time.Millisecond)
		}
		select {
		case <-after:
		case <-r.Context().Done():
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + file
		next.ServeHTTP(w, r2)
	})
}

func (s *Site) serveRobots(w http.ResponseWriter, host string) {
	s.mu.Lock()
	rb, ok := s.robots[host]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(rb.status)
	fmt.Fprint(w, rb.body)
}

func (s *Site) enter(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight[host]++
	s.maxInflight[host] = max(s.maxInflight[host], s.inflight[host])
}

func (s *Site) leave(host string, hit Hit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight[host]--
	s.hits = append(s.hits, hit)
}

// Hits returns every finished request so far.
func (s *Site) Hits() []Hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Hit(nil), s.hits...)
}

// HitsOf returns the requests to host whose path starts with prefix.
func (s *Site) HitsOf(host, prefix string) []Hit {
	var out []Hit
	for _, h := range s.Hits() {
		if h.Host == host && strings.HasPrefix(h.Path, prefix) {
			out = append(out, h)
		}
	}
	return out
}

// MaxConcurrent is the most requests host ever had in flight at once.
func (s *Site) MaxConcurrent(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInflight[host]
}

// AddrPort is the site's listening address.
func (s *Site) AddrPort() netip.AddrPort {
	return netip.MustParseAddrPort(s.Listener.Addr().String())
}

// ResolveFlags returns --resolve values ("host:80:127.0.0.1:PORT") mapping
// each host's port 80 to the site, plus the --allow-addr value for it.
func (s *Site) ResolveFlags(hosts ...string) (resolve []string, allow string) {
	if len(hosts) == 0 {
		hosts = Hosts
	}
	for _, h := range hosts {
		resolve = append(resolve, fmt.Sprintf("%s:80:%s", h, s.AddrPort()))
	}
	return resolve, s.AddrPort().String()
}

// GuardConfig is the SSRF guard configuration of ResolveFlags(hosts...):
// a resolve rule mapping each host's port 80 to the site, and the site's
// address allowed. It panics if policy refuses those flags, which would be
// a bug here or there.
func (s *Site) GuardConfig(hosts ...string) policy.GuardConfig {
	resolve, allow := s.ResolveFlags(hosts...)
	var gc policy.GuardConfig
	for _, r := range resolve {
		rule, err := policy.ParseResolveRule(r)
		if err != nil {
			panic(fmt.Sprintf("testsite: parse resolve rule %q: %v", r, err))
		}
		gc.Resolve = append(gc.Resolve, rule)
	}
	addr, err := policy.ParseAllowAddr(allow)
	if err != nil {
		panic(fmt.Sprintf("testsite: parse allow addr %q: %v", allow, err))
	}
	gc.AllowAddrs = append(gc.AllowAddrs, addr)
	return gc
}

// ReadFile returns a file of testdata/site.
func ReadFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
