package audit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"lekta.dev/lekta/internal/testsite"
	"lekta.dev/lekta/records"
	"lekta.dev/lekta/verify"
)

// wantRecordsMatchHits checks the records against the site's own request
// log, request for request: the same count, and for each hit one record
// with its method, path, query hash and status, whose local port is the
// hit's remote port and whose time is within 50 ms of the hit's.
func wantRecordsMatchHits(tb testing.TB, recs []records.Request, hits []testsite.Hit) {
	tb.Helper()
	if len(recs) != len(hits) {
		tb.Errorf("%d records, the site logged %d requests", len(recs), len(hits))
	}
	used := make([]bool, len(recs))
	for _, h := range hits {
		path, query, _ := strings.Cut(h.Path, "?")
		found := false
		for i, r := range recs {
			d := r.At.Sub(h.Start)
			if used[i] || r.Method != h.Method || r.Path != path || r.QueryHash != verify.QueryHash(query) ||
				r.Status != h.Status || r.Local.Port() != h.Remote.Port() || r.Host != h.Host || d < -50*time.Millisecond || d > 50*time.Millisecond {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			tb.Errorf("no record matches the site's %s %s %s (status %d, from %v at %s)", h.Method, h.Host, h.Path, h.Status, h.Remote, h.Start.Format(time.StampMilli))
		}
	}
	for i, r := range recs {
		if !used[i] {
			tb.Errorf("record %+v matches no request the site logged", r)
		}
	}
}

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
	wantRecordsMatchHits(t, recs, hits)
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
