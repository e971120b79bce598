package audit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/verify"
)

// TestAuditRecordsRequests audits a page that redirects to one with a
// stylesheet, a script fetching JSON, an image and an analytics script:
// every request that reached the site, robots.txt and both lanes, has its
// record, the blocked image and tracker have neither a request nor a
// record, and the query's value is stored nowhere.
func TestAuditRecordsRequests(t *testing.T) {
	db := openRecords(t, records.Config{DataDir: t.TempDir()})
	e := mustEnv(t, func(c *Config) { c.Requests = db })
	start := time.Now()
	r := e.audit(t, "http://shop.example/rec/go?utm=secret", TriggerCLI)
	if r.Status != StatusComplete {
		t.Fatalf("status %s: %s", r.Status, r.Reason)
	}
	hits := e.site.Hits()
	recs, err := db.QueryRequests(context.Background(), "shop.example", start.Add(-time.Second), time.Now().Add(time.Second), 0)
	if err != nil {
		t.Fatal(err)
	}
	testsite.WantRecordsMatchHits(t, recs, hits)
	lanes := map[string]int{}
	for _, rec := range recs {
		lanes[rec.Lane]++
		if rec.AuditID != r.ID {
			t.Errorf("record of %s has audit id %q, want %q", rec.Path, rec.AuditID, r.ID)
		}
		if !rec.Remote.IsValid() || rec.Remote != e.site.AddrPort() {
			t.Errorf("record of %s reached %v, the site listens on %v", rec.Path, rec.Remote, e.site.AddrPort())
		}
	}
	if lanes[verify.LaneRobots] != 1 || lanes[verify.LanePlain] != 2 || lanes[verify.LaneRender] < 5 {
		t.Errorf("records per lane = %v; want robots 1, plain 2 (the redirect and the page), render at least 5", lanes)
	}
	for _, h := range hits {
		if h.Path == "/rec/pic.png" || h.Host != "shop.example" {
			t.Errorf("a blocked request reached the site: %s %s", h.Host, h.Path)
		}
	}
	for _, q := range []string{"SELECT count(*) FROM request_records WHERE path LIKE '%secret%' OR query_hash LIKE '%secret%'"} {
		var n int
		if err := db.SQL().QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d records hold the query's value (%v)", n, err)
		}
	}
}

// failingWriter refuses every batch, as a records database that is down.
type failingWriter struct {
	mu    sync.Mutex
	calls int
}

func (f *failingWriter) PutRequests(context.Context, []records.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return errors.New("database down")
}

// TestAuditRecordsFailure: records that cannot be written do not stop the
// audit; they were tried once, in one batch.
func TestAuditRecordsFailure(t *testing.T) {
	w := &failingWriter{}
	e := mustEnv(t, func(c *Config) { c.Requests = w })
	r := e.audit(t, "http://shop.example/rec/go", TriggerCLI)
	if r.Status != StatusComplete {
		t.Fatalf("status %s: %s", r.Status, r.Reason)
	}
	if w.calls != 1 {
		t.Errorf("PutRequests was called %d times, want once (one batch at the end)", w.calls)
	}
}
