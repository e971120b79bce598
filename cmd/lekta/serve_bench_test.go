package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
)

// BenchmarkServeTimeToReport measures, through the real server with a warm
// Chromium, the time from POST /api/v1/audits to the finished report for
// a static test page, one audit at a time. It reports the median and the
// 99th percentile; run enough iterations for the p99 to mean something:
//
//	go test -run '^$' -bench ServeTimeToReport -benchtime 50x ./cmd/lekta
func BenchmarkServeTimeToReport(b *testing.B) {
	site := testsite.Start(b)
	s := startServe(b, site, []string{"shop.example"}, "--rate", "1000000/1m")
	audit := func(i int) time.Duration {
		start := time.Now()
		resp, body := s.postAPI(fmt.Sprintf("http://shop.example/index.html?run=%d", i))
		id := servePendingID(b, resp, body)
		if r := s.waitReport(id); r.Status != "complete" {
			b.Fatalf("audit %s: %s %s", id, r.Status, r.Reason)
		}
		return time.Since(start)
	}
	audit(-1) // warm the browser and its first context
	var took []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		took = append(took, audit(i))
	}
	b.StopTimer()
	slices.Sort(took)
	q := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
