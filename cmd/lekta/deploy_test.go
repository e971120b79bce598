package main

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/internal/pgtest"
	"lekta.dev/lekta/internal/redistest"
	"lekta.dev/lekta/internal/testsite"
)

// TestDeployTopology starts docs/deploy.md's topology as processes: a
// throw-away PostgreSQL, a private Redis with the durability settings the
// docs/state.md requires, three lekta serve and a TLS reverse proxy in front of
// them (round robin, X-Forwarded-For and -Proto). Audits submitted through
// the proxy run, their reports are readable through it whichever instance
// answers, every instance is ready, and none warns about Redis.
func TestDeployTopology(t *testing.T) {
	chromium := serveNeeds(t, "chromium", "chromium-browser", "google-chrome")
	h := newLektaHarness(t, chromium)
	site := testsite.Start(t)
	rdb := redistest.StartPrivate(t, "--appendonly", "yes", "--maxmemory-policy", "noeviction")
	hosts := []string{"a.example", "b.example", "c.example"}
	resolve, allow := site.ResolveFlags(hosts...)
	args := []string{"--database-url", pgtest.Database(t), "--secrets-key-file", sharedSecretsKey(t), "--redis-url", rdb.URL(), "--allow-addr", allow,
		"--trusted-proxy", "127.0.0.1", "--contact", "mailto:ops@example.com", "--renderers", "1"}
	for _, r := range resolve {
		args = append(args, "--resolve", r)
	}
	var backends []*url.URL
	var procs []*served
	for range 3 {
		p := startServeProc(t, h, slices.Concat(args, []string{"--data-dir", t.TempDir()})...)
		u, _ := url.Parse(p.base)
		backends, procs = append(backends, u), append(procs, p)
	}
	var next atomic.Int64
	proxy := httptest.NewTLSServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			b := backends[next.Add(1)%int64(len(backends))]
			r.SetURL(b)
			r.SetXForwarded()
		},
	})
	t.Cleanup(proxy.Close)
	front := &served{tb: t, base: proxy.URL, stderr: &serveBuf{},
		client: &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}

	var ids []string
	for _, host := range hosts {
		resp, body := front.postAPI("http://" + host + "/index.html")
		ids = append(ids, servePendingID(t, resp, body))
	}
	for _, id := range ids {
		// Each read may land on another instance.
		if r := front.waitReport(id); r.Status != audit.StatusComplete {
			t.Errorf("audit %s through the proxy: %s (%s), want complete", id, r.Status, r.Reason)
		}
		for range 3 {
			resp, body := front.do("GET", "/api/v1/audits/"+id, "", nil)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("report %s through the proxy: %d %s", id, resp.StatusCode, body)
			}
		}
	}
	for i, p := range procs {
		resp, body := p.do("GET", "/readyz", "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("instance %d /readyz: %d %s", i, resp.StatusCode, body)
		}
		if strings.Contains(p.stderr.String(), "Redis in production") {
			t.Errorf("instance %d warns about Redis:\n%s", i, p.stderr)
		}
	}
}
