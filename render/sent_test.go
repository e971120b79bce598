package render

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestProxyReportsSent: each request that left through the proxy is
// reported once, with the connection's addresses, status and bytes; a
// refused one is not, and a response refused by its type still counts as
// sent (the site answered it).
func TestProxyReportsSent(t *testing.T) {
	t.Parallel()
	f := newRulesFixture(t, true, nil)
	var mu sync.Mutex
	var sent []Sent
	f.p.setRules(&rules{userAgent: "Browser/1" + testSuffix, sent: func(s Sent) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, s)
	}})
	c := f.client()
	for _, tc := range []struct {
		url, dest string
	}{
		{"http://shop.example/a?q=1", ""},
		{"https://shop.example/b", ""},
		{"https://shop.example/img", "image"}, // refused before it leaves
		{"https://shop.example/type?ct=image/png", ""},
		{"https://www.google-analytics.com/collect", ""}, // a tracker: refused
	} {
		req, _ := http.NewRequest("GET", tc.url, nil)
		if tc.dest != "" {
			req.Header.Set("Sec-Fetch-Dest", tc.dest)
		}
		resp, err := c.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	seen := f.requests()
	if len(sent) != len(seen) || len(sent) != 3 {
		t.Fatalf("reported %d requests, the backend saw %d; want 3 each: %+v", len(sent), len(seen), sent)
	}
	want := map[string]struct {
		status int
		bytes  int64
	}{
		"http://shop.example/a?q=1":                {200, int64(len("hello from shop.example"))},
		"https://shop.example/b":                   {200, int64(len("hello from shop.example"))},
		"https://shop.example/type?ct=image%2Fpng": {200, 0},
		"https://shop.example/type?ct=image/png":   {200, 0},
	}
	for _, s := range sent {
		w, ok := want[s.URL.String()]
		if !ok || s.Status != w.status || s.Bytes != w.bytes || s.Method != "GET" {
			t.Errorf("reported %s %s status %d bytes %d", s.Method, s.URL, s.Status, s.Bytes)
		}
		if !s.Remote.IsValid() || !s.Local.IsValid() || !s.Local.Addr().IsLoopback() || s.At.IsZero() {
			t.Errorf("reported %s from %v to %v at %v; want both addresses and a time", s.URL, s.Local, s.Remote, s.At)
		}
		if strings.Contains(s.URL.Path, "img") {
			t.Errorf("the refused image was reported: %v", s.URL)
		}
	}
	ports := map[string]bool{}
	for _, r := range seen {
		ports[r.RemoteAddr] = true
	}
	for _, s := range sent {
		if !ports[s.Local.String()] {
			t.Errorf("reported local address %v; the backend saw %v", s.Local, ports)
		}
	}
}
