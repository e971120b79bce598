package testsite

import (
	"strings"
	"testing"
	"time"

	"lekta.dev/lekta/records"
	"lekta.dev/lekta/verify"
)

// WantRecordsMatchHits checks request records against the site's own
// request log, request for request: the same count, and for each hit one
// record of its host with its method, path, query hash and status, whose
// local port is the hit's remote port and whose time is within 50 ms of
// the hit's.
func WantRecordsMatchHits(tb testing.TB, recs []records.Request, hits []Hit) {
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
				r.Status != h.Status || r.Local.Port() != h.Remote.Port() || r.Host != h.Host ||
				d < -50*time.Millisecond || d > 50*time.Millisecond {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			tb.Errorf("no record matches the site's %s %s %s (status %d, from %v at %s)",
				h.Method, h.Host, h.Path, h.Status, h.Remote, h.Start.Format(time.StampMilli))
		}
	}
	for i, r := range recs {
		if !used[i] {
			tb.Errorf("record %+v matches no request the site logged", r)
		}
	}
}
