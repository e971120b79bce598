package plainget

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"lekta.dev/lekta/compare"
)

const testUA = "Mozilla/5.0 (compatible; LektaBot/0.1; +https://lekta.dev/bot)"

func mustURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func fetch(tb testing.TB, srv *httptest.Server, path string, mod func(*Config)) (*fetchResult, error) {
	tb.Helper()
	cfg := Config{Transport: &http.Transport{Proxy: nil}, UserAgent: testUA}
	if mod != nil {
		mod(&cfg)
	}
	snap, err := Fetch(context.Background(), cfg, mustURL(tb, srv.URL+path))
	if snap == nil {
		tb.Fatal("Fetch returned a nil snapshot")
	}
	return &fetchResult{snap.Status, string(snap.Body)}, err
}

type fetchResult struct {
	status int
	body   string
}

func compressed(tb testing.TB, coding string, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "raw-deflate":
		w, _ = flate.NewWriter(&buf, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriter(&buf)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func TestFetchSendsIdentityAndDecodes(t *testing.T) {
	const page = "<html><title>héllo</title><p>body</p></html>"
	cases := []struct{ name, coding, header string }{
		{"identity", "", ""},
		{"gzip", "gzip", "gzip"},
		{"zlib deflate", "deflate", "deflate"},
		{"raw deflate", "raw-deflate", "deflate"},
		{"brotli", "br", "br"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var gets atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gets.Add(1)
				if got := r.UserAgent(); got != testUA {
					t.Errorf("User-Agent = %q", got)
				}
				if got := r.Header.Get("Accept-Encoding"); got != "gzip, deflate, br" {
					t.Errorf("Accept-Encoding = %q", got)
				}
				if c := r.Header.Get("Cookie"); c != "" {
					t.Errorf("sent cookie %q", c)
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Header().Set("X-Robots-Tag", "noarchive")
				w.Header().Set("Set-Cookie", "s=1")
				body := []byte(page)
				if tc.coding != "" {
					w.Header().Set("Content-Encoding", tc.header)
					body = compressed(t, tc.coding, body)
				}
				w.Write(body)
			}))
			defer srv.Close()
			res, err := fetch(t, srv, "/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.body != page {
				t.Errorf("body = %q, want %q", res.body, page)
			}
			if gets.Load() != 1 {
				t.Errorf("%d GETs, want 1", gets.Load())
			}
		})
	}
}

func TestFetchKeepsHeadersAndTimings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Robots-Tag", "noindex")
		w.Header().Add("Link", `<https://shop.example/a>; rel="canonical"`)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.Header().Set("Server", "secret/1.0")
		fmt.Fprint(w, "<p>x</p>")
	}))
	defer srv.Close()
	cfg := Config{Transport: &http.Transport{}, UserAgent: testUA}
	snap, err := Fetch(context.Background(), cfg, mustURL(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"X-Robots-Tag", "Link", "Etag", "Last-Modified", "Content-Type"} {
		if snap.Header.Get(k) == "" {
			t.Errorf("header %s not kept", k)
		}
	}
	if snap.Header.Get("Server") != "" {
		t.Error("Server header kept; only the headers that matter are")
	}
	if snap.Status != 200 || snap.ContentType != "text/html" || snap.Bytes != 8 {
		t.Errorf("status %d type %q bytes %d", snap.Status, snap.ContentType, snap.Bytes)
	}
	if snap.Timings.TTFB <= 0 || snap.Timings.Total < snap.Timings.TTFB {
		t.Errorf("timings %+v", snap.Timings)
	}
}

