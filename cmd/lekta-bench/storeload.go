package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/records"
)

// latencies keeps every duration of each store operation.
type latencies struct {
	mu  sync.Mutex
	ops map[string][]time.Duration
}

func (l *latencies) add(op string, since time.Time) {
	d := time.Since(since)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ops == nil {
		l.ops = map[string][]time.Duration{}
	}
	l.ops[op] = append(l.ops[op], d)
}

// lines are "op  n  p50  p99" rows, by operation name.
func (l *latencies) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for op, ds := range l.ops {
		slices.Sort(ds)
		out = append(out, fmt.Sprintf("    %-28s %7d  p50 %8s  p99 %8s", op, len(ds),
			ds[len(ds)/2].Round(10*time.Microsecond), ds[len(ds)*99/100].Round(10*time.Microsecond)))
	}
	sort.Strings(out)
	return out
}

// simClock is the time the store traffic carries (request records' times):
// a million audits a day's pace, one audit every 86.4 ms, whatever the
// real rate, so that a short run crosses partition boundaries as a day of
// traffic would.
type simClock struct {
	start time.Time
	n     atomic.Int64
}

const simStep = 86400 * time.Second / 1_000_000

func (c *simClock) next() time.Time { return c.start.Add(time.Duration(c.n.Add(1)) * simStep) }

// loadRunner is the scheduler's Runner for the bench: each queued audit
// does an audit's store traffic — admission, progress, ~20 request
// records, the report stored and released, a history row for a share —
// without a browser or a site.
type loadRunner struct {
	store   cache.Store
	db      *records.DB
	lat     *latencies
	clock   *simClock
	report  []byte
	records int
	sites   []string
	history float64
	done    chan string
}

func (r *loadRunner) Run(ctx context.Context, req audit.Request) (*audit.Report, error) {
	t := time.Now()
	a, err := r.store.Admit(ctx, req.URL, req.ID)
	r.lat.add("admit", t)
	if err != nil || a.Decision != cache.Admitted {
		return nil, fmt.Errorf("admit %s: %v %v", req.URL, a.Decision, err)
	}
	t = time.Now()
	if err := r.store.SetProgress(ctx, cache.Progress{ID: req.ID, URL: req.URL, Status: cache.ProgressRunning, Step: "render"}); err != nil {
		return nil, err
	}
	r.lat.add("progress", t)
	if err := r.putRecords(ctx, req); err != nil {
		return nil, err
	}
	t = time.Now()
	if err := r.store.Complete(ctx, a.Lease, cache.Outcome{Report: r.report}); err != nil {
		return nil, err
	}
	r.lat.add("complete (report stored)", t)
	t = time.Now()
	if err := r.store.DropProgress(ctx, req.ID); err != nil {
		return nil, err
	}
	r.lat.add("progress", t)
	if rand.Float64() < r.history {
		if err := r.addHistory(ctx, req.ID); err != nil {
			return nil, err
		}
	}
	r.done <- req.ID
	return &audit.Report{ID: req.ID, URL: req.URL, Status: audit.StatusComplete}, nil
}

func (r *loadRunner) Lost(ctx context.Context, req audit.Request) (*audit.Report, error) {
	return nil, fmt.Errorf("no audit is lost in the bench: %s", req.ID)
}

// putRecords stores the audit's request records, at the simulated time.
func (r *loadRunner) putRecords(ctx context.Context, req audit.Request) error {
	at := r.clock.next()
	host := strings.TrimSuffix(strings.TrimPrefix(req.URL, "https://"), "/")
	rs := make([]records.Request, r.records)
	for i := range rs {
		rs[i] = records.Request{At: at.Add(time.Duration(i) * 40 * time.Millisecond), Lane: "render", Method: "GET", Scheme: "https",
			Host: host, Port: 443, Path: fmt.Sprintf("/assets/chunk-%d.js", i), QueryHash: "",
			Remote: netip.MustParseAddrPort("203.0.113.9:443"), Local: netip.MustParseAddrPort("198.51.100.4:51000"),
			Status: 200, Bytes: 18_000, AuditID: req.ID}
	}
	rs[0].Lane, rs[0].Path = "robots", "/robots.txt"
	t := time.Now()
	err := r.db.PutRequests(ctx, rs)
	r.lat.add("request records (20)", t)
	return err
}

// addHistory records the audit as a saved site's re-audit.
func (r *loadRunner) addHistory(ctx context.Context, reportID string) error {
	site := r.sites[rand.IntN(len(r.sites))]
	now := time.Now()
	e := records.Entry{ID: records.HistoryID(site, now.Add(time.Duration(rand.Int64N(1e9)))), SiteID: site, DueAt: now, RanAt: now,
		Trigger: "scheduled", ReportID: reportID, Status: "complete", Summary: []byte(`{"status":"complete"}`), Changes: []byte(`{}`)}
	t := time.Now()
	_, err := r.db.AddEntry(ctx, e)
	r.lat.add("history row", t)
	return err
}

// fakeReport is a report body of realistic size: JSON as an audit writes
// it, with the repetition real findings have, about n bytes.
func fakeReport(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"id":"bench","status":"complete","findings":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"code":"render.content","severity":"warning","title":"Text only browsers see %d","detail":"%x"}`,
			i, rand.Uint64())
	}
	b.WriteString("]}")
	return []byte(b.String())
}
