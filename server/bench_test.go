package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/cache"
)

// BenchmarkAPICacheHit measures the server's own time for POST
// /api/v1/audits answered from the result cache: per-client limit, queue
// slot, validation, cache lookup, report encoding. ns/op is the time per
// request; req/s is reported too.
func BenchmarkAPICacheHit(b *testing.B) {
	// The per-client log stays short with a 1 ms window, so the limit is
	// measured without refusing anything.
	h := newHarness(b, func(c *harnessConfig) {
		c.ClientRate = []cache.Window{{N: 1 << 30, Per: time.Millisecond}}
	})
	const target = "http://shop.example/js-title.html"
	resp, body := h.post(target)
	if resp.StatusCode != http.StatusAccepted {
		b.Fatalf("first submission: %d %s", resp.StatusCode, body)
	}
	h.waitReport(decode[pending](b, body).ID)
	handler := h.srv.Handler()
	payload := `{"url":"` + target + `"}`
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/api/v1/audits", strings.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("cache hit answered %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