// TestFetchKeepsTheClock: the response's Date header is kept and the time
// the response arrived is recorded, so the server HTML's unavailable_after
// dates are judged (the plain lane used to keep no clock at all).
func TestFetchKeepsTheClock(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", "Mon, 05 Jan 2026 10:00:00 GMT")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<meta name="robots" content="unavailable_after: 2020-01-01">`)
	}))
	defer srv.Close()
	fetched := time.Date(2026, 1, 5, 10, 0, 1, 0, time.UTC)
	cfg := Config{Transport: &http.Transport{}, UserAgent: testUA, Now: func() time.Time { return fetched }}
	snap, err := Fetch(context.Background(), cfg, mustURL(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Header.Get("Date"); got != "Mon, 05 Jan 2026 10:00:00 GMT" {
		t.Errorf("Date header %q not kept", got)
	}
	if !snap.FetchedAt.Equal(fetched) {
		t.Errorf("FetchedAt %v, want %v", snap.FetchedAt, fetched)
	}
	if p := compare.Extract(snap); !p.Expired || !p.Noindex {
		t.Errorf("unavailable_after 2020-01-01 in 2026: expired %v, noindex %v; want both", p.Expired, p.Noindex)
	}
}

func TestFetchRedirects(t *testing.T) {
	mux := http.NewServeMux()
	for i := range 7 {
		mux.HandleFunc(fmt.Sprintf("/hop%d", i), func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "c", Value: "1"})
			http.Redirect(w, r, fmt.Sprintf("/hop%d", i+1), http.StatusFound)
		})
	}
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop2", 301) })
	mux.HandleFunc("/loop2", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", 301) })
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Cookie") != "" {
			t.Error("cookie sent on a redirect hop")
		}
		fmt.Fprint(w, "<p>final</p>")
	})
	mux.HandleFunc("/to-final", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "c", Value: "1"})
		http.Redirect(w, r, "/final#frag", http.StatusMovedPermanently)
	})
	locs := map[string]string{
		"backslash":   `/\evil.example/`,
		"javascript":  "javascript:alert(1)",
		"file":        "file:///etc/passwd",
		"empty":       "",
		"space":       "/a b",
		"gopher":      "gopher://x.example/",
		"protocolrel": "//internal.example/x",
	}
	for name, loc := range locs {
		mux.HandleFunc("/bad-"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Location"] = []string{loc}
			w.WriteHeader(http.StatusFound)
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	t.Run("chain recorded, fragment dropped, no cookies", func(t *testing.T) {
		var checked []string
		res, err := fetch(t, srv, "/to-final", func(c *Config) {
			c.CheckHop = func(_ context.Context, u *url.URL) error { checked = append(checked, u.Path); return nil }
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.status != 200 || res.body != "<p>final</p>" {
			t.Fatalf("status %d body %q", res.status, res.body)
		}
		if len(checked) != 1 || checked[0] != "/final" {
			t.Errorf("CheckHop saw %v", checked)
		}
	})
	t.Run("five hops allowed, six refused", func(t *testing.T) {
		_, err := fetch(t, srv, "/hop2", nil) // hop2..hop7: 5 redirects then 404
		if err != nil {
			t.Fatalf("5 hops: %v", err)
		}
		_, err = fetch(t, srv, "/hop0", nil)
		if !errors.Is(err, ErrTooManyRedirects) {
			t.Fatalf("6 hops: err = %v, want ErrTooManyRedirects", err)
		}
	})
	t.Run("loop", func(t *testing.T) {
		_, err := fetch(t, srv, "/loop", nil)
		if !errors.Is(err, ErrRedirectLoop) {
			t.Fatalf("err = %v, want ErrRedirectLoop", err)
		}
	})
	t.Run("hop refused", func(t *testing.T) {
		sentinel := errors.New("disallowed by robots.txt")
		res, err := fetch(t, srv, "/to-final", func(c *Config) {
			c.CheckHop = func(context.Context, *url.URL) error { return sentinel }
		})
		if !errors.Is(err, ErrHopRefused) || !errors.Is(err, sentinel) {
			t.Fatalf("err = %v", err)
		}
		if res.status != 301 {
			t.Errorf("status = %d, want the redirect's 301", res.status)
		}
	})
	for name := range locs {
		t.Run("location "+name, func(t *testing.T) {
			var hops int
			_, err := fetch(t, srv, "/bad-"+name, func(c *Config) {
				c.CheckHop = func(_ context.Context, u *url.URL) error {
					hops++
					if u.Host != "internal.example" {
						t.Errorf("CheckHop asked about %s", u)
					}
					return errors.New("refused")
				}
			})
			if err == nil {
				t.Fatal("followed a bad Location")
			}
			if name != "protocolrel" && !errors.Is(err, ErrBadLocation) {
				t.Errorf("err = %v, want ErrBadLocation", err)
			}
		})
	}
}

func TestFetchBodyCap(t *testing.T) {
	big := bytes.Repeat([]byte("<p>aaaaaaaaa</p>\n"), 1<<16) // ~1.1 MB
	bomb := compressed(t, "gzip", make([]byte, 64<<20))
	mux := http.NewServeMux()
	mux.HandleFunc("/length", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		w.Write(big)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for i := 0; i < len(big); i += 4096 {
			w.Write(big[i:min(i+4096, len(big))])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range []string{"/length", "/chunked", "/bomb"} {
		t.Run(path, func(t *testing.T) {
			cfg := Config{Transport: &http.Transport{}, UserAgent: testUA, MaxBody: 256 << 10}
			snap, err := Fetch(context.Background(), cfg, mustURL(t, srv.URL+path))
			if err != nil {
				t.Fatal(err)
			}
			if !snap.Truncated || snap.Bytes != 256<<10 || len(snap.Body) > 256<<10 {
				t.Errorf("truncated %v bytes %d len %d", snap.Truncated, snap.Bytes, len(snap.Body))
			}
		})
	}
}

func TestFetchCharsets(t *testing.T) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().Bytes([]byte("<p>日本語のテキスト</p>"))
	utf16, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte("<p>ünïcödé</p>"))
	cases := []struct {
		name, ctype string
		body        []byte
		want        string
	}{
		{"shift_jis header", "text/html; charset=Shift_JIS", sjis, "日本語のテキスト"},
		{"shift_jis meta", "text/html", append([]byte(`<meta charset="shift_jis">`), sjis...), "日本語のテキスト"},
		{"windows-1252", "text/html; charset=windows-1252", []byte("<p>caf\xe9 \x93quoted\x94</p>"), "café “quoted”"},
		{"latin1 label", "text/html; charset=iso-8859-1", []byte("<p>caf\xe9</p>"), "café"},
		{"utf-16 bom", "text/html", utf16, "ünïcödé"},
		{"utf-8 bom", "text/html", []byte("\xef\xbb\xbf<p>ok é</p>"), "<p>ok é</p>"},
		{"bogus label", "text/html; charset=x-nonsense-42", []byte("<p>plain</p>"), "plain"},
		{"invalid utf-8", "text/html; charset=utf-8", []byte("<p>bad \xff\xfe bytes</p>"), "bad \uFFFD"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.Write(tc.body)
			}))
			defer srv.Close()
			res, err := fetch(t, srv, "/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(res.body) {
				t.Fatalf("invalid UTF-8: %q", res.body)
			}
			if !strings.Contains(res.body, tc.want) {
				t.Errorf("body %q does not contain %q", res.body, tc.want)
			}
		})
	}
}

func TestFetchNonHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write([]byte("%PDF-1.7 \x00\x01\x02 binary"))
	}))
	defer srv.Close()
	cfg := Config{Transport: &http.Transport{}, UserAgent: testUA}
	snap, err := Fetch(context.Background(), cfg, mustURL(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if snap.ContentType != "application/pdf" || snap.Body != nil || snap.Bytes != 19 {
		t.Errorf("type %q body %q bytes %d", snap.ContentType, snap.Body, snap.Bytes)
	}
}

func TestFetchUnsupportedEncoding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "zstd")
		w.Write([]byte("xx"))
	}))
	defer srv.Close()
	_, err := fetch(t, srv, "/", nil)
	if !errors.Is(err, ErrUnsupportedEncoding) {
		t.Fatalf("err = %v", err)
	}
}

// TestFetchNeverSendsCookiesOrCredentials: cookies a redirect sets are not
// sent to the next hop, and an authentication challenge is not answered.
func TestFetchNeverSendsCookiesOrCredentials(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		requests []*http.Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Clone(context.Background()))
		mu.Unlock()
		switch r.URL.Path {
		case "/start":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "1", Path: "/"})
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Redirect(w, r, "/login", http.StatusFound)
		case "/login":
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	res, err := fetch(t, srv, "/start", nil)
	if err != nil || res.status != http.StatusUnauthorized {
		t.Fatalf("fetch: %v, status %d, want the 401 recorded", err, res.status)
	}
	if len(requests) != 2 {
		t.Fatalf("site got %d requests, want 2 (the page and its redirect, no retry)", len(requests))
	}
	for _, r := range requests {
		if r.Method != http.MethodGet || r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s %s carried Cookie %q, Authorization %q", r.Method, r.URL, r.Header.Get("Cookie"), r.Header.Get("Authorization"))
		}
	}
}

// TestFetchSendsLocationAsChromium: a redirect hop is requested with the
// bytes Chromium would send for its Location, not Go's re-encoding: raw
// ^ and | escaped in the path, escapes kept in the case written, raw
// non-ASCII and ' escaped in the query, dot segments removed.
func TestFetchSendsLocationAsChromium(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"/x/../a^b|c/café?q=é'|":  "/a%5Eb%7Cc/caf%C3%A9?q=%C3%A9%27|",
		"/%e3%83%84/ü?%7c":        "/%e3%83%84/%C3%BC?%7c",
		"/k/x=%3D/!$&'()*+,;:@[]": "/k/x=%3D/!$&'()*+,;:@[]",
		"rel\xffative?a=\xc0\xaf": "/dir/rel%FFative?a=%C0%AF",
	}
	for loc, want := range tests {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got = append(got, r.RequestURI)
				mu.Unlock()
				if r.RequestURI == "/dir/start" {
					w.Header()["Location"] = []string{loc}
					w.WriteHeader(http.StatusFound)
					return
				}
				fmt.Fprint(w, "<p>here</p>")
			}))
			defer srv.Close()
			if _, err := fetch(t, srv, "/dir/start", nil); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 || got[1] != want {
				t.Errorf("Location %q: the site got %q, want [/dir/start %s]", loc, got, want)
			}
		})
	}
}
