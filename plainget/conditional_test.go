package plainget

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestConditionalFetch: the validators go on the first request only, never
// on a redirect hop, and unusable ones are not sent at all.
func TestConditionalFetch(t *testing.T) {
	t.Parallel()
	long := `"` + strings.Repeat("a", MaxValidator) + `"`
	cases := []struct {
		name       string
		path       string
		v          Validators
		wantINM    string // on the first request
		wantIMS    string
		wantStatus int
	}{
		{"etag matches", "/page", Validators{ETag: `"kettle-v1"`}, `"kettle-v1"`, "", 304},
		{"both validators", "/page", Validators{ETag: `"kettle-v1"`, LastModified: "Tue, 01 Dec 2026 10:00:00 GMT"}, `"kettle-v1"`, "Tue, 01 Dec 2026 10:00:00 GMT", 304},
		{"etag differs", "/page", Validators{ETag: `"kettle-v0"`}, `"kettle-v0"`, "", 200},
		{"none", "/page", Validators{}, "", "", 200},
		{"control byte", "/page", Validators{ETag: "\"kettle-v1\"\r\nX-Evil: 1", LastModified: "Tue,\x01 01 Dec"}, "", "", 200},
		{"too long", "/page", Validators{ETag: long}, "", "", 200},
		{"redirect hop", "/moved", Validators{ETag: `"kettle-v1"`}, `"kettle-v1"`, "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []http.Header
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Clone())
				mu.Unlock()
				if r.URL.Path == "/moved" {
					http.Redirect(w, r, "/page", http.StatusFound)
					return
				}
				w.Header().Set("ETag", `"kettle-v1"`)
				if r.Header.Get("If-None-Match") == `"kettle-v1"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<title>kettle</title>"))
			}))
			t.Cleanup(srv.Close)
			res, err := fetch(t, srv, tc.path, func(c *Config) { c.Validators = tc.v })
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if res.status != tc.wantStatus {
				t.Errorf("status %d, want %d", res.status, tc.wantStatus)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := seen[0].Get("If-None-Match"); got != tc.wantINM {
				t.Errorf("first request If-None-Match %q, want %q", got, tc.wantINM)
			}
			if got := seen[0].Get("If-Modified-Since"); got != tc.wantIMS {
				t.Errorf("first request If-Modified-Since %q, want %q", got, tc.wantIMS)
			}
			for i, h := range seen[1:] {
				if h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" {
					t.Errorf("redirect hop %d carried validators: %v", i+1, h)
				}
			}
			if tc.path == "/moved" && len(seen) != 2 {
				t.Errorf("%d requests, want 2", len(seen))
			}
		})
	}
}
